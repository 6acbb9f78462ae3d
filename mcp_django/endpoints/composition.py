"""What an endpoint serves: the composition concern of `mcp_django.endpoints.Endpoint`.

`Composition` holds an endpoint's sources, in order of precedence: its local ones in one of three
modes — the static registry (`"server"`), the providers (`"adapter"`), both (`"combined"`) — or none
(mode None); then the sources its served extensions bring, among them the remote MCP servers it names
(`servers=`: a hub; `backend=`: a gateway, one remote with no local source). The core names no remote
server: the gateway contributes their sources through the extension seam (`Extension.server_sources`,
`mcp_django.gateway.extension`; without it, `servers=` is check `mcp_django.E144`). Any source may get
ready before it serves and say what it is (`Source.prepare`, `Source.description`): the endpoint
prepares those when it admits a caller, and a gateway mirrors its one remote's server info and
instructions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from django.utils.module_loading import import_string

from mcp_django.conf import mcp_settings
from mcp_django.declarations.tools import ToolRunner
from mcp_django.endpoints.admission import Access
from mcp_django.endpoints.overlay import Overlay, installed
from mcp_django.extensions import ServedExtensions, offered_extensions
from mcp_django.protocol.backend import Backend
from mcp_django.providers import Provider, ProviderSource, provider_registry
from mcp_django.scopes import Scope, ScopeResolver
from mcp_django.sources import Source
from mcp_django.sources.composite import CompositeBackend

if TYPE_CHECKING:
    from mcp_django.registry import Registry

Mode = Literal["server", "adapter", "combined"]
MODES: Final[tuple[Mode, ...]] = ("server", "adapter", "combined")
"""`server`: the static registry; `adapter`: the providers; `combined`: both, static declarations first."""
REMOTE_ONLY: Final = "gateway"
"""How `Endpoint.mode` reads on an endpoint whose mode is None: it serves remote servers only."""


class Composition(Access):
    """What an endpoint serves, and the `Backend` it composes of it (see the module's docstring).

    Set up by `compose()`; `Endpoint` documents the options.
    """

    name: str
    _overlay: Overlay | None
    _served: ServedExtensions | None
    _handler: Any
    added_extensions: tuple[Any, ...]
    excluded_extensions: tuple[str, ...]

    def compose(self, options: Mapping[str, Any]) -> None:
        """Take the composition options: `mode`, `registry`, `providers`, `servers`, `backend` (with `scope`
        and `tool_scopes`), `server_info`, `instructions`.

        Raises:
            ValueError: options that do not go together.
        """
        mode, servers = _composition(self.name, options)
        self.local_mode: Mode | None = mode
        """What it serves of its own (None: nothing, only remote servers)."""
        self.mode: str = mode or REMOTE_ONLY
        """How the manifest and the admin name what it serves: its mode, or `"gateway"`."""
        self.servers: tuple[Any, ...] = servers
        """The remote servers it serves after its local sources (a gateway's `backend=` as one entry)."""
        registry = options.get("registry")
        local = registry if registry is not None else "mcp_django.default_registry"
        self._registry: Registry | str | None = local if mode in ("server", "combined") else None
        providers = options.get("providers")
        self.provider_ids = None if providers is None else tuple(providers)
        self._providers: tuple[Provider, ...] | None = None
        self._remote: tuple[Source, ...] | None = None
        self.server_info: Mapping[str, Any] | None = options.get("server_info")
        self.instructions: str | None = options.get("instructions")

    @property
    def registry(self) -> Registry | None:
        """The static registry this endpoint serves (None in adapter mode, or without a mode)."""
        if isinstance(self._registry, str):
            self._registry = import_string(self._registry)
        return self._registry  # type: ignore[return-value]  # resolved just above

    @property
    def overlay(self) -> Overlay:
        """What amends this endpoint's sources, interceptors and hooks: its own, else the installed one."""
        return self._overlay if self._overlay is not None else installed()

    @property
    def providers(self) -> tuple[Provider, ...]:
        """The providers this endpoint serves, in order of precedence (none in server mode, or without a mode).

        Raises:
            LookupError: `providers=` names an id no app registers.
        """
        if self.local_mode not in ("adapter", "combined"):
            return ()
        if self.provider_ids is None:
            return provider_registry.providers
        if self._providers is None:
            self._providers = tuple(
                provider_registry.get(entry)
                if isinstance(entry, str)
                else (entry() if isinstance(entry, type) else entry)
                for entry in self.provider_ids
            )
        return self._providers

    @property
    def remote_sources(self) -> tuple[Source, ...]:
        """The sources of the remote servers it names (`servers`), built once by the first extension it offers
        that serves them (`Extension.server_sources`: the gateway's) and kept; none without such an extension
        (check E144)."""
        if self._remote is None:
            offered = offered_extensions(self.added_extensions, self.excluded_extensions)[0] if self.servers else ()
            built = (extension.server_sources(self) for extension in offered)
            self._remote = tuple(next((found for found in built if found is not None), ()))
        return self._remote

    def sources(self) -> list[Source]:
        """The sources served, in order of precedence (before the overlay): the registry (server and combined
        modes), then a `ProviderSource` per provider (adapter and combined modes), then the served extensions'
        sources, then the remote servers (`remote_sources`)."""
        registry = self.registry
        sources: list[Source] = [registry.source()] if registry is not None else []
        sources += [ProviderSource(provider) for provider in self.providers]
        return [*sources, *self.served_extensions.sources, *self.remote_sources]

    def build_backend(self, scopes: ScopeResolver | None = None, *, remote: bool = True) -> Backend:
        """Compose this endpoint's `Backend`: one `CompositeBackend` over its `sources()`, whatever it serves.

        The sources go through the overlay (the admin switches providers off, overrides scopes).

        Args:
            scopes: how the backend works out a caller's scope; default `resolve_scope` (the
                admin's dashboard passes a fixed scope to count what each scope sees).
            remote: serve the remote servers' sources too (False: what this site defines; `migrate`'s sync).
        """
        sources = self.sources() if remote else [s for s in self.sources() if s not in self.remote_sources]
        return CompositeBackend(self.overlay.wrap_sources(self, sources), scopes or self.resolve_scope)

    @property
    def served_extensions(self) -> ServedExtensions:
        """The extensions served here, with what they bring (worked out once per reset)."""
        if self._served is None:
            self._served = ServedExtensions(self, self.added_extensions, self.excluded_extensions)
        return self._served

    @property
    def tool_runner(self) -> ToolRunner | None:
        """What runs this endpoint's tools declared with `task=` (`Tool.call` asks), or None."""
        return self.served_extensions.tool_runner

    def prepared_sources(self) -> list[Source]:
        """The sources that get ready before they serve (a `prepare()` of their own: remote servers)."""
        sources = (*self.served_extensions.sources, *self.remote_sources)
        return [source for source in sources if type(source).prepare is not Source.prepare]

    async def prepare(self) -> None:
        """Get the sources that need it ready (in parallel) when a caller is admitted: remote servers connect
        and say what they are. One that is down is no admission failure: its operations answer "backend
        unavailable" (a hub leaves it out of lists) until it is back. When what they say changes, the next
        request builds a fresh handler, and asks the extensions again what applies here."""
        preparing = self.prepared_sources()
        if not preparing:
            return
        before = [source.description() for source in preparing]
        await asyncio.gather(*(source.prepare() for source in preparing))
        if [source.description() for source in preparing] != before:
            self._handler = None
            self._served = None

    def describe(self) -> tuple[Mapping[str, Any], str | None]:
        """The server info and instructions callers see: `server_info` and `instructions`, else a gateway's
        remote's (an endpoint with one remote server and no local source mirrors it), else the settings'."""
        if self.local_mode is not None or len(self.servers) != 1:
            return self.server_info or mcp_settings.SERVER_INFO, self.instructions or mcp_settings.INSTRUCTIONS
        described = (source.description() for source in self.prepared_sources())
        mirrored = next((description for description in described if description is not None), None)
        server_info = self.server_info or (mirrored.server_info if mirrored else None) or mcp_settings.SERVER_INFO
        return server_info, self.instructions or (mirrored.instructions if mirrored else None)

    def forget_sources(self) -> None:
        """Have the sources forget what they learned and resolved (their settings may have changed)."""
        for source in (*(self._served.sources if self._served is not None else ()), *(self._remote or ())):
            source.forget()
        if not self._remote:
            self._remote = None  # none found yet: ask the extensions again (they may have changed)


def _composition(name: str, options: Mapping[str, Any]) -> tuple[Mode | None, tuple[Any, ...]]:
    """The endpoint's mode and remote servers, from `mode`, `registry`, `providers`, `servers` and `backend`.

    Raises:
        ValueError: options that do not go together.
    """
    backend, servers = options.get("backend"), options.get("servers")
    registry, providers = options.get("registry"), options.get("providers")
    if backend is None and ("scope" in options or "tool_scopes" in options):
        raise ValueError(f"Endpoint {name!r}: scope= and tool_scopes= go with backend= (a hub's entries say SCOPE)")
    if backend is not None:
        if servers is not None:
            raise ValueError(f"Endpoint {name!r}: give a gateway's backend= or a hub's servers=, not both")
        if options.get("mode") is not None or registry is not None or providers is not None:
            raise ValueError(f"Endpoint {name!r}: a gateway serves its backend only: no mode, registry or providers")
        scope, tool_scopes = options.get("scope", Scope.USER), dict(options.get("tool_scopes") or {})
        return None, ({"SERVER": backend, "NAMESPACE": "", "SCOPE": scope, "TOOL_SCOPES": tool_scopes},)
    mode = options.get("mode", "server")
    if mode is not None and mode not in MODES:
        raise ValueError(f"Endpoint {name!r}: mode must be one of {', '.join(MODES)} or None, not {mode!r}")
    if mode is None and not servers:
        raise ValueError(f"Endpoint {name!r}: without a mode it serves remote servers only: give servers=")
    if mode in ("adapter", None) and registry is not None:
        raise ValueError(f"Endpoint {name!r}: an adapter endpoint serves providers, not a registry")
    if mode in ("server", None) and providers is not None:
        raise ValueError(f"Endpoint {name!r}: a server endpoint serves a registry, not providers")
    return mode, tuple(servers or ())
