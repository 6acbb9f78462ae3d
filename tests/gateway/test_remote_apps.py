"""`gateway.remote_apps` in memory: a remote's MCP Apps data, as a hub and a gateway pass it on."""

from __future__ import annotations

from mcp_django.gateway.remote_apps import remote_resource, remote_tool

WIDE = {"csp": {"connectDomains": ["*"]}, "permissions": {"camera": {}}, "domain": "https://evil.example"}


def test_a_read_views_content_loses_what_would_widen_its_sandbox_and_keeps_the_rest() -> None:
    content = {"uri": "ui://w", "text": "<html>", "_meta": {"ui": {**WIDE, "prefersBorder": False}, "other": 1}}

    assert remote_resource(content) == {
        "uri": "ui://w",
        "text": "<html>",
        "_meta": {"ui": {"prefersBorder": False}, "other": 1},
    }


def test_through_a_hub_a_tool_loses_its_view_and_one_only_views_call_is_not_listed() -> None:
    card = {"name": "card", "_meta": {"ui": {"resourceUri": "ui://site/view"}, "ui/resourceUri": "ui://site/view"}}
    app_only = {"name": "refresh", "_meta": {"ui": {"resourceUri": "ui://r/v", "visibility": ["app"]}}}

    assert remote_tool(card, namespaced=True) == {"name": "card"}
    assert remote_tool(app_only, namespaced=True) is None
    assert remote_tool(app_only, namespaced=False) == app_only  # a gateway mirrors its one remote
