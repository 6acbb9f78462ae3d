"""Streamable HTTP: MCP over POST, answered with JSON or server-sent events.

Two layers:

- `StreamableHTTP` holds every HTTP rule of the spec (Origin, Accept, Content-Type, body size,
  JSON parsing, sessions, the stateless era's header mirror and `Mcp-Param-*` checks, status
  codes). It knows no web framework: method, headers and body bytes in, an `HTTPResponse`
  (status, headers, and bytes or an async iterator of bytes) out. The fast path
  (`mcp_django.asgi`) reuses it. The header checks themselves are in `transports.headers`.
- `MCPView` (`transports.view`) is the Django view around it. It is async, and works under WSGI
  too: there a streamed answer is collected and sent in one piece.

Which era a request belongs to is decided by its `MCP-Protocol-Version` header alone
(`era_of_header`): absent or a handshake revision selects the handshake era, anything else
the stateless era.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from mcp_django.conf import mcp_settings
from mcp_django.endpoints import Endpoint
from mcp_django.endpoints.admission import CLIENT_ADDRESS, Admission, Credentials, Refused
from mcp_django.endpoints.sessions import SessionRefused, StoredSession
from mcp_django.protocol import (
    Connection,
    Era,
    HeaderMismatch,
    InvalidRequest,
    MCPError,
    ParseError,
    era_of_header,
)
from mcp_django.protocol.context import aclose
from mcp_django.protocol.errors import error_response
from mcp_django.protocol.jsonrpc import (
    RequestId,
    is_request,
    parse_json,
    request_id_of,
)
from mcp_django.runtime import notifications
from mcp_django.safety.idempotency import HEADER_KEY as IDEMPOTENCY_KEY
from mcp_django.transports import resumable
from mcp_django.transports.body import (
    CLIENT_GONE,
    BodyReader,
    ClientGone,
    ReadOnce,
    declared_length,
    header_bytes,
    headers_too_large,
    payload_too_large,
    read_within,
    request_timeout,
)
from mcp_django.transports.cors import cors_headers, is_preflight, preflight_headers
from mcp_django.transports.failures import error_status, failure
from mcp_django.transports.headers import check_mirror_headers, header_value, param_headers_of_call
from mcp_django.transports.resume_relay import stream_relay
from mcp_django.transports.sse import SSE_HEADERS, dump_message, event_stream, is_stream_event_id

logger = logging.getLogger("mcp_django.transports.http")

SESSION_HEADER: Final = "Mcp-Session-Id"
JSON_HEADERS: Final[Mapping[str, str]] = {"Content-Type": "application/json"}


_running: set[asyncio.Task[None]] = set()
"""Requests of handshake sessions still running (a reference keeps each task alive until it ends)."""


@dataclasses.dataclass(slots=True)
class HTTPResponse:
    """What to send back: a status, headers, and either `body` or an async `stream` of body chunks."""

    status: int
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None


def _json_response(message: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> HTTPResponse:
    return HTTPResponse(status, {**JSON_HEADERS, **(headers or {})}, dump_message(message))


def _error(status: int, error: MCPError, request_id: RequestId | None = None, **headers: str) -> HTTPResponse:
    return _json_response(error.to_response(request_id), status, headers)


def failed_response(exc: BaseException, era: Era, request_id: RequestId | None = None) -> HTTPResponse:
    """The answer to a request that failed with `exc`, through the one error map (`protocol.errors`)."""
    return _reply(error_response(exc, request_id, era), era)


def _reply(reply: Any, era: Era, headers: Mapping[str, str] | None = None) -> HTTPResponse:
    """The HTTP response carrying the core's reply: 202 for none, else JSON with the status its error maps to."""
    if reply is None:
        return HTTPResponse(202, dict(headers or {}))
    error = reply.get("error") if isinstance(reply, dict) else None
    if error is None:
        return _json_response(reply, 200, headers)
    status, extra = error_status(era, error)
    return _json_response(reply, status, {**(headers or {}), **extra})


