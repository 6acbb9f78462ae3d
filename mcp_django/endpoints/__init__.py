"""Endpoints: a URL path bound to what it serves and who may use it.

An `Endpoint` serves its local sources — in one of three modes, the static registry (`"server"`), the
providers (`"adapter"`), or both (`"combined"`, static declarations first) — then the sources its served
extensions bring, among them the remote MCP servers it names (`servers=`, a hub; `backend=`, a gateway,
whose mode is None: no local source), and builds once the protocol core's `MessageHandler` for it.
Transports (HTTP, WebSocket, stdio) take an endpoint and serve it. The handler is rebuilt when
`MCP_DJANGO` changes, so tests that override settings see the change.

`Endpoint` is built along its concerns: `admission.Access` (who may call it, with which scope),
`composition.Composition` (what it serves: `sources()`, `build_backend()`, and `prepare()` and
`describe()` of the sources that have them), and here the handler it builds (`build_handler()`, its
hooks and interceptor chain). The core names no remote server: the gateway contributes the sources
of `servers=` through the extension seam (`Extension.server_sources`, `mcp_django.gateway.extension`).

The endpoint registry (`endpoint_registry()`) is every endpoint the root URLconf mounts,
read from the URLconf itself: it refuses two endpoints on one path or under one name
(`ImproperlyConfigured`, reported at start-up by the check `mcp_django.E013`), resolves a
request path to its endpoint by longest prefix on segment boundaries, and feeds the
manifest view.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Required, TypedDict, Unpack

from django.core.checks import CheckMessage, Error, Tags, register
from django.core.signals import setting_changed

from mcp_django.conf import mcp_settings
from mcp_django.declarations.lean import DEFINITIONS, Definitions
from mcp_django.endpoints.admission import ADMITTED_SCOPE, admitted_scope
from mcp_django.endpoints.composition import MODES, REMOTE_ONLY, Composition, Mode
from mcp_django.endpoints.mounts import EndpointRegistry, canonical_path, mounted_in
from mcp_django.endpoints.overlay import Overlay, on_change
from mcp_django.endpoints.sessions import SessionStore, get_session_store, principal_id
from mcp_django.extensions import Extension, ServedExtensions, chain_options
from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.protocol.inputs import RequestStateCodec
from mcp_django.providers import Provider
from mcp_django.runtime import notifications
from mcp_django.runtime.output_caps import OVERFLOWS
from mcp_django.runtime.relay import channel_layer_relay
from mcp_django.safety.idempotency import IdempotencyHook
from mcp_django.scopes import Scope

if TYPE_CHECKING:
    from mcp_django.registry import Registry

__all__ = [
    "MODES",
    "REMOTE_ONLY",
    "Endpoint",
    "EndpointOptions",
    "EndpointRegistry",
    "Mode",
    "admitted_scope",
    "canonical_path",
    "endpoint_registry",
    "get_endpoint",
    "mounted_endpoints",
]


class EndpointOptions(TypedDict, total=False):
    """`Endpoint`'s keyword arguments, declared once: `urls.endpoint(route, **options)` takes the same."""

    name: Required[str]
    mode: Mode | None
    registry: Registry | str | None
    providers: Sequence[str | Provider | type[Provider]] | None
    servers: Sequence[Any] | None
    backend: Any
    scope: Scope | str
    tool_scopes: Mapping[str, Scope | str] | None
    server_info: Mapping[str, Any] | None
    instructions: str | None
    allow_anonymous: bool
    authentication_classes: Sequence[type | str] | None
    sessions: bool | None
    interceptors: Sequence[str | Mapping[str, Any]] | None
    fast_path: bool
    overlay: Overlay | None
    tool_timeout: float | None
    tool_output_max_chars: int | None
    tool_output_overflow: str | None
    definitions: Definitions
    extensions: Sequence[Extension | type[Extension] | str] | None
    exclude_extensions: Sequence[str]


OPTIONS: Final = EndpointOptions.__required_keys__ | EndpointOptions.__optional_keys__

_endpoints: weakref.WeakSet[Endpoint] = weakref.WeakSet()


