"""Discovery's system checks: what the site publishes, and that its cards cannot contradict server/discover."""

from __future__ import annotations

from django.core.checks import Error
from django.test import override_settings

from mcp_django.discovery.checks import check_discovery


def test_a_published_endpoint_no_urlconf_mounts_is_e001() -> None:
    with override_settings(MCP_DJANGO={"SERVER_CARD_ENDPOINTS": ["server", "shop"]}):
        messages = [message for message in check_discovery() if message.id == "mcp_django_discovery.E001"]

    assert len(messages) == 1
    assert messages[0].msg == "MCP_DJANGO['SERVER_CARD_ENDPOINTS'] names 'shop', which no endpoint is."
    assert str(messages[0].hint).startswith("Name mounted endpoints: adapter, ")


def test_a_card_field_the_endpoint_owns_is_e002_so_cards_agree_with_server_discover() -> None:
    with override_settings(MCP_DJANGO={"SERVER_CARD": {"version": "9.9", "title": "Books"}}):
        messages = check_discovery()

    assert messages == [
        Error(
            "MCP_DJANGO['SERVER_CARD'] sets 'version', which server/discover owns.",
            hint="Remove it: the cards take it from the endpoint, so they agree (docs/discovery.md).",
            id="mcp_django_discovery.E002",
        )
    ]


def test_a_description_over_100_characters_is_e003() -> None:
    with override_settings(MCP_DJANGO={"SERVER_CARD": {"description": "x" * 101}}):
        messages = check_discovery()

    assert [(message.id, message.msg) for message in messages] == [
        ("mcp_django_discovery.E003", "MCP_DJANGO['SERVER_CARD']['description'] must be 1 to 100 characters.")
    ]


def test_the_default_settings_pass() -> None:
    assert check_discovery() == []
