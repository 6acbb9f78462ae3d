"""Views of providers' and toolsets' tools: served on the endpoint that serves the tools, and only there."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from mcp_django.endpoints import Endpoint
from mcp_django.registry import Registry
from mcp_django.scopes import Scope
from mcp_django.testing import MCPTestClient, assert_mcp_error
from mcp_django.ui import APP_MIME_TYPE, apps_of
from mcp_django.ui.extension import AppsExtension
from tests.ui.sourced import SERVER_URI, SHELF_URI, STOCK_URI, ShelfToolset, adapter_endpoint, server_endpoint
from tests.ui.support import HOST, TEMPLATES

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.parametrize("era", ["handshake", "stateless"])]


def client(endpoint: Any, era: str) -> MCPTestClient:
    return MCPTestClient(endpoint, era=era, capabilities=HOST)  # type: ignore[arg-type]


async def test_a_providers_and_a_toolsets_tools_carry_their_views_on_the_adapter_endpoint(era: str) -> None:
    tools = {tool["name"]: tool for tool in await client(adapter_endpoint(), era).list_tools()}

    assert tools["stock"]["_meta"] == {"ui": {"resourceUri": STOCK_URI}, "ui/resourceUri": STOCK_URI}
    assert tools["restock"]["_meta"]["ui"] == {"resourceUri": STOCK_URI, "visibility": ["app"]}
    assert tools["shelf"]["_meta"]["ui"] == {"resourceUri": SHELF_URI, "visibility": ["model"]}
    assert "_meta" not in tools["count"]


@override_settings(TEMPLATES=TEMPLATES)
async def test_the_adapter_endpoint_lists_and_reads_the_views_of_its_providers(era: str) -> None:
    mcp = client(adapter_endpoint(), era)

    listed = [resource["uri"] for resource in await mcp.list_resources()]
    (content,) = (await mcp.read_resource(STOCK_URI))["contents"]

    assert listed == [STOCK_URI, SHELF_URI]
    assert content["mimeType"] == APP_MIME_TYPE
    assert "in stock" in content["text"]


async def test_neither_endpoint_serves_the_views_of_the_others_tools(era: str) -> None:
    server, adapter = client(server_endpoint(), era), client(adapter_endpoint(), era)

    assert [resource["uri"] for resource in await server.list_resources()] == [SERVER_URI]
    with assert_mcp_error(match="not found"):
        await server.read_resource(STOCK_URI)
    with assert_mcp_error(match="not found"):
        await adapter.read_resource(SERVER_URI)
    assert set(apps_of(server_endpoint())) == {"server_card"}
    assert set(apps_of(adapter_endpoint())) == {"stock", "restock", "shelf"}


def test_a_providers_view_is_reached_with_the_providers_scope_and_names_its_provider(era: str) -> None:
    tool = apps_of(adapter_endpoint())["stock"]

    assert (tool.owner, tool.scope) == ("apps-test.stock", Scope.USER)


def test_a_toolsets_apps_naming_no_tool_of_it_or_no_app_is_a_problem(era: str) -> None:
    class Typo(ShelfToolset):
        apps = {"shelve": "apps_test/whoami.html", "shelf": {"template": "apps_test/whoami.html", "color": "red"}}

    assert Typo().problems == [
        (
            "mcp_django.E203",
            "Typo: apps names 'shelve', which is none of its tools.",
            "Name one of its tools in apps: shelf.",
        ),
        (
            "mcp_django.E202",
            "Typo: apps['shelf'] is not an app.",
            "Fix it: Typo.apps['shelf']: app App.__init__() got an unexpected keyword argument 'color'.",
        ),
    ]


def test_a_toolset_registered_on_a_registry_serves_its_views_on_the_registrys_endpoint(era: str) -> None:
    registry = Registry("apps-registered-toolset")
    ShelfToolset.register(registry)
    endpoint = Endpoint("shelf/mcp", name="shelf", registry=registry, extensions=[AppsExtension()])

    tool = apps_of(endpoint)["shelf"]

    assert (tool.app.uri, tool.owner) == (SHELF_URI, "registry")
