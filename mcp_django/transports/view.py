"""`MCPView`: the Django view around `StreamableHTTP`.

It is async, and works under WSGI too: there a streamed answer is collected and sent in one piece.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.db import transaction
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.request import RawPostDataException
from django.http.response import HttpResponseBase
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from mcp_django.endpoints import Endpoint
from mcp_django.endpoints.admission import Credentials
from mcp_django.protocol import Era
from mcp_django.transports.http import HTTPResponse, StreamableHTTP, failed_response, resource_metadata_url

# The view logs where the transport it wraps does (docs/concepts.md names this logger).
logger = logging.getLogger("mcp_django.transports.http")


class MCPView(View):
    """The Django view serving one `Endpoint` over Streamable HTTP (mount it with `mcp_django.urls.endpoint`)."""

    endpoint: Endpoint | None = None
    transport: StreamableHTTP | None = None
    http_method_names = ["get", "post", "put", "patch", "delete", "head", "options", "trace"]

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        endpoint = initkwargs.get("endpoint")
        if not isinstance(endpoint, Endpoint):
            raise TypeError("MCPView.as_view() needs endpoint=<an mcp_django.endpoints.Endpoint>")
        initkwargs.setdefault("transport", StreamableHTTP(endpoint))
        # MCP clients are not browsers holding a CSRF cookie; the Origin check guards against web pages.
        # Not wrapped in ATOMIC_REQUESTS (Django refuses it for an async view): each tool call is atomic
        # on its own thread (mcp_django.runtime.transactions), and the audit row stays outside it.
        return transaction.non_atomic_requests(csrf_exempt(super().as_view(**initkwargs)))

    async def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:  # type: ignore[override]  # async view
        """Serve every HTTP method through the transport, which decides what is allowed."""
        assert self.transport is not None
        streaming = isinstance(request, ASGIRequest)
        try:
            site = request.build_absolute_uri("/")
            metadata = resource_metadata_url(site, request.path)
        except Exception as exc:
            logger.exception("Could not read the MCP request")
            response = failed_response(exc, Era.HANDSHAKE)
        else:
            response = await self.transport.respond(
                request.method or "GET",
                request.headers,
                # Read once admitted (under WSGI the body is still on the socket then); see `_read_body`.
                (lambda limit: _read_body(request, limit)) if request.method == "POST" else b"",
                credentials=Credentials(request.headers, request=request, address=request.META.get("REMOTE_ADDR")),
                host=request.headers.get("host"),
                resource_metadata=metadata,
                streaming=streaming,
                site=site,
            )
        return await _to_django(response, streaming=streaming)

    # Django picks sync or async handling from these; they all lead to `dispatch`.
    async def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        return await self.dispatch(request, *args, **kwargs)

    get = put = patch = delete = head = trace = post


async def _read_body(request: HttpRequest, limit: int) -> bytes:
    """The body of `request`, one byte past `limit` at most.

    Under Django's ASGI handler the body has already arrived whole (spooled to a temporary file past
    `FILE_UPLOAD_MAX_MEMORY_SIZE`) before any view runs; the fast path in front of it ends the body at
    the limit (`transports.body.bounded_receive`). Under WSGI it is read from the socket here.
    `DATA_UPLOAD_MAX_MEMORY_SIZE` is not consulted: it guards `request.body` and form parsing, and
    `MAX_REQUEST_BYTES` is this endpoint's limit.
    """
    try:
        return request.read(limit + 1)
    except RawPostDataException:  # middleware already read it
        return request.body[: limit + 1]


async def _to_django(response: HTTPResponse, *, streaming: bool) -> HttpResponseBase:
    if response.stream is not None:
        if streaming:
            return StreamingHttpResponse(response.stream, status=response.status, headers=response.headers)
        # Under WSGI nothing can be streamed: run the request to the end and send every event at once.
        body = b"".join([chunk async for chunk in response.stream])
        return HttpResponse(body, status=response.status, headers=response.headers)
    django_response = HttpResponse(response.body, status=response.status, headers=response.headers)
    if not response.body and "Content-Type" not in response.headers:
        del django_response["Content-Type"]
    return django_response