class Endpoint(Composition):
    """One MCP endpoint: a path, what it serves, and its access and session rules.

    Args:
        path: the URL path it is mounted at, without leading slash (`"mcp"`).
        name: a short, unique name; sessions remember it, so a session opened here is
            unknown on every other endpoint.
        mode: `"server"` serves `registry`, `"adapter"` the providers, `"combined"` both
            (a static declaration wins over a provider's item of the same name); None serves no local
            source, only `servers` (the default with `backend`).
        registry: the `Registry` to serve, or a dotted path to one (resolved on first use);
            server and combined modes only, default `mcp_django.default_registry`.
        providers: the providers to serve, in order of precedence: ids of providers the apps
            list, or providers (classes or instances) of the endpoint's own; None serves every
            provider the apps list. Adapter and combined modes only.
        servers: remote MCP servers served after the local sources (a hub; docs/federation.md), in
            order of precedence: each a `SERVERS` name (its namespace is the name) or `{"SERVER": name,
            "NAMESPACE": "gh", "SCOPE": "TEAM", "TOOL_SCOPES": {"pattern": scope}, "TOOLS": ["pattern"]}`
            ("" as `NAMESPACE`: names unchanged). Needs the gateway (check `mcp_django.E144`).
        backend: a gateway's one remote server (docs/gateway.md): a `SERVERS` name, a dict shaped like
            an entry, or a client `ServerConfig`; served without a namespace and with no local source, it
            mirrors the server's info and instructions. The same as `servers=[{"SERVER": backend,
            "NAMESPACE": "", "SCOPE": scope, "TOOL_SCOPES": tool_scopes}]` with `mode=None`.
        scope: with `backend`, the least scope a caller needs to see anything of it (default USER).
        tool_scopes: with `backend`, `{"pattern": scope}`: remote tools whose name matches a pattern
            (`fnmatch`, the first match wins) need at least that scope.
        server_info: the `Implementation` callers see; None: a gateway's remote's, else `SERVER_INFO`'s.
        instructions: the instructions callers see; None: a gateway's remote's, else `INSTRUCTIONS`'.
        allow_anonymous: whether callers without credentials may use it; they get the
            USER scope. Otherwise they are answered 401.
        authentication_classes: DRF authentication classes (or dotted paths) for this
            endpoint; None follows `MCP_DJANGO["DEFAULT_AUTHENTICATION_CLASSES"]`.
        sessions: open handshake-era sessions on `initialize`; None follows `MCP_DJANGO["SESSIONS"]`.
        interceptors: this endpoint's interceptor list; None follows `MCP_DJANGO["INTERCEPTORS"]`.
        fast_path: let `mcp_django.asgi` serve it outside Django's request cycle; False leaves it
            to the Django view (and so to the project's middleware) on every server.
        overlay: what amends the served sources, interceptors and hooks (`mcp_django.endpoints.overlay`);
            None asks the installed one (the admin's), at each handler build.
        tool_timeout: seconds a tool call may run here (a tool's own `timeout` wins); None
            follows `MCP_DJANGO["TOOL_TIMEOUT"]` (`mcp_django.runtime.time_limits`).
        tool_output_max_chars: the most characters a tool's result may have here, local or remote (a
            tool's own `max_output_chars` wins); None follows `MCP_DJANGO["TOOL_OUTPUT_MAX_CHARS"]`.
        tool_output_overflow: `"truncate"` or `"refuse"` a result over it; None follows
            `MCP_DJANGO["TOOL_OUTPUT_OVERFLOW"]` (`mcp_django.runtime.output_caps`).
        definitions: `"lean"` (the default) serves tool definitions without what only repeats the schema
            (a title or description that repeats a property's name, `"default": null`, docstring sections);
            `"verbose"` serves them as pydantic and the docstring built them (`mcp_django.declarations.lean`).
        extensions: protocol extensions offered here besides the installed ones (instances, classes,
            dotted paths; None: none); one with an installed one's identifier replaces it here. Each
            decides whether it is served here (`Extension.capability`).
        exclude_extensions: identifiers of installed extensions this endpoint does not offer.

    Raises:
        TypeError: an unknown option.
        ValueError: options that do not go together (a mode's registry or providers, a gateway's).
    """

    def __init__(self, path: str, **options: Unpack[EndpointOptions]) -> None:
        name = options["name"]
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise TypeError(f"Endpoint {name!r}: unknown option {unknown[0]!r}")
        extensions, excluded = options.get("extensions"), options.get("exclude_extensions", ())
        if isinstance(excluded, str) or isinstance(extensions, str):
            raise ValueError(f"Endpoint {name!r}: extensions= and exclude_extensions= take lists, not one string")
        self.path = path.strip("/")
        self.name = name
        self.compose(options)
        classes = options.get("authentication_classes")
        self._authentication_classes = None if classes is None else list(classes)
        self._authenticators: list[Any] | None = None
        self.allow_anonymous = options.get("allow_anonymous", False)
        self._sessions = options.get("sessions")
        self.interceptors = options.get("interceptors")
        self.fast_path = options.get("fast_path", True)
        self._overlay = options.get("overlay")
        self.tool_timeout = options.get("tool_timeout")
        self.tool_output_max_chars = options.get("tool_output_max_chars")
        self.tool_output_overflow = options.get("tool_output_overflow")
        cap, overflow = self.tool_output_max_chars, self.tool_output_overflow
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0):
            raise ValueError(f"Endpoint {name!r}: tool_output_max_chars must be a positive integer or None")
        if overflow is not None and overflow not in OVERFLOWS:
            raise ValueError(f"Endpoint {name!r}: tool_output_overflow must be 'truncate', 'refuse' or None")
        self.definitions: Definitions = options.get("definitions", "lean")
        if self.definitions not in DEFINITIONS:
            raise ValueError(f"Endpoint {name!r}: definitions must be 'lean' or 'verbose'")
        self.added_extensions = tuple(extensions or ())
        self.excluded_extensions = tuple(excluded)
        self._served: ServedExtensions | None = None
        self._handler: MessageHandler | None = None
        self._chain: dict[str, Any] | None = None
        _endpoints.add(self)

    def __repr__(self) -> str:
        return f"<Endpoint {self.name!r} ({self.mode}) at /{self.path}>"

    # -- the handler it builds ---------------------------------------------------------------------

    @property
    def sessions(self) -> bool:
        """Whether `initialize` opens a session here."""
        return bool(mcp_settings.SESSIONS) if self._sessions is None else self._sessions

    @property
    def session_store(self) -> SessionStore | None:
        """The store sessions are kept in, or None when this endpoint opens none."""
        return get_session_store() if self.sessions else None

    @property
    def handler(self) -> MessageHandler:
        """The protocol core serving this endpoint, built on first use."""
        if self._handler is None:
            self._handler = self.build_handler()
        return self._handler

    def connection(
        self,
        principal: Any,
        *,
        transport: str,
        sessions: bool = True,
        version_header: str | None = None,
        streaming: bool = True,
        admitted_scope: Scope | None = None,
        site: str | None = None,
    ) -> Connection:
        """The protocol core's `Connection` for a caller of this endpoint, as every transport builds it.

        Args:
            principal: the authenticated caller (a Django user), or None.
            transport: `"http"`, `"websocket"`, `"stdio"`.
            sessions: whether `initialize` may open a handshake session on it.
            version_header: the `MCP-Protocol-Version` header, for transports that have one.
            streaming: whether what a request emits reaches the client before its response.
            admitted_scope: the scope admission worked out, for a connection that carries one
                request (HTTP); long-lived connections leave it out, so each request works it out again.
            site: the site's root as the client reached it (`https://host/`; None on stdio: `SITE_URL`).
        """
        connection = Connection(
            principal=principal,
            endpoint=self,
            version_header=version_header,
            transport=transport,
            sessions=sessions,
            principal_id=principal_id(principal),
            streaming=streaming,
            notifications=notifications.source(self) if streaming else None,
            site=site,
        )
        if admitted_scope is not None:
            connection.extra[ADMITTED_SCOPE] = admitted_scope
        return connection

    def build_handler(self) -> MessageHandler:
        """Build the `MessageHandler` for this endpoint from its backend and `MCP_DJANGO`."""
        state_keys = mcp_settings.signing_keys("request-state")
        server_info, instructions = self.describe()
        return MessageHandler(
            self.build_backend(),
            server_info=server_info,
            instructions=instructions,
            page_size=mcp_settings.PAGE_SIZE,
            cache_ttl_ms=round(mcp_settings.CACHE_TTL * 1000),
            cache_scope=mcp_settings.CACHE_SCOPE,
            state_codec=RequestStateCodec(
                *state_keys[:1], fallback_keys=state_keys[1:], ttl_seconds=mcp_settings.REQUEST_STATE_TTL
            ),
            client_request_timeout=mcp_settings.CLIENT_REQUEST_TIMEOUT,
            notifications=notifications.available(),
            relay=channel_layer_relay(),
            hooks=self.hooks(),
            **self.served_extensions.handler_options({}),
        )

    def hooks(self) -> list[OperationHook]:
        """This endpoint's operation hooks, outermost first: the overlay's (the admin's tool switch), the
        served extensions', the interceptor chain, then idempotency keys (`safety.idempotency`: a replay
        passes the chain and the audit trail like any call).

        Both look up the current state on each operation, so even a WebSocket holding an older
        handler runs the tools and interceptors as the admin set them (docs/admin.md).
        """
        return [*self.overlay.hooks(self), *self.served_extensions.hooks, ChainHook(self), IdempotencyHook()]

    def chain_options(self) -> dict[str, Any]:
        """The interceptor chain (`hook` runs it, `plan` holds its local entries), with the overlay's overrides
        applied; built once per reset (`extensions.chain_options`)."""
        if self._chain is None:
            label = None if self.interceptors is None else f"Endpoint {self.name!r} interceptors"
            config = mcp_settings.INTERCEPTORS if self.interceptors is None else self.interceptors
            self._chain = chain_options(self.overlay.interceptors(config), label=label)
        return self._chain

    def reset(self) -> None:
        """Drop the built handler, interceptor chain and authenticators, and have the sources that prepare
        forget what they learned (their settings may have changed); the next request builds fresh ones."""
        self.forget_sources()
        self._handler = None
        self._chain = None
        self._served = None
        self._authenticators = None


