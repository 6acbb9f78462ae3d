"""Extensions of one identifier are alternatives: an endpoint serves the first that applies (docs/extensions.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from django.core.checks import Error
from django.test import override_settings

from mcp_django.checks.endpoints import check_endpoint_extensions
from mcp_django.endpoints import Endpoint, get_endpoint
from mcp_django.extensions import Extension, load_extensions
from mcp_django.gateway.endpoint import GatewayEndpoint
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.testing import MCPTestClient
from mcp_django.urls import endpoint

RECEIPTS = "example.com/receipts"
TASKS = "io.modelcontextprotocol/tasks"


class SideReceipts(Extension):
    """Receipts on the endpoints of one mode only; `receipts/side` says which alternative answered."""

    identifier = RECEIPTS
    mode = ""

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return {"side": self.mode} if endpoint.mode == self.mode else None

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return (MethodSpec("receipts/side", self.side, operation=False),)

    async def side(self, server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return {"side": self.mode}


class ServerReceipts(SideReceipts):
    mode = "server"


class AdapterReceipts(SideReceipts):
    mode = "adapter"


class EverywhereReceipts(Extension):
    """Receipts on every endpoint: it and any other receipts alternative both apply everywhere that one does."""

    identifier = RECEIPTS


def test_two_extensions_of_one_identifier_are_both_installed_in_order() -> None:
    extensions, problems = load_extensions([ServerReceipts, AdapterReceipts])

    assert [type(extension) for extension in extensions] == [ServerReceipts, AdapterReceipts]
    assert problems == []


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["server", "adapter"])
async def test_each_endpoint_serves_the_alternative_that_applies_to_it(mode: str) -> None:
    served = Endpoint(
        f"alt-{mode}/mcp",
        name=f"alt-{mode}",
        mode=mode,  # type: ignore[arg-type]  # one of the literal modes
        allow_anonymous=True,
        extensions=[ServerReceipts, AdapterReceipts],
    )
    client = MCPTestClient(served, era="stateless")

    discovered = await client.request("server/discover")
    assert discovered["capabilities"]["extensions"][RECEIPTS] == {"side": mode}
    assert (await client.request("receipts/side"))["side"] == mode
    chosen = [type(extension) for extension in served.served_extensions.extensions if extension.identifier == RECEIPTS]
    assert chosen == [ServerReceipts if mode == "server" else AdapterReceipts]


def test_an_endpoint_that_no_alternative_applies_to_serves_none() -> None:
    served = Endpoint("alt-combined/mcp", name="alt-combined", mode="combined", extensions=[ServerReceipts])

    assert RECEIPTS not in served.served_extensions.capabilities
    assert served.served_extensions.conflicts == []


def test_of_two_alternatives_that_both_apply_the_first_is_served_and_the_pair_is_a_conflict() -> None:
    served = Endpoint("alt-both/mcp", name="alt-both", mode="server", extensions=[ServerReceipts, EverywhereReceipts])
    extensions = served.served_extensions

    assert extensions.capabilities[RECEIPTS] == {"side": "server"}
    assert [type(extension) for extension in extensions.extensions if extension.identifier == RECEIPTS] == [
        ServerReceipts
    ]
    assert [(type(first), type(second)) for first, second in extensions.conflicts] == [
        (ServerReceipts, EverywhereReceipts)
    ]


def test_a_gateway_offers_the_remote_tasks_as_the_alternative_of_the_installed_local_ones() -> None:
    gateway = GatewayEndpoint("alt-gateway/mcp", name="alt-gateway", mode="gateway", backend={"URL": "http://x/mcp"})

    offered = gateway.served_extensions.offered
    assert [type(e).__name__ for e in offered if e.identifier == TASKS] == ["RemoteTasksExtension", "TasksExtension"]
    assert TASKS not in gateway.served_extensions.capabilities  # the remote has said nothing yet; no task tool here
    assert gateway.served_extensions.conflicts == []


urlpatterns = [
    *endpoint("fine/server/mcp", name="fine-server", mode="server", extensions=[ServerReceipts, AdapterReceipts]),
    *endpoint("fine/adapter/mcp", name="fine-adapter", mode="adapter", extensions=[ServerReceipts, AdapterReceipts]),
    *endpoint("both/mcp", name="both", mode="server", extensions=[ServerReceipts, EverywhereReceipts]),
]
"""A URLconf (this module): alternatives that apply on different endpoints, and two that both apply to one."""


def test_check_e120_reports_two_alternatives_that_both_apply_to_one_endpoint() -> None:
    with override_settings(ROOT_URLCONF="tests.test_extension_alternatives"):
        assert check_endpoint_extensions() == [
            Error(
                "Two extensions have the identifier 'example.com/receipts' here.",
                hint="ServerReceipts is served: make EverywhereReceipts.capability() None here, or remove one.",
                obj=get_endpoint("both"),
                id="mcp_django.E120",
            )
        ]
