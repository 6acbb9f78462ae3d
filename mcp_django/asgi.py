"""The ASGI fast path: the MCP endpoints of the URLconf, served without Django's request cycle.

    # asgi.py
    from mcp_django.asgi import get_asgi_application

    application = get_asgi_application()

`get_asgi_application()` returns an ASGI application that answers the MCP endpoints mounted in the
root URLconf (`include("mcp_django.urls")`, `endpoint()`) itself and hands every other request to
Django's ASGI handler (or to the application you pass: a Channels `ProtocolTypeRouter`, a static
files handler) unchanged. The routes still come from `urls.py`: a request path is resolved with
Django's URL resolver once, and the answer (this endpoint, or "not ours") kept per path.

On the fast path a request gets no Django `HttpRequest`, no thread of its own, no
`request_started`/`request_finished` signals and no middleware: the same `StreamableHTTP` rules
as the Django view (both eras, sessions, SSE, resumption, body limit) answer it, and
`Endpoint.admit` checks Host, Origin and credentials as it does for every transport. The security
headers a JSON API needs are set here. What this replaces, middleware by middleware, and when a
request still goes to the view (`endpoint(..., fast_path=False)`, session-cookie authentication):
docs/fast-path.md.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any, Final

from django.urls import set_script_prefix

from mcp_django.auth import credentials_read
from mcp_django.conf import HTTPSettings, django_http_settings, mcp_settings
from mcp_django.endpoints.admission import Credentials
from mcp_django.protocol.context import aclose
from mcp_django.registry import all_registries
from mcp_django.runtime.executor import dedicated_threads
from mcp_django.transports import routes
from mcp_django.transports.body import CLIENT_GONE, bounded_receive, read_asgi_body
from mcp_django.transports.http import HTTPResponse, StreamableHTTP, resource_metadata_url
from mcp_django.transports.public import Refusal, read_public_body

__all__ = ["FastPath", "credentials_read", "get_asgi_application"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[..., Awaitable[None]]
"""An ASGI application: `await app(scope, receive, send)`."""

SECURITY_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = tuple(
    (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in routes.SECURITY_HEADERS
)
NO_STORE: Final = (routes.NO_STORE[0].lower().encode("latin-1"), routes.NO_STORE[1].encode("latin-1"))


class FastPath:
    """The ASGI application `get_asgi_application()` returns.

    Args:
        application: what serves every request that is not for a fast-path endpoint (and every
            scope but `http` and `lifespan`).
    """

    def __init__(self, application: ASGIApp) -> None:
        self.application = application
        self._routes = routes.RouteTable()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            config = django_http_settings()
            script_name = config.force_script_name or scope.get("root_path") or ""
            route = self._routes.route(scope["path"].removeprefix(script_name), script_name)
            if route == routes.PUBLIC:
                # The OAuth server's views take bodies from anyone: none is handed to Django past the public limit.
                try:
                    receive = await read_public_body(receive, _headers(scope))
                except Refusal as refusal:
                    if refusal.status != CLIENT_GONE:
                        answer = HTTPResponse(refusal.status, {"Content-Type": "application/json"}, refusal.body)
                        await _send_response(answer, receive, send, None)
                    return
            elif isinstance(route, routes.Route):
                headers = _headers(scope)
                secure = routes.is_secure(headers, scope.get("scheme"), config)
                if not (config.ssl_redirect and not secure) and not route.served_by_view(headers):
                    if script_name:
                        set_script_prefix(script_name)  # as Django's handler does, for reverse() in tools
                    with dedicated_threads():
                        await self._serve(route.transport, scope, receive, send, headers, secure, config)
                    return
                # Django's handler reads the whole body before the view runs: end it at the view's limit.
                receive = bounded_receive(receive, headers, mcp_settings.MAX_REQUEST_BYTES)
        elif kind == "lifespan":
            await _lifespan(receive, send)
            return
        await self.application(scope, receive, send)

    def body_limit(self, path: str, root_path: str = "") -> int | None:
        """The largest body a request for `path` may have: `MAX_REQUEST_BYTES` on an MCP endpoint,
        `MAX_PUBLIC_REQUEST_BYTES` on a public view of the package (the OAuth server), else None.

        For a server guard that sees the request before the application does (`mcp_django.servers.daphne`).
        """
        script_name = django_http_settings().force_script_name or root_path
        route = self._routes.route(path.removeprefix(script_name), script_name)
        if route is None:
            return None
        return int(mcp_settings.MAX_PUBLIC_REQUEST_BYTES if route == routes.PUBLIC else mcp_settings.MAX_REQUEST_BYTES)

    async def _serve(
        self,
        transport: StreamableHTTP,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        secure: bool,
        config: HTTPSettings,
    ) -> None:
        method = scope["method"]
        server = scope.get("server") or (None, None)
        host = headers.get("host") or routes.server_host(server[0], server[1], secure)
        site = routes.site_of(headers, host, secure, config)
        watch = _DisconnectWatch(receive, armed=method != "POST")

        async def read_body(limit: int) -> bytes:
            try:
                return await read_asgi_body(receive, limit)
            finally:
                watch.arm()  # only now: until the body is read, `receive` is the reader's

        try:
            response = await transport.respond(
                method,
                headers,
                # Read only once admitted and within the limits (`transports.body`); nothing for other methods.
                read_body if method == "POST" else b"",
                credentials=Credentials(headers, address=(scope.get("client") or (None,))[0]),
                host=host,
                resource_metadata=resource_metadata_url(site, scope["path"]),
                streaming=True,
                site=site,
            )
        except asyncio.CancelledError:
            if watch.cancelled_request():
                return  # the client went away: nobody to answer
            raise
        finally:
            watch.stop()
        if response.status == CLIENT_GONE:
            return
        await _send_response(response, receive, send, config.hsts if secure else None)


DISCONNECT_WATCH_AFTER: Final = 0.05
"""Seconds a request runs before the fast path starts listening for its client going away."""


class _DisconnectWatch:
    """Cancels the request's task when its client disconnects while the answer is being worked out.

    Without it a sync tool's caller waits on, holding its job (a queued one would still start), for a
    client that is gone. It listens only once the request body is read (`arm`: until then `receive` is
    the body reader's, which notices a disconnect itself) and, most requests answering within
    `DISCONNECT_WATCH_AFTER`, only from then on: they pay for a timer, not a task. Once the answer is
    ready the listener stops; a stream has its own (`_stream`).
    """

    __slots__ = ("_listener", "_receive", "_task", "_timer", "disconnected")

    def __init__(self, receive: Receive, *, armed: bool) -> None:
        self._receive = receive
        self._task = asyncio.current_task()
        self._listener: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.disconnected = False
        if armed:
            self.arm()

    def arm(self) -> None:
        """Start listening for the disconnect (after `DISCONNECT_WATCH_AFTER`)."""
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(DISCONNECT_WATCH_AFTER, self._listen)

    def _listen(self) -> None:
        self._listener = asyncio.ensure_future(self._until_disconnect())

    async def _until_disconnect(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self.disconnected = True
        if self._task is not None:
            self._task.cancel()

    def cancelled_request(self) -> bool:
        """True when this watch cancelled the request (the cancellation is then taken back: it is handled)."""
        if self.disconnected and self._task is not None:
            self._task.uncancel()
            return True
        return False

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._listener is not None and not self._listener.done():
            self._listener.cancel()


def _headers(scope: Scope) -> dict[str, str]:
    """The request headers by lower-case name (ASGI servers send them so), repeated ones joined as Django does."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1")
        value = raw_value.decode("latin-1")
        if name in headers:
            value = headers[name] + ("; " if name == "cookie" else ",") + value
        headers[name] = value
    return headers


