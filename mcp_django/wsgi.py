"""The WSGI fast path: the MCP endpoints of the URLconf, served without Django's request cycle.

    # wsgi.py
    from mcp_django.wsgi import get_wsgi_application

    application = get_wsgi_application()

The twin of `mcp_django.asgi.get_asgi_application()` for WSGI servers (gunicorn's sync and gthread
workers, uWSGI, mod_wsgi): the MCP endpoints mounted in the root URLconf are answered here, every
other request goes to Django's WSGI handler (or to the application you pass) unchanged. The routes
come from `urls.py`, resolved once per path (`transports.routes`); the same `StreamableHTTP` rules
answer (both eras, sessions, the body limit), `Endpoint.admit` checks Host, Origin and credentials,
and the same security headers are sent as on the ASGI fast path.

A request here gets no Django `HttpRequest`, no middleware and no `request_started` /
`request_finished` signals; its thread runs the request on an event loop of its own, kept for the
thread's life (none is started per request), and sync code (the ORM, sync tools, authentication)
runs on that same thread, with no hand-over (`runtime.executor.calling_thread`). The thread's
database connections are Django's: `close_old_connections()` runs before and after each request,
as Django's signals run it, so `CONN_MAX_AGE` and broken connections are handled alike.

A streamed answer (progress or log notifications before the result) is sent as server-sent events
chunk by chunk where the server streams a WSGI iterable (gunicorn does); nothing can be asked of the
client mid-request, and a handshake session's GET stream is answered 405, as on the Django view under
WSGI. docs/fast-path.md.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from http.client import responses
from typing import Any, Final, TypeVar

from django.core.handlers.wsgi import get_path_info, get_script_name
from django.db import close_old_connections
from django.urls import set_script_prefix

from mcp_django.conf import HTTPSettings, django_http_settings
from mcp_django.endpoints.admission import Credentials
from mcp_django.interceptors.base import drain_background
from mcp_django.protocol.context import aclose
from mcp_django.runtime.executor import calling_thread
from mcp_django.transports import routes
from mcp_django.transports.body import CLIENT_GONE, ClientGone, declared_length
from mcp_django.transports.http import HTTPResponse, StreamableHTTP, resource_metadata_url

__all__ = ["WSGIFastPath", "get_wsgi_application"]

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]
"""A WSGI application: `app(environ, start_response)`."""

T = TypeVar("T")

READ_CHUNK: Final = 65536
"""Bytes asked of `wsgi.input` at a time."""

_thread = threading.local()
"""`loop`: this thread's event loop, made on its first fast-path request and kept."""


class WSGIFastPath:
    """The WSGI application `get_wsgi_application()` returns.

    Args:
        application: what serves every request that is not for a fast-path endpoint.
    """

    def __init__(self, application: WSGIApp) -> None:
        self.application = application
        self._routes = routes.RouteTable()

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        config = django_http_settings()
        script_name, path_info = get_script_name(environ), get_path_info(environ)
        route = self._routes.route(path_info, script_name)
        # A public view (the OAuth server) refuses a declared body over its limit itself under WSGI.
        if isinstance(route, routes.Route):
            headers = _headers(environ)
            secure = routes.is_secure(headers, environ.get("wsgi.url_scheme"), config)
            if not (config.ssl_redirect and not secure) and not route.served_by_view(headers):
                set_script_prefix(script_name)  # as Django's handler does, for reverse() in tools
                path = script_name.rstrip("/") + path_info
                return _serve(route.transport, environ, start_response, headers, secure, config, path)
        return self.application(environ, start_response)


def _serve(
    transport: StreamableHTTP,
    environ: Environ,
    start_response: StartResponse,
    headers: dict[str, str],
    secure: bool,
    config: HTTPSettings,
    path: str,
) -> Iterable[bytes]:
    method = environ["REQUEST_METHOD"].upper()
    host = headers.get("host") or routes.server_host(environ.get("SERVER_NAME"), environ.get("SERVER_PORT"), secure)
    site = routes.site_of(headers, host, secure, config)

    async def read_body(limit: int) -> bytes:
        return _read_input(environ, headers, limit)

    runner = _Runner()
    close_old_connections()  # as Django's `request_started` signal does
    try:
        response = runner.run(
            transport.respond(
                method,
                headers,
                # Read only once admitted and within the limits (`transports.body`); nothing for other methods.
                read_body if method == "POST" else b"",
                credentials=Credentials(headers, address=environ.get("REMOTE_ADDR")),
                host=host,
                resource_metadata=resource_metadata_url(site, path),
                streaming=False,
                site=site,
            )
        )
    except BaseException:
        runner.finish()
        raise
    start_response(_status_line(response.status), _response_headers(response, config.hsts if secure else None))
    if response.stream is None:
        runner.finish()
        return [response.body] if response.status != CLIENT_GONE else []
    return _Stream(runner, response.stream)