class ChainHook:
    """Runs the endpoint's current interceptor chain (rebuilt when the admin changes it), or nothing."""

    __slots__ = ("endpoint",)

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        hook: OperationHook | None = self.endpoint.chain_options().get("hook")
        return await (call_next(params) if hook is None else hook(method, params, ctx, call_next))


def _reset_endpoints() -> None:
    for endpoint in list(_endpoints):
        endpoint.reset()


mcp_settings.on_reload(_reset_endpoints)
on_change("state", _reset_endpoints)


_registries: dict[str, EndpointRegistry[Endpoint]] = {}


def endpoint_registry(urlconf: str | None = None) -> EndpointRegistry[Endpoint]:
    """The endpoints the URLconf (default: the root URLconf) mounts; read once per URLconf.

    Raises:
        ImproperlyConfigured: two endpoints share a path or a name.
    """
    from django.conf import settings
    from django.urls import get_resolver, get_urlconf

    key = urlconf or get_urlconf() or settings.ROOT_URLCONF
    registry = _registries.get(key)
    if registry is None:
        registry = _registries[key] = EndpointRegistry(mounted_in(get_resolver(key).url_patterns, Endpoint))
    return registry


def _forget_registries(*, setting: str, **kwargs: Any) -> None:
    if setting == "ROOT_URLCONF":
        _registries.clear()


setting_changed.connect(_forget_registries)


def get_endpoint(name: str) -> Endpoint:
    """Return the endpoint the root URLconf mounts under `name` (its name, or its path).

    Transports that are not URL routes (WebSocket, stdio) find the endpoint they serve here.

    Raises:
        LookupError: no mounted endpoint has that name or path.
    """
    return endpoint_registry().get(name)


def mounted_endpoints() -> list[Endpoint]:
    """The endpoints the root URLconf mounts, sorted by path (loading the URLconf mounts them)."""
    return endpoint_registry().endpoints


@register(Tags.urls)
def check_servers_served(app_configs: Iterable[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E144: an endpoint names remote servers (`servers=`, `backend=`) and no extension it offers serves them."""
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return []
    return [
        Error(
            f"Endpoint {endpoint.name!r} names remote servers, but no extension serves them.",
            hint="Add 'mcp_django.gateway' to INSTALLED_APPS (docs/gateway.md), or drop servers= and backend=.",
            id="mcp_django.E144",
        )
        for endpoint in endpoints
        if endpoint.servers and not endpoint.remote_sources
    ]
