"""One way to plug in: an identifier names one extension, and what runs an interceptor list's remote servers
(`{"SERVER": ...}`) is an installed extension's `interceptor_servers()` (docs/extensions.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from mcp_django.endpoints import Endpoint
from mcp_django.extensions import Extension, ServerEntries, chain_options, installed_extensions, load_extensions
from mcp_django.gateway.extension import GatewayExtension
from mcp_django.gateway.remote_chain import RemoteChainHook
from mcp_django.interceptors.hook import InterceptorHook
from mcp_django.testing import MCPTestClient
from tests.interceptors import support
from tests.interceptors.tools import registry

RECEIPTS = "example.com/receipts"
STEP = {"CLASS": support.Step, "NAME": "step"}
GUARD = {"SERVER": {"URL": "http://127.0.0.1:9/mcp"}}


class ServerReceipts(Extension):
    identifier = RECEIPTS

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return {"side": "server"} if endpoint.mode == "server" else None


class AdapterReceipts(ServerReceipts):
    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return {"side": "adapter"} if endpoint.mode == "adapter" else None


def test_a_second_extension_of_an_installed_identifier_is_check_e120_and_the_first_is_kept() -> None:
    extensions, problems = load_extensions([ServerReceipts, AdapterReceipts])

    assert [type(extension) for extension in extensions] == [ServerReceipts]
    assert problems == [
        (
            "mcp_django.E120",
            "Two extensions have the identifier 'example.com/receipts'.",
            "Remove one of them from MCP_DJANGO['EXTENSIONS'] (the first one is served).",
        )
    ]


@pytest.mark.django_db
async def test_an_extension_is_served_where_its_capability_applies_and_nowhere_else() -> None:
    served = Endpoint("plug-a/mcp", name="plug-a", allow_anonymous=True, extensions=[AdapterReceipts])
    adapter = Endpoint("plug-b/mcp", name="plug-b", mode="adapter", allow_anonymous=True, extensions=[AdapterReceipts])

    server_side = await MCPTestClient(served, era="stateless").request("server/discover")
    adapter_side = await MCPTestClient(adapter, era="stateless").request("server/discover")

    assert RECEIPTS not in server_side["capabilities"].get("extensions", {})
    assert adapter_side["capabilities"]["extensions"][RECEIPTS] == {"side": "adapter"}


def test_the_core_app_installs_no_gateway_extension() -> None:
    from django.apps import apps

    assert getattr(apps.get_app_config("mcp_django"), "mcp_extensions", ()) == ()


def test_a_list_of_local_interceptors_is_run_by_its_own_plan() -> None:
    options = chain_options([STEP], label="plugs")

    assert isinstance(options["hook"], InterceptorHook)
    assert options["hook"].plan is options["plan"]
    assert [entry.name for entry in options["plan"].entries] == ["step"]


def test_a_list_naming_servers_is_run_by_the_installed_extension_that_runs_them() -> None:
    assert any(isinstance(extension, GatewayExtension) for extension in installed_extensions())

    options = chain_options([STEP, GUARD], label="plugs")

    assert isinstance(options["hook"], RemoteChainHook)
    assert [entry.name for entry in options["plan"].entries] == ["step"]  # what SEP-2624's methods serve


def test_a_list_naming_servers_with_no_extension_to_run_them_is_refused() -> None:
    without_gateway = [app for app in settings.INSTALLED_APPS if app != "mcp_django.gateway"]  # whose extension
    with override_settings(INSTALLED_APPS=without_gateway, MCP_DJANGO={**settings.MCP_DJANGO}):  # re-read
        with pytest.raises(ImproperlyConfigured, match="names servers, and nothing runs them"):
            chain_options([STEP, GUARD], label="Endpoint 'plugs' interceptors")
        assert chain_options([STEP], label="plugs")["plan"]  # a local list needs no extension


class Recording(Extension):
    """Runs `{"SERVER": ...}` entries by recording what it was given (any extension may)."""

    identifier = "example.com/recording"
    advertised = False

    def __init__(self) -> None:
        self.given: list[tuple[Sequence[Any], Sequence[Any], str]] = []

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return None

    def interceptor_servers(self) -> ServerEntries:
        def build(local: Sequence[Any], config: Sequence[Any], label: str) -> str:
            self.given.append((local, config, label))
            return "the recording hook"

        return build


def test_the_first_installed_extension_that_runs_servers_gets_the_local_entries_the_list_and_its_label() -> None:
    recording = Recording()
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "EXTENSIONS": [recording]}):
        endpoint = Endpoint("plug-c/mcp", name="plug-c", registry=registry, interceptors=[STEP, GUARD])
        assert endpoint.chain_options()["hook"] == "the recording hook"
    assert recording.given == [([STEP], [STEP, GUARD], "Endpoint 'plug-c' interceptors")]
