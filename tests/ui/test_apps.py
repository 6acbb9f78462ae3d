"""MCP Apps in process: the tools' `_meta.ui`, the `ui://` resources, negotiation in both eras, rendering."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

import mcp_django
from mcp_django.declarations import DeclarationError
from mcp_django.testing import MCPTestClient, assert_mcp_error
from mcp_django.ui import APP_MIME_TYPE, EXTENSION
from tests.ui.support import HOST, TEMPLATES, WHOAMI, apps_endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.parametrize("era", ["handshake", "stateless"])]

URI = "ui://apps/apps_test/whoami.html"
TEAM_URI = "ui://apps/team"


def client(era: str, *, capabilities: dict[str, Any] | None = HOST, **options: Any) -> MCPTestClient:
    return MCPTestClient(apps_endpoint(), era=era, capabilities=capabilities, **options)  # type: ignore[arg-type]


async def tools_by_name(mcp: MCPTestClient) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in await mcp.list_tools()}


async def test_a_host_that_declared_the_extension_sees_the_view_of_each_tool(era: str) -> None:
    tools = await tools_by_name(client(era))

    assert tools["whoami"]["_meta"] == {"ui": {"resourceUri": URI}, "ui/resourceUri": URI}
    assert "_meta" not in tools["plain"]


async def test_the_server_advertises_the_extension_with_the_app_mime_type(era: str) -> None:
    mcp = client(era)
    if era == "handshake":
        capabilities = (await mcp.initialize())["capabilities"]["experimental"]
    else:
        capabilities = (await mcp.request("server/discover"))["capabilities"]["extensions"]

    assert capabilities[EXTENSION] == {"mimeTypes": [APP_MIME_TYPE]}


@pytest.mark.parametrize(
    "capabilities",
    [{}, {"extensions": {EXTENSION: {}}}, {"extensions": {EXTENSION: {"mimeTypes": ["text/uri-list"]}}}],
    ids=["nothing", "no-mime-types", "another-mime-type"],
)
async def test_a_client_that_did_not_declare_the_app_mime_type_gets_the_tools_and_results_unchanged(
    era: str, capabilities: dict[str, Any]
) -> None:
    mcp = client(era, capabilities=capabilities)

    tools = await tools_by_name(mcp)
    result = await mcp.call_tool("whoami", {"text": "hi"})

    assert "_meta" not in tools["whoami"]
    assert result["structuredContent"] == {"text": "hi"}
    assert await mcp.list_resources() == []
    with assert_mcp_error(match="not found"):
        await mcp.read_resource(URI)


async def test_a_handshake_client_may_declare_the_extension_under_experimental(era: str) -> None:
    mcp = client(era, capabilities={"experimental": HOST["extensions"]})

    assert (await tools_by_name(mcp))["whoami"]["_meta"]["ui"] == {"resourceUri": URI}


async def test_the_view_is_listed_with_its_meta_ui_once_for_two_tools_naming_it(era: str) -> None:
    resources = await client(era).list_resources()

    assert resources == [
        {
            "uri": URI,
            "name": "Who am I",
            "mimeType": APP_MIME_TYPE,
            "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}},
        }
    ]


async def test_reading_the_view_renders_the_template_with_its_mime_type_and_csp(era: str) -> None:
    with override_settings(TEMPLATES=TEMPLATES):
        (content,) = (await client(era).read_resource(URI))["contents"]

    assert content["mimeType"] == APP_MIME_TYPE
    assert content["_meta"] == {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}}
    assert content["text"].startswith("<!DOCTYPE html>")
    assert '<p id="who">anonymous</p>' in content["text"]
    assert '<p id="endpoint">apps</p>' in content["text"]
    assert "window.mcpApp = app;" in content["text"]  # the bridge, inlined


async def test_the_view_renders_with_the_callers_user_and_scope(era: str) -> None:
    user = await User.objects.acreate(username="carol")

    with override_settings(TEMPLATES=TEMPLATES):
        (content,) = (await client(era, user=user, scope="TEAM").read_resource(URI))["contents"]

    assert '<p id="who">carol</p>' in content["text"]
    assert '<p id="scope">TEAM</p>' in content["text"]


async def test_the_view_renders_in_the_language_the_read_names(era: str) -> None:
    mcp = client(era)

    with override_settings(TEMPLATES=TEMPLATES):
        (french,) = (await mcp.request("resources/read", {"uri": URI, "_meta": {"mcp_django/language": "fr"}}))[
            "contents"
        ]
        (unknown,) = (await mcp.request("resources/read", {"uri": URI, "_meta": {"mcp_django/language": "xx"}}))[
            "contents"
        ]

    assert '<html lang="fr">' in french["text"]
    assert '<p id="yes">Oui</p>' in french["text"]
    assert '<p id="yes">Yes</p>' in unknown["text"]


async def test_a_caller_below_the_tools_scope_neither_lists_nor_reads_its_view(era: str) -> None:
    below = client(era, scope="USER")

    listed = [resource["uri"] for resource in await below.list_resources()]
    with assert_mcp_error(match="not found"):
        await below.read_resource(TEAM_URI)

    assert listed == [URI]
    assert [resource["uri"] for resource in await client(era, scope="TEAM").list_resources()] == [URI, TEAM_URI]


def test_an_app_refuses_a_csp_origin_that_would_allow_everything(era: str) -> None:
    for origin in (
        "*",
        "https://*",
        "https://cdn.example.com/path",
        "javascript:alert(1)",
        "https://cdn.example.com\n",
    ):
        with pytest.raises(DeclarationError, match="takes origins like"):
            mcp_django.App("x.html", resource_domains=[origin])


def test_an_app_refuses_unknown_permissions_and_visibilities(era: str) -> None:
    with pytest.raises(DeclarationError, match="unknown permission 'usb'"):
        mcp_django.App("x.html", permissions=["usb"])
    with pytest.raises(DeclarationError, match="visibility"):
        mcp_django.App("x.html", visibility=["agent"])


def test_the_tool_meta_names_visibility_and_the_resource_meta_everything_declared(era: str) -> None:
    app = mcp_django.App(
        "x.html",
        uri="ui://shop/card",
        resource_domains=["https://*.example.com"],
        frame_domains=["https://www.youtube.com"],
        base_uri_domains=["https://cdn.example.com"],
        permissions=["camera", "clipboardWrite"],
        domain="abc.example-host.com",
        prefers_border=False,
        visibility=["app"],
    )

    assert app.tool_meta() == {
        "ui": {"resourceUri": "ui://shop/card", "visibility": ["app"]},
        "ui/resourceUri": "ui://shop/card",
    }
    assert app.resource_meta() == {
        "ui": {
            "csp": {
                "resourceDomains": ["https://*.example.com"],
                "frameDomains": ["https://www.youtube.com"],
                "baseUriDomains": ["https://cdn.example.com"],
            },
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "domain": "abc.example-host.com",
            "prefersBorder": False,
        }
    }
    assert WHOAMI.name == "Who am I"


async def test_a_username_carrying_markup_is_rendered_escaped(era: str) -> None:
    user = await User.objects.acreate(username="<script>alert(1)</script>")

    with override_settings(TEMPLATES=TEMPLATES):
        (content,) = (await client(era, user=user).read_resource(URI))["contents"]

    assert "<script>alert(1)</script>" not in content["text"]
    assert '<p id="who">&lt;script&gt;alert(1)&lt;/script&gt;</p>' in content["text"]


def test_an_inlined_file_cannot_close_the_element_it_is_inlined_into(era: str) -> None:
    from mcp_django.ui.templatetags.mcp_apps import _inlined

    inlined = _inlined("script", 'let s = "</SCRIPT><img src=x onerror=alert(1)>";')

    assert inlined == '<script>let s = "<\\/SCRIPT><img src=x onerror=alert(1)>";</script>'
