"""The catalogues extension's setting and checks: a bad `CATALOGUES` value, an endpoint no URL mounts."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.catalogues import CatalogueExtension
from mcp_django.checks.settings import check_settings
from mcp_django.extensions import check_extensions
from mcp_django.testing import MCPTestClient

EXTENSION = "mcp_django.catalogues.CatalogueExtension"
pytestmark = pytest.mark.urls("tests.catalogues.urls")


@pytest.mark.parametrize("value", [["search"], {"search": "fuzzy"}, {"s": {"PINNED": ["x"]}}])
def test_a_catalogues_value_that_names_no_mode_is_e004(value: object) -> None:
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "EXTENSIONS": [EXTENSION], "CATALOGUES": value}):
        assert check_settings() == [
            Error(
                "MCP_DJANGO['CATALOGUES'] must be a dict of endpoint names to modes.",
                hint=f"It is {value!r}: fix it, or remove it to use the default.",
                id="mcp_django.E004",
            )
        ]


def test_catalogues_naming_an_endpoint_no_url_mounts_is_w300() -> None:
    with override_settings(
        MCP_DJANGO={
            **settings.MCP_DJANGO,
            "EXTENSIONS": [EXTENSION],
            "CATALOGUES": {"configured": "grouped", "shop": "search"},
        }
    ):
        assert [message for message in check_extensions() if "catalogues" in str(message.id)] == [
            Warning(
                "MCP_DJANGO['CATALOGUES'] names 'shop', which no URL mounts.",
                hint="Name an endpoint by its name= (manage.py mcp_inspect lists them), or remove the entry.",
                id="mcp_django_catalogues.W300",
            )
        ]


@pytest.mark.django_db(transaction=True)
async def test_an_endpoint_is_flat_unless_catalogues_names_it_and_then_in_its_mode() -> None:
    flat = [tool["name"] for tool in await MCPTestClient("configured", scope="SYSTEM").list_tools()]
    with override_settings(
        MCP_DJANGO={**settings.MCP_DJANGO, "EXTENSIONS": [EXTENSION], "CATALOGUES": {"configured": {"MODE": "search"}}}
    ):
        searched = [tool["name"] for tool in await MCPTestClient("configured", scope="SYSTEM").list_tools()]

    assert "list_books" in flat
    assert "search_tools" not in flat
    assert searched == ["search_tools"]


def test_an_unknown_mode_or_one_string_of_pinned_tools_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="Unknown discovery mode 'fuzzy': one of flat, search, grouped"):
        CatalogueExtension("fuzzy")
    with pytest.raises(ValueError, match="pinned= takes a list of tool names"):
        CatalogueExtension("search", pinned="echo")
