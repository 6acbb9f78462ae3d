"""`Endpoint(...)` is the only way to make an endpoint, and `urls.endpoint(route, **options)` takes its options.

A gateway is an endpoint with `backend=` (one remote server, no local source: its mode is None and reads
"gateway"); a hub is one with `servers=` beside its local sources. Remote servers are the gateway's
contribution through the extension seam: without it, `servers=` is check E144.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error

from mcp_django import Registry
from mcp_django.endpoints import Endpoint, check_servers_served, get_endpoint
from mcp_django.endpoints.overlay import NullOverlay
from mcp_django.gateway.extension import IDENTIFIER, remote_sources
from mcp_django.urls import endpoint

OVERLAY = NullOverlay()

urlpatterns = [
    *endpoint("plain/mcp", name="plain", registry=Registry("plain-endpoint"), overlay=OVERLAY),
    *endpoint("gw/mcp", name="gw", backend={"URL": "http://127.0.0.1:9/mcp"}, scope="TEAM"),
    *endpoint(
        "bare-hub/mcp",
        name="bare-hub",
        registry=Registry("bare-hub"),
        servers=[{"SERVER": {"URL": "http://127.0.0.1:9/mcp"}, "NAMESPACE": "gh"}],
        exclude_extensions=[IDENTIFIER],
    ),
]
"""A URLconf (this module): one endpoint of each kind, and a hub on which the gateway is not offered."""

pytestmark = pytest.mark.urls("tests.test_endpoint_options")


def test_endpoint_takes_every_option_of_endpoint_overlay_included() -> None:
    assert get_endpoint("plain").overlay is OVERLAY


def test_an_unknown_option_is_a_type_error() -> None:
    options: dict[str, Any] = {"name": "typo", "allow_anonymus": True}

    with pytest.raises(TypeError, match=r"^Endpoint 'typo': unknown option 'allow_anonymus'$"):
        endpoint("typo/mcp", **options)


def test_a_gateway_is_an_endpoint_with_a_backend_and_no_mode() -> None:
    gateway = get_endpoint("gw")

    assert type(gateway) is Endpoint
    assert (gateway.local_mode, gateway.mode, gateway.registry, gateway.providers) == (None, "gateway", None, ())
    assert gateway.servers == (
        {"SERVER": {"URL": "http://127.0.0.1:9/mcp"}, "NAMESPACE": "", "SCOPE": "TEAM", "TOOL_SCOPES": {}},
    )
    [source] = remote_sources(gateway)
    assert (source.namespace, source.scope.name, source.tolerates_down) == ("", "TEAM", False)
    assert gateway.sources()[0] is source


def test_a_hub_serves_its_local_sources_then_its_remote_servers() -> None:
    local = Registry("hub-local")
    hub = Endpoint("h/mcp", name="h", registry=local, servers=["github", {"SERVER": "docs", "NAMESPACE": "d"}])

    sources = hub.sources()
    assert hub.mode == "server"
    assert [source.namespace for source in sources] == ["", "github", "d"]
    assert all(source.tolerates_down for source in remote_sources(hub))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "gateway", "backend": "github"}, "a gateway serves its backend only: no mode, registry or providers"),
        ({"mode": "gateway", "servers": ["github"]}, "mode must be one of server, adapter, combined or None"),
        ({"backend": "github", "registry": "x.y"}, "a gateway serves its backend only: no mode, registry or providers"),
        ({"backend": "github", "servers": ["docs"]}, "give a gateway's backend= or a hub's servers=, not both"),
        ({"scope": "TEAM"}, "scope= and tool_scopes= go with backend="),
        ({"mode": None}, "without a mode it serves remote servers only: give servers="),
    ],
)
def test_options_that_do_not_go_together_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Endpoint("x/mcp", name="x", **options)


def test_remote_servers_without_the_gateway_are_e144() -> None:
    assert check_servers_served() == [
        Error(
            "Endpoint 'bare-hub' names remote servers, but no extension serves them.",
            hint="Add 'mcp_django.gateway' to INSTALLED_APPS (docs/gateway.md), or drop servers= and backend=.",
            id="mcp_django.E144",
        )
    ]
    assert [source.namespace for source in get_endpoint("bare-hub").sources()] == [""]  # its registry alone