def _is_initialize(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


def _media_types(value: str) -> set[str]:
    return {part.split(";", 1)[0].strip().lower() for part in value.split(",")}


def _accepts_both(accept: str | None) -> bool:
    """True when `Accept` admits both JSON and SSE; wildcards count."""
    if accept is None:
        return False
    types = _media_types(accept)
    if "*/*" in types:
        return True
    return bool(types & {"application/json", "application/*"}) and bool(types & {"text/event-stream", "text/*"})


def _is_json(content_type: str | None) -> bool:
    return content_type is not None and content_type.split(";", 1)[0].strip().lower() == "application/json"


def parse_body(body: bytes) -> Any:
    """Parse a request body as strict UTF-8 JSON (`mcp_django.protocol.jsonrpc.parse_json`).

    Raises:
        ParseError: not UTF-8, not JSON, a non-standard constant (`NaN`, `Infinity`), or nested too deeply.
    """
    return parse_json(body)


class StreamableHTTP:
    """Serves one endpoint over Streamable HTTP, independent of any web framework.

    Args:
        endpoint: the endpoint to serve.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def respond(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | BodyReader,
        *,
        credentials: Credentials,
        host: str | None,
        resource_metadata: str | None = None,
        streaming: bool = True,
        site: str | None = None,
    ) -> HTTPResponse:
        """Answer one HTTP request. Never raises.

        Args:
            method: the HTTP method, upper case.
            headers: the request headers, looked up by lower-case name.
            body: the request body, or how to read it (`transports.body.BodyReader`): then it is read only
                once the request has passed every check that needs no body, admission first, and no further
                than one chunk past `MAX_REQUEST_BYTES`. An answer with status `CLIENT_GONE` is for nobody.
            credentials: what the caller presented; the endpoint admits it on every request (`Endpoint.admit`).
            host: the `Host` header, checked against `ALLOWED_HOSTS`.
            resource_metadata: the absolute URL of the endpoint's RFC 9728 metadata, named in the
                `WWW-Authenticate` header of a 401.
            streaming: whether the server can stream the answer as it is produced (ASGI); without it
                (WSGI) nothing can be asked of the client mid-request.
            site: the absolute URL of the site's root as the client reached it (`https://host/`), for
                links the client is given (`Connection.site`).
        """
        if not isinstance(body, bytes):
            body = ReadOnce(body)  # a failure may need the body after all (`transports.failures`)
        try:
            if is_preflight(method, headers):
                preflight = preflight_headers(headers, host)
                if preflight is not None:
                    return HTTPResponse(204, preflight)
            response = await self._respond(method, headers, body, credentials, host, resource_metadata, streaming, site)
        except Exception as exc:
            era = era_of_header(header_value(headers, "mcp-protocol-version"))
            error, request_id = await failure(exc, method, self.endpoint.path, body)
            response = failed_response(error, era, request_id)
        origin = headers.get("origin")
        if origin is not None:
            cors = cors_headers(origin, host)
            if cors is not None:
                response.headers.update(cors)
        return response

    async def _respond(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | BodyReader,
        credentials: Credentials,
        host: str | None,
        resource_metadata: str | None,
        streaming: bool,
        site: str | None = None,
    ) -> HTTPResponse:
        header_limit = mcp_settings.MAX_HEADER_BYTES
        if header_bytes(headers) > header_limit:
            return _error(431, InvalidRequest(headers_too_large(header_limit)))
        try:
            admission = await self.endpoint.admit(
                host=host, origin=headers.get("origin"), credentials=credentials, resource_metadata=resource_metadata
            )
        except Refused as refusal:
            return _error(refusal.status, InvalidRequest(refusal.message), **refusal.headers)
        principal = admission.principal
        version_header = header_value(headers, "mcp-protocol-version")
        era = era_of_header(version_header)
        sessions = era is Era.HANDSHAKE and self.endpoint.sessions
        if method == "POST":
            return await self._post(headers, body, version_header, era, admission, streaming, site, credentials.address)
        if method == "DELETE" and sessions:
            return await self._delete(headers, principal)
        listening = sessions and streaming and notifications.available()
        if method == "GET" and listening:
            return await self._get(headers, principal)
        allow = ("GET, POST, DELETE" if listening else "POST, DELETE") if sessions else "POST"
        return _error(405, InvalidRequest("Method Not Allowed"), Allow=allow)

    async def _post(
        self,
        headers: Mapping[str, str],
        body: bytes | BodyReader,
        version_header: str | None,
        era: Era,
        admission: Admission,
        streaming: bool,
        site: str | None = None,
        address: str | None = None,
    ) -> HTTPResponse:
        principal = admission.principal
        if not _accepts_both(headers.get("accept")):
            return _error(
                406, InvalidRequest("Not Acceptable: Client must accept both application/json and text/event-stream")
            )
        if not _is_json(headers.get("content-type")):
            return _error(415, InvalidRequest("Unsupported Media Type: Content-Type must be application/json"))
        limit = mcp_settings.MAX_REQUEST_BYTES
        declared = declared_length(headers)
        if declared is not None and declared > limit:
            return _error(413, InvalidRequest(payload_too_large(limit)))
        if not isinstance(body, bytes):
            timeout = mcp_settings.REQUEST_BODY_TIMEOUT
            try:
                body = await read_within(body, limit, timeout)
            except TimeoutError:
                return _error(408, InvalidRequest(request_timeout(timeout)), Connection="close")
            except ClientGone:
                return HTTPResponse(CLIENT_GONE)
        if len(body) > limit:
            return _error(413, InvalidRequest(payload_too_large(limit)))
        try:
            message = parse_body(body)
        except ParseError as error:
            return failed_response(error, era)
        connection = self.endpoint.connection(
            principal,
            transport="http",
            sessions=False,
            version_header=version_header,
            streaming=streaming,
            admitted_scope=admission.scope,
            site=site,
        )
        if address is not None:
            connection.extra[CLIENT_ADDRESS] = address
        idempotency_key = header_value(headers, "idempotency-key")
        if idempotency_key is not None and isinstance(message, dict):  # one call's key (never a batch's)
            connection.extra[IDEMPOTENCY_KEY] = idempotency_key
        if era is Era.STATELESS:
            if isinstance(message, dict) and isinstance(message.get("method"), str):
                assert version_header is not None  # a stateless era is only chosen by the header
                try:
                    check_mirror_headers(message, headers, version_header)
                except HeaderMismatch as error:
                    return failed_response(error, era, request_id_of(message))
                connection.param_headers = param_headers_of_call(message, headers)  # the backend checks them
            return await self._dispatch(message, connection, era, None)

        store = self.endpoint.session_store
        if store is None:
            return await self._dispatch(message, connection, era, None)
        connection.sessions = True
        session_id = header_value(headers, "mcp-session-id")
        if session_id:
            record = await store.resume(session_id, endpoint_name=self.endpoint.name, principal=principal)
            if record is None:
                return _error(404, InvalidRequest("Session not found"), request_id_of(message))
            connection.session = record.state
            return await self._dispatch(message, connection, era, record)
        if not _is_initialize(message):
            return _error(400, InvalidRequest("Bad Request: Missing session ID"), request_id_of(message))
        # initialize never streams; only a successful one opens a session, so a failed one leaves nothing behind.
        reply = await self.endpoint.handler.handle(message, connection)
        opened: dict[str, str] = {}
        if connection.session is not None and isinstance(reply, dict) and "result" in reply:
            try:
                opened[SESSION_HEADER] = await store.open(
                    connection.session,
                    endpoint_name=self.endpoint.name,
                    endpoint_path=self.endpoint.path,
                    principal=principal,
                    client_address=address,
                )
            except SessionRefused as refusal:
                return _error(refusal.status, refusal.error, request_id_of(message))
        return _reply(reply, era, opened)

    async def _dispatch(
        self, message: Any, connection: Connection, era: Era, record: StoredSession | None
    ) -> HTTPResponse:
        """Hand the message to the protocol core; answer JSON, or SSE when the request streams."""
        handler = self.endpoint.handler
        if not is_request(message) or not handler.may_stream(message, connection):
            reply = await handler.handle(message, connection)
            await self._commit(record)
            return _reply(reply, era)
        if record is not None and connection.streaming:
            return await self._dispatch_resumable(message, connection, era, record)
        stream = handler.stream(message, connection)
        try:
            first = await anext(stream)
        except StopAsyncIteration:
            await self._commit(record)
            return HTTPResponse(202)
        if "method" not in first:  # the final response came first: nothing was streamed
            await aclose(stream)
            await self._commit(record)
            return _reply(first, era)
        return HTTPResponse(200, dict(SSE_HEADERS), stream=event_stream(self._follow(first, stream, record)))

    async def _dispatch_resumable(
        self, message: Any, connection: Connection, era: Era, record: StoredSession
    ) -> HTTPResponse:
        """Serve a handshake session's request through a resumable buffer (see `transports.resumable`).

        The request runs on its own task: a dropped connection does not cancel it, and the client can
        resume its stream with `Last-Event-ID`.
        """
        buffer = resumable.buffers.open(record.session_id, owner=await stream_relay.owner())
        connection.close_stream = buffer.detach
        pump = asyncio.ensure_future(self._pump(self.endpoint.handler.stream(message, connection), buffer, record))
        _running.add(pump)
        pump.add_done_callback(_running.discard)
        first = await buffer.first()
        if first is None or "method" not in first:  # no message, or the final response first: no stream to resume
            resumable.buffers.discard(buffer)
            return HTTPResponse(202) if first is None else _reply(first, era)
        events = resumable.resumable_events(buffer, 0, priming=True, until_detached=True)
        return HTTPResponse(200, dict(SSE_HEADERS), stream=events)

    async def _pump(
        self, stream: AsyncIterator[dict[str, Any]], buffer: resumable.EventBuffer, record: StoredSession
    ) -> None:
        try:
            async for message in stream:
                if "method" not in message:
                    # The response: what it reports (a subscription, a log level) is saved before the client
                    # can see it, so a worker killed right after still knows it.
                    await self._commit_quietly(record)
                buffer.append(message)
        finally:
            buffer.finish()
            await aclose(stream)
            await self._commit_quietly(record)

    async def _commit_quietly(self, record: StoredSession) -> None:
        try:
            await self._commit(record)
        except Exception:
            logger.exception("Could not save MCP session %s", record.session_id)

    async def _follow(
        self, first: dict[str, Any], stream: AsyncIterator[dict[str, Any]], record: StoredSession | None
    ) -> AsyncIterator[dict[str, Any]]:
        try:
            yield first
            async for message in stream:
                yield message
        finally:
            await aclose(stream)
            try:
                await self._commit(record)
            except Exception:
                logger.exception("Could not save MCP session %s", record.session_id if record else "")

    async def _commit(self, record: StoredSession | None) -> None:
        store = self.endpoint.session_store
        if record is not None and store is not None:
            await store.commit(record)

    async def _get(self, headers: Mapping[str, str], principal: Any) -> HTTPResponse:
        """Open a handshake session's stream of server notifications (list changes, resource updates)."""
        if not {"text/event-stream", "text/*", "*/*"} & _media_types(headers.get("accept") or ""):
            return _error(406, InvalidRequest("Not Acceptable: Client must accept text/event-stream"))
        store = self.endpoint.session_store
        assert store is not None
        session_id = header_value(headers, "mcp-session-id")
        if not session_id:
            return _error(400, InvalidRequest("Bad Request: Missing session ID"))
        if await store.resume(session_id, endpoint_name=self.endpoint.name, principal=principal) is None:
            return _error(404, InvalidRequest("Session not found"))
        last_event_id = header_value(headers, "last-event-id")
        # A GET stream keeps nothing to replay: a client reconnecting to one gets a new one.
        if last_event_id and not is_stream_event_id(last_event_id):
            found = resumable.buffers.find(last_event_id, session_id)
            if found is not None:
                buffer, after = found
                events = resumable.resumable_events(buffer, after, priming=False, until_detached=False)
            elif (from_owner := await stream_relay.resume(last_event_id, session_id)) is not None:
                events = from_owner  # another worker's stream
            else:
                return _error(404, InvalidRequest("Not Found: no stream to resume from that Last-Event-ID"))
            return HTTPResponse(200, dict(SSE_HEADERS), stream=events)
        inbox = await notifications.subscribe(self.endpoint)
        relayed = self._relay(inbox, session_id, principal)
        # Primed: the headers leave at once (daphne sends them with the first chunk), not with the first note.
        return HTTPResponse(200, dict(SSE_HEADERS), stream=event_stream(relayed, priming=True))

    async def _relay(
        self, inbox: AsyncIterator[dict[str, Any]], session_id: str, principal: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """What a session's GET stream carries: the notifications it may see, until the session ends."""
        store = self.endpoint.session_store
        assert store is not None
        connection = self.endpoint.connection(principal, transport="http", sessions=False)
        try:
            async for note in inbox:
                await self.endpoint.overlay.refresh()  # a stream outlives its admission: a revocation ends it
                record = await store.resume(session_id, endpoint_name=self.endpoint.name, principal=principal)
                if record is None:
                    return  # the session was ended or expired: so is its stream
                connection.session = record.state
                if await self.endpoint.handler.delivers(note, connection):
                    yield note
        finally:
            await aclose(inbox)

    async def _delete(self, headers: Mapping[str, str], principal: Any) -> HTTPResponse:
        store = self.endpoint.session_store
        assert store is not None
        session_id = header_value(headers, "mcp-session-id")
        if not session_id:
            return _error(400, InvalidRequest("Bad Request: Missing session ID"))
        if not await store.end(session_id, endpoint_name=self.endpoint.name, principal=principal):
            return _error(404, InvalidRequest("Session not found"))
        return HTTPResponse(204)


WELL_KNOWN_RESOURCE: Final = "/.well-known/oauth-protected-resource"


def resource_metadata_url(site: str, path: str) -> str:
    """The RFC 9728 metadata URL of the resource at `path` on `site` (`https://host/`): the well-known
    prefix inserted between host and path, the path without its trailing slash."""
    return site.rstrip("/") + WELL_KNOWN_RESOURCE + (path.rstrip("/") if path.strip("/") else "")