class _Runner:
    """Runs a request's coroutines on this thread's event loop, each in the request's own context."""

    __slots__ = ("context", "loop")

    def __init__(self) -> None:
        loop = getattr(_thread, "loop", None)
        if loop is None or loop.is_closed():
            loop = _thread.loop = asyncio.new_event_loop()
            # Closed when its thread is gone (a server that starts a thread per request, as runserver does).
            weakref.finalize(threading.current_thread(), loop.close)
        self.loop: asyncio.AbstractEventLoop = loop
        self.context = contextvars.copy_context()
        self.context.run(calling_thread)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(self.loop.create_task(coroutine, context=self.context))

    def finish(self) -> None:
        """After the answer: let the sinks' background work this request left run out, then close old connections."""
        try:
            if asyncio.all_tasks(self.loop):
                self.run(drain_background())
        finally:
            close_old_connections()  # as Django's `request_finished` signal does


class _Stream:
    """A streamed answer as a WSGI iterable: each chunk as the request produces it; `close()` ends the request."""

    __slots__ = ("runner", "stream")

    def __init__(self, runner: _Runner, stream: AsyncIterator[bytes]) -> None:
        self.runner = runner
        self.stream = stream

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        try:
            return self.runner.run(_next_chunk(self.stream))
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Called by the server once the answer is sent, or the client went away: closing the stream
        cancels the request in the protocol core, as a disconnect does on the ASGI fast path."""
        try:
            self.runner.run(aclose(self.stream))
        finally:
            self.runner.finish()


async def _next_chunk(stream: AsyncIterator[bytes]) -> bytes:
    return await anext(stream)


def _read_input(environ: Environ, headers: dict[str, str], limit: int) -> bytes:
    """The request body from `wsgi.input`, one chunk past `limit` at most (a `BodyReader`'s contract).

    As Django reads it: up to `Content-Length`, or to the end where the server says the input ends
    (`wsgi.input_terminated`: a chunked body).

    Raises:
        ClientGone: the body ended (or the connection broke) before `Content-Length` bytes came.
    """
    declared = declared_length(headers)
    terminated = bool(environ.get("wsgi.input_terminated"))
    wanted = limit + 1 if terminated else min(declared or 0, limit + 1)
    stream = environ["wsgi.input"]
    chunks: list[bytes] = []
    size = 0
    try:
        while size < wanted:
            chunk = stream.read(min(READ_CHUNK, wanted - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:  # the connection broke mid-body (gunicorn's NoMoreData is one)
        raise ClientGone from error
    if declared is not None and size < min(declared, wanted):
        raise ClientGone
    return b"".join(chunks)


_header_names: dict[str, str] = {}
"""Header names by environ key (`HTTP_MCP_METHOD`: `mcp-method`; "" for a key that is no header), made on first
sight: a request's keys are mostly the same from one request to the next. Bounded: a client cannot grow it."""

_HEADER_NAMES_KEPT: Final = 512


def _headers(environ: Environ) -> dict[str, str]:
    """The request headers by lower-case name, from the `HTTP_*` keys (the server joined repeated ones)."""
    names = _header_names
    headers = {}
    for key, value in environ.items():
        name = names.get(key)
        if name is None:
            name = key[5:].replace("_", "-").lower() if key.startswith("HTTP_") else ""
            if len(names) < _HEADER_NAMES_KEPT:
                names[key] = name
        if name:
            headers[name] = value
    for key, name in (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length")):
        value = environ.get(key)
        if value:
            headers[name] = value
    return headers


_status_lines: dict[int, str] = {CLIENT_GONE: f"{CLIENT_GONE} Client Closed Request"}
"""Status lines by status code, made on first use."""


def _status_line(status: int) -> str:
    line = _status_lines.get(status)
    if line is None:
        line = _status_lines[status] = f"{status} {responses.get(status, 'Unknown')}"
    return line


def _response_headers(response: HTTPResponse, hsts: str | None) -> list[tuple[str, str]]:
    headers = list(response.headers.items())
    headers.extend(routes.SECURITY_HEADERS)
    if "Cache-Control" not in response.headers:
        headers.append(routes.NO_STORE)
    if hsts is not None:
        headers.append(("Strict-Transport-Security", hsts))
    if response.stream is None:
        headers.append(("Content-Length", str(len(response.body))))
    return headers


def get_wsgi_application(django_app: WSGIApp | None = None) -> WSGIFastPath:
    """The WSGI application serving the URLconf's MCP endpoints on the fast path and everything else with `django_app`.

    Args:
        django_app: what serves the rest: Django's WSGI handler (built with
            `django.core.wsgi.get_wsgi_application()`, which sets Django up, when None), or any WSGI
            application around it (WhiteNoise, a static files handler).
    """
    if django_app is None:
        from django.core.wsgi import get_wsgi_application as django_wsgi_application

        django_app = django_wsgi_application()
    else:
        import django
        from django.apps import apps

        if not apps.ready:
            django.setup(set_prefix=False)
    # As on the ASGI fast path: what is loaded now lives as long as the process, out of the collector's reach.
    gc.collect()
    gc.freeze()
    return WSGIFastPath(django_app)