async def _send_response(response: HTTPResponse, receive: Receive, send: Send, hsts: str | None) -> None:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in response.headers.items()]
    headers.extend(SECURITY_HEADERS)
    if "Cache-Control" not in response.headers:
        headers.append(NO_STORE)
    if hsts is not None:
        headers.append((b"strict-transport-security", hsts.encode("latin-1")))
    stream = response.stream
    if stream is None:
        headers.append((b"content-length", str(len(response.body)).encode("latin-1")))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await send({"type": "http.response.body", "body": response.body})
        return
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await _stream(stream, receive, send)


async def _stream(stream: AsyncIterator[bytes], receive: Receive, send: Send) -> None:
    """Send each chunk of `stream` as it comes; when the client disconnects, close the stream.

    Closing the stream is what cancels the request in the protocol core (as Django's handler
    cancelling the view does on the Django path).
    """

    async def pump() -> None:
        async for chunk in stream:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    pumping = asyncio.ensure_future(pump())
    watching = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait((pumping, watching), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (watching, pumping):
            if not task.done():
                task.cancel()
        await asyncio.gather(watching, pumping, return_exceptions=True)
        await aclose(stream)
    if not pumping.cancelled() and pumping.exception() is not None:
        raise pumping.exception()  # type: ignore[misc]  # checked just above


async def _lifespan(receive: Receive, send: Send) -> None:
    """Answer the lifespan protocol: nothing to start or stop (Django does not speak it)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def get_asgi_application(django_app: ASGIApp | None = None) -> FastPath:
    """The ASGI application serving the URLconf's MCP endpoints on the fast path and everything else with `django_app`.

    Args:
        django_app: what serves the rest: Django's ASGI handler (built with
            `django.core.asgi.get_asgi_application()`, which sets Django up, when None), or any
            ASGI application around it (a Channels `ProtocolTypeRouter`, `ASGIStaticFilesHandler`).
    """
    if django_app is None:
        from django.core.asgi import get_asgi_application as django_asgi_application

        django_app = django_asgi_application()
    else:
        import django
        from django.apps import apps

        if not apps.ready:
            django.setup(set_prefix=False)
    # A serving process builds the declarations' definitions now, not on the first listing: a management
    # command never does (they compile on first use, issue 34), and here they join what gc.freeze() keeps.
    for registry in all_registries():
        registry.compile()
    # Everything loaded so far (Django, the apps, their models) lives as long as the process: out of the
    # collector's reach, a full collection no longer walks it, which took tens of ms every few seconds.
    # Garbage is collected first, so none of it is kept for good.
    gc.collect()
    gc.freeze()
    return FastPath(django_app)
