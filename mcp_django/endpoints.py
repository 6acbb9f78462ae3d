"""Endpoints: a URL path bound to what it serves and who may use it.

An `Endpoint` serves, in one of three modes, the static registry (`"server"`), the
providers (`"adapter"`), or both (`"combined"`, static declarations first), and builds
once the protocol core's `MessageHandler` for it. Transports (HTTP, WebSocket, stdio) take
an endpoint and serve it. The handler is rebuilt when `MCP_DJANGO` changes, so tests that
override settings see the change.

The endpoint registry (`endpoint_registry()`) is every endpoint the root URLconf mounts,
read from the URLconf itself: it refuses two endpoints on one path or under one name
(`ImproperlyConfigured`, reported at start-up by the check `mcp_django.E013`), resolves a
request path to its endpoint by longest prefix on segment boundaries, and feeds the
manifest view.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from django.core.signals import setting_changed
from django.utils.module_loading import import_string
from rest_framework.exceptions import APIException

from mcp_django import notifications
from mcp_django.admission import (
    ADMITTED_SCOPE,
    Admission,
    Credentials,
    Refused,
    admitted_scope,
    authenticate_credentials,
    bearer_challenge,
    check_cookie_origin,
    check_host,
    check_origin,
)
from mcp_django.auth import AuthenticationFailed, authenticator_instances
from mcp_django.auth_cache import auth_cache
from mcp_django.conf import mcp_settings
from mcp_django.declarations.tools import ToolRunner
from mcp_django.extensions import Extension, ServedExtensions, chain_options
from mcp_django.mounts import EndpointRegistry, canonical_path, mounted_in
from mcp_django.overlay import Overlay, installed, on_change
from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.backend import Backend
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.protocol.inputs import RequestStateCodec
from mcp_django.providers import Provider, ProviderSource, provider_registry
from mcp_django.relay import channel_layer_relay
from mcp_django.scopes import (
    ANONYMOUS_SCOPE,
    Scope,
    ScopeResolver,
    is_authenticated,
    limit_scope,
    remember_scope,
    remembered_scope,
)
from mcp_django.sessions import SessionStore, get_session_store, principal_id
from mcp_django.sources import CompositeBackend, Source

if TYPE_CHECKING:
    from mcp_django.registry import Registry

__all__ = [
    "MODES",
    "Endpoint",
    "EndpointRegistry",
    "admitted_scope",
    "canonical_path",
    "endpoint_registry",
    "get_endpoint",
    "mounted_endpoints",
]

Mode = Literal["server", "adapter", "combined", "gateway"]
MODES: Final[tuple[Mode, ...]] = ("server", "adapter", "combined")
"""`server`: the static registry; `adapter`: the providers; `combined`: both, static declarations first."""
SOURCELESS: Final[Mode] = "gateway"  # serves no local source: a subclass brings its own (`sources()`)

_endpoints: weakref.WeakSet[Endpoint] = weakref.WeakSet()


class Endpoint:
    """One MCP endpoint: a path, what it serves, and its access and session rules.

    Args:
        path: the URL path it is mounted at, without leading slash (`"mcp"`).
        name: a short, unique name; sessions remember it, so a session opened here is
            unknown on every other endpoint.
        mode: `"server"` serves `registry`, `"adapter"` the providers, `"combined"` both
            (a static declaration wins over a provider's item of the same name).
        registry: the `Registry` to serve, or a dotted path to one (resolved on first use);
            server and combined modes only, default `mcp_django.default_registry`.
        providers: the providers to serve, in order of precedence: ids of providers the apps
            list, or providers (classes or instances) of the endpoint's own; None serves every
            provider the apps list. Adapter and combined modes only.
        allow_anonymous: whether callers without credentials may use it; they get the
            USER scope. Otherwise they are answered 401.
        authentication_classes: DRF authentication classes (or dotted paths) for this
            endpoint; None follows `MCP_DJANGO["DEFAULT_AUTHENTICATION_CLASSES"]`.
        sessions: open handshake-era sessions on `initialize`; None follows `MCP_DJANGO["SESSIONS"]`.
        interceptors: this endpoint's interceptor list; None follows `MCP_DJANGO["INTERCEPTORS"]`.
        fast_path: let `mcp_django.asgi` serve it outside Django's request cycle; False leaves it
            to the Django view (and so to the project's middleware) on every server.
        overlay: what amends the served sources, interceptors and hooks (`mcp_django.overlay`);
            None asks the installed one (the admin's), at each handler build.
        tool_timeout: seconds a tool call may run here (a tool's own `timeout` wins); None
            follows `MCP_DJANGO["TOOL_TIMEOUT"]` (`mcp_django.time_limits`).
        extensions: protocol extensions offered here besides the installed ones (instances, classes,
            dotted paths; None: none); one with an installed one's identifier replaces it here. Each
            decides whether it is served here (`Extension.capability`).
        exclude_extensions: identifiers of installed extensions this endpoint does not offer.
    """

    def __init__(
        self,
        path: str,
        *,
        name: str,
        mode: Mode = "server",
        registry: Registry | str | None = None,
        providers: Sequence[str | Provider | type[Provider]] | None = None,
        allow_anonymous: bool = False,
        authentication_classes: Sequence[type | str] | None = None,
        sessions: bool | None = None,
        interceptors: Sequence[str | Mapping[str, Any]] | None = None,
        fast_path: bool = True,
        overlay: Overlay | None = None,
        tool_timeout: float | None = None,
        extensions: Sequence[Extension | type[Extension] | str] | None = None,
        exclude_extensions: Sequence[str] = (),
    ) -> None:
        if mode not in MODES and mode != SOURCELESS:
            raise ValueError(f"Endpoint {name!r}: mode must be one of {', '.join(MODES)}, not {mode!r}")
        if mode == "adapter" and registry is not None:
            raise ValueError(f"Endpoint {name!r}: an adapter endpoint serves providers, not a registry")
        if mode == "server" and providers is not None:
            raise ValueError(f"Endpoint {name!r}: a server endpoint serves a registry, not providers")
        if isinstance(exclude_extensions, str) or isinstance(extensions, str):
            raise ValueError(f"Endpoint {name!r}: extensions= and exclude_extensions= take lists, not one string")
        self.path = path.strip("/")
        self.name = name
        self.mode: Mode = mode
        self.allow_anonymous = allow_anonymous
        local = registry if registry is not None else "mcp_django.default_registry"
        self._registry: Registry | str | None = None if mode in ("adapter", SOURCELESS) else local
        self.provider_ids = None if providers is None else tuple(providers)
        self._providers: tuple[Provider, ...] | None = None
        self._authentication_classes = None if authentication_classes is None else list(authentication_classes)
        self._authenticators: list[Any] | None = None
        self._sessions = sessions
        self.interceptors = interceptors
        self.fast_path = fast_path
        self._overlay = overlay
        self.tool_timeout = tool_timeout
        self.added_extensions = tuple(extensions or ())
        self.excluded_extensions = tuple(exclude_extensions)
        self._served: ServedExtensions | None = None
        self._handler: MessageHandler | None = None
        self._chain: dict[str, Any] | None = None
        _endpoints.add(self)

    def __repr__(self) -> str:
        return f"<Endpoint {self.name!r} ({self.mode}) at /{self.path}>"

    @property
    def registry(self) -> Registry | None:
        """The static registry this endpoint serves (None in adapter mode)."""
        if isinstance(self._registry, str):
            self._registry = import_string(self._registry)
        return self._registry  # type: ignore[return-value]  # resolved just above

    @property
    def overlay(self) -> Overlay:
        """What amends this endpoint's sources, interceptors and hooks: its own, else the installed one."""
        return self._overlay if self._overlay is not None else installed()

    @property
    def providers(self) -> tuple[Provider, ...]:
        """The providers this endpoint serves, in order of precedence (none in server mode).

        Raises:
            LookupError: `providers=` names an id no app registers.
        """
        if self.mode in ("server", SOURCELESS):
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
    def authenticators(self) -> list[Any]:
        """Instances of this endpoint's DRF authentication classes, in order."""
        if self._authenticators is None:
            classes = self._authentication_classes
            if classes is None:
                classes = list(mcp_settings.DEFAULT_AUTHENTICATION_CLASSES)
            self._authenticators = authenticator_instances(classes, endpoint=self)
        return self._authenticators

    async def admit(
        self,
        *,
        host: str | None,
        origin: str | None,
        credentials: Credentials,
        resource_metadata: str | None = None,
    ) -> Admission:
        """Let a caller in, or refuse it: the one admission step of every transport (`mcp_django.admission`).

        Checks, in order: the Host against `ALLOWED_HOSTS`, a browser Origin against
        `MCP_DJANGO["ALLOWED_ORIGINS"]`, then the credentials with the endpoint's authentication
        classes, and works out the caller's scope. A caller who is the user the transport took from
        a cookie (`Credentials.user`) must also pass Django's CSRF origin rule when a browser Origin
        came with it (`check_cookie_origin`). It also brings the overlay (the admin's state) up to
        date (throttled: no query in the steady state).

        Args:
            host: the `Host` header (None where there is none: stdio).
            origin: the `Origin` header, if any.
            credentials: what the caller presented.
            resource_metadata: the absolute URL of the endpoint's RFC 9728 metadata, named in the
                `WWW-Authenticate` header of a 401.

        Raises:
            Refused: 400 for a bad Host, 403 for a bad Origin or a failed CSRF check, 401 for
                refused or missing credentials.
        """
        check_host(host)
        check_origin(origin)
        await self.overlay.refresh()
        try:
            principal = await self.authenticate(credentials)
        except AuthenticationFailed as error:
            raise Refused(401, f"Unauthorized: {error.detail}", bearer_challenge(resource_metadata, True)) from None
        except APIException as error:  # PermissionDenied: session authentication's CSRF check
            raise Refused(403, f"Forbidden: {error.detail}") from None
        if origin is not None and principal is not None and principal is credentials.user:
            # The transport's own user (a session cookie): what DRF's SessionAuthentication checks over HTTP.
            check_cookie_origin(origin, host, credentials.secure)
        scope = await self.scope_of(principal)
        if scope is None:
            message = "Unauthorized: Authentication credentials were not provided."
            raise Refused(401, message, bearer_challenge(resource_metadata, False))
        return Admission(principal, scope)

    async def authenticate(self, credentials: Credentials) -> Any:
        """The authenticated user the credentials name, or None for an anonymous caller.

        Runs this endpoint's authentication classes (`mcp_django.admission.authenticate_credentials`).

        Raises:
            AuthenticationFailed: credentials were offered and refused.
            rest_framework.exceptions.APIException: another refusal (session authentication's CSRF check).
        """
        audience = (self.path, credentials.headers.get("host"))
        return await authenticate_credentials(self.authenticators, credentials, audience=audience)

    async def scope_of(self, principal: Any) -> Scope | None:
        """The scope a principal has here: its groups' for a user, USER for anonymous callers if allowed, else None."""
        if is_authenticated(principal):
            return limit_scope(await auth_cache.scope_of(principal), principal)
        return ANONYMOUS_SCOPE if self.allow_anonymous else None

    async def resolve_scope(self, ctx: RequestContext) -> Scope | None:
        """The caller's scope for this request, worked out once per request (the backends' `ScopeResolver`)."""
        known, scope = remembered_scope(ctx)
        if not known:
            admitted = admitted_scope(ctx.connection)
            scope = admitted if admitted is not None else await self.scope_of(ctx.principal)
            remember_scope(ctx, scope)
        return scope

    def sources(self) -> list[Source]:
        """The sources served, in order of precedence (before the overlay): the registry (server and combined
        modes), then a `ProviderSource` per provider (adapter and combined modes), then the served extensions'
        sources; subclasses add theirs (the gateway package's remote servers)."""
        registry = self.registry
        sources: list[Source] = [registry.source()] if registry is not None else []
        sources += [ProviderSource(provider) for provider in self.providers]
        return sources + list(self.served_extensions.sources)

    def build_backend(self, scopes: ScopeResolver | None = None) -> Backend:
        """Compose this endpoint's `Backend`: one `CompositeBackend` over its `sources()`, for every mode.

        The sources go through the overlay (the admin switches providers off, overrides scopes).

        Args:
            scopes: how the backend works out a caller's scope; default `resolve_scope` (the
                admin's dashboard passes a fixed scope to count what each scope sees).
        """
        return CompositeBackend(self.overlay.wrap_sources(self, self.sources()), scopes or self.resolve_scope)

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

    def describe(self) -> tuple[Mapping[str, Any], str | None]:
        """The server info and instructions this endpoint's callers see (a gateway mirrors its backend's)."""
        return mcp_settings.SERVER_INFO, mcp_settings.INSTRUCTIONS

    def hooks(self) -> list[OperationHook]:
        """This endpoint's operation hooks, outermost first: the overlay's (the admin's tool switch), the
        served extensions', then the interceptor chain.

        Both look up the current state on each operation, so even a WebSocket holding an older
        handler runs the tools and interceptors as the admin set them (docs/admin.md).
        """
        return [*self.overlay.hooks(self), *self.served_extensions.hooks, ChainHook(self)]

    def chain_options(self) -> dict[str, Any]:
        """The interceptor chain (`hook` runs it, `plan` holds its local entries), with the overlay's overrides
        applied; built once per reset (`extensions.chain_options`)."""
        if self._chain is None:
            label = None if self.interceptors is None else f"Endpoint {self.name!r} interceptors"
            config = mcp_settings.INTERCEPTORS if self.interceptors is None else self.interceptors
            self._chain = chain_options(self.overlay.interceptors(config), label=label)
        return self._chain

    def reset(self) -> None:
        """Drop the built handler, interceptor chain and authenticators; the next request builds fresh ones."""
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
