"""The Streamable HTTP side of a remote MCP connection, on `httpx2` (the client the official SDK uses).

Both eras: in the handshake era the connection keeps the `Mcp-Session-Id` the server gave it (a 404,
or a 400 that answers no request, means the server forgot it, restarted: open a new session and send
the request again, once), resumes a request's broken SSE stream with a GET
and `Last-Event-ID`, and reads the server's own notifications on the GET stream. In 2026-07-28 every
POST carries `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers a tool's
`x-mcp-header` arguments need, and notifications come on a `subscriptions/listen` stream.

Whatever the server sends is bounded (`client.limits`): a JSON body or one SSE event past
`REMOTE_MAX_MESSAGE_BYTES` after decompression (a gzip bomb, a `data:` line without end) is refused
as it grows, the rest unread, and the tools whose arguments it mirrors in headers are remembered up to
`REMOTE_MAX_LIST_ITEMS`.

A server entry with an `auth` (`client.auth.oauth`) has its requests carry that object's token, and a
401 or 403 challenge answered by it: the request is sent again with the new token, at most twice.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import httpx2

from mcp_django.client.conf import client_settings
from mcp_django.client.config import Challenge
from mcp_django.client.limits import over_limit, remember
from mcp_django.client.remote import RemoteConnection
from mcp_django.client.streams import NotificationListener, SessionExpired
from mcp_django.protocol.jsonrpc import Message, ParseError, dump_json, notification, parse_json, request_id_of
from mcp_django.protocol.meta import NAME_FIELDS, param_header_error, param_headers_of
from mcp_django.protocol.versions import Era

logger = logging.getLogger("mcp_django.client")

_MAX_RESUMPTIONS: Final = 3
_MAX_AUTH_RETRIES: Final = 2
"""How many times one request is sent again after its `auth` answered a 401 or 403 (a first token, a step-up)."""
_ACCEPT: Final = "application/json, text/event-stream"


def encode_header_value(value: str) -> str:
    """MCP's header value encoding: visible ASCII as is, anything else as `=?base64?<UTF-8 as base64>?=`."""
    if value.isascii() and value.isprintable() and value == value.strip():
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def _param_header_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return encode_header_value(str(value))
    return None


def _answers(body: Any, request_id: Any) -> bool:
    """Whether `body` is a JSON-RPC answer to the request `request_id` (not an error about something else)."""
    return isinstance(body, dict) and ("result" in body or "error" in body) and request_id_of(body) == request_id


class HTTPConnection(RemoteConnection):
    """A remote MCP server at a Streamable HTTP URL (`"BACKEND": "mcp_django.client.http.HTTPConnection"`,
    the kind of an entry with a `URL`)."""

    transport = "http"
    config_keys = frozenset({"URL"})
    signs_in = True

    _client: httpx2.AsyncClient | None = None
    _session_id: str | None = None
    _reconnect_delay: float = 0.0
    """Seconds to wait before resuming a stream: the last SSE `retry` field the server sent (SEP-1699)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._param_headers: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._tools_seen = False
        self._cancels: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self.server.url is not None
        return self.server.url

    @classmethod
    def config_problems(cls, config: Mapping[str, Any]) -> list[str]:
        url = config.get("URL")
        if not (isinstance(url, str) and url.startswith(("http://", "https://"))):
            return ["URL must be an http:// or https:// URL"]
        return []

    @classmethod
    def configure(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"url": config["URL"]}

    @classmethod
    def location(cls, config: Mapping[str, Any]) -> str:
        return str(config["URL"])

    async def _start(self) -> None:
        self._session_id = None
        if self._client is None:
            self._client = httpx2.AsyncClient(
                headers=self.server.http_headers,
                timeout=httpx2.Timeout(self.server.read_timeout, connect=self.server.connect_timeout),
                follow_redirects=False,
                trust_env=False,
            )

    async def _stop(self) -> None:
        client, session_id = self._client, self._session_id
        self._client, self._session_id = None, None
        if client is None:
            return
        if session_id is not None:
            # Streamed and left unread: whatever the server answers a DELETE with is of no interest.
            with contextlib.suppress(httpx2.HTTPError, TimeoutError):
                async with asyncio.timeout(self.server.connect_timeout):
                    async with client.stream("DELETE", self.url, headers=self._headers(None)):
                        pass
        await client.aclose()

    async def _authorization(self) -> dict[str, str]:
        """The `Authorization` header the connection's `auth` gives (none without one, or before its first token)."""
        value = await self.server.auth.authorization(self.server) if self.server.auth is not None else None
        return {} if value is None else {"Authorization": value}

    def _headers(self, message: Message | None) -> dict[str, str]:
        headers = {"Accept": _ACCEPT, "Content-Type": "application/json"}
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self._session_id is not None and self.era is Era.HANDSHAKE:
            headers["Mcp-Session-Id"] = self._session_id
        if message is None or self.era is not Era.STATELESS or "method" not in message:
            return headers
        method = message["method"]
        params = message.get("params") or {}
        headers["Mcp-Method"] = encode_header_value(method)
        field = NAME_FIELDS.get(method)
        if field is not None and isinstance(params.get(field), str):
            headers["Mcp-Name"] = encode_header_value(params[field])
        if method == "tools/call":
            arguments = params.get("arguments") or {}
            for argument, suffix in self._param_headers.get(str(params.get("name")), {}).items():
                value = _param_header_value(arguments.get(argument))
                if value is not None:
                    headers[f"Mcp-Param-{suffix}"] = value
        return headers

    def _learn_param_headers(self, result: dict[str, Any]) -> None:
        """Drop the listed tools whose `x-mcp-header` annotations are invalid; remember the others' arguments.

        The spec has a client exclude such a tool (its calls' headers could not be built, or would be
        ambiguous); stateless calls mirror the remembered arguments in `Mcp-Param-*` headers.
        """
        tools = result.get("tools")
        if isinstance(tools, list):
            tools = result["tools"] = [tool for tool in tools if self._valid_tool(tool)]
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                remember(self._param_headers, tool["name"], param_headers_of(tool.get("inputSchema")) or None)

    def _valid_tool(self, tool: Any) -> bool:
        error = param_header_error(tool.get("inputSchema")) if isinstance(tool, dict) else None
        if error is not None:
            logger.warning(
                "Remote MCP server %r lists tool %r, left out: %s", self.server.name, tool.get("name"), error
            )
        return error is None

    async def _learn_tools(self) -> None:
        cursor: str | None = None
        for _ in range(client_settings.REMOTE_MAX_LIST_PAGES):
            params: dict[str, Any] = {"_meta": self._stateless_meta()}
            if cursor:
                params["cursor"] = cursor
            result = await self._exchange("tools/list", params, None)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return

    async def _exchange(
        self, method: str, params: dict[str, Any], on_notification: NotificationListener | None
    ) -> dict[str, Any]:
        if method == "tools/call" and self.era is Era.STATELESS and not self._tools_seen:
            self._tools_seen = True
            await self._learn_tools()
        result = await super()._exchange(method, params, on_notification)
        if method == "tools/list":
            self._tools_seen = True
            self._learn_param_headers(result)
        return result

    async def _round_trip(self, request: Message, on_notification: NotificationListener | None) -> Message:
        return await self._post(request, on_notification)

    @property
    def session_id(self) -> str | None:
        return self._session_id if self.era is Era.HANDSHAKE else None

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        async with self._stream("POST", notification(method, params)) as response:
            await self._read_body(response, method)

    async def _reply(self, message: Message) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.server.read_timeout), self._stream("POST", message) as response:
                await self._read_body(response, "a reply")

    async def _read_body(self, response: httpx2.Response, method: str) -> bytes:
        """The body of `response`, decompressed, or `BackendUnavailable` as soon as it passes the bound."""
        limit = client_settings.REMOTE_MAX_MESSAGE_BYTES
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit and "content-encoding" not in response.headers:
            raise self._too_large(method, limit)
        parts: list[bytes] = []
        size = 0
        async for part in response.aiter_bytes():
            size += len(part)
            if size > limit:
                raise self._too_large(method, limit)
            parts.append(part)
        return b"".join(parts)

    def _too_large(self, method: str, limit: int) -> Exception:
        return over_limit(self.server.name, f"the answer to {method} is over {limit} bytes (REMOTE_MAX_MESSAGE_BYTES)")

    @contextlib.asynccontextmanager
    async def _stream(
        self, verb: str, message: Message | None, extra: dict[str, str] | None = None
    ) -> AsyncIterator[httpx2.Response]:
        """One HTTP exchange with transport failures turned into `BackendUnavailable`, 404 into `SessionExpired`."""
        if self._client is None:
            raise self.unavailable("closed", "the connection was reset")
        content = dump_json(message) if message is not None else None
        auth = self.server.auth
        try:
            for attempt in range(_MAX_AUTH_RETRIES + 1):
                headers = self._headers(message) | (extra or {}) | await self._authorization()
                async with self._client.stream(verb, self.url, content=content, headers=headers) as response:
                    status = response.status_code
                    if status == 404 and self._session_id is not None:
                        raise SessionExpired()
                    if status in (401, 403) and auth is not None and attempt < _MAX_AUTH_RETRIES:
                        challenge = Challenge.parse(response.headers.get("www-authenticate", ""))
                    elif status in (401, 403):
                        raise self.unavailable("refused", f"the server refused the client (HTTP {status})")
                    elif status >= 500:
                        raise self.unavailable("unreachable", f"the server failed (HTTP {status})")
                    else:
                        yield response
                        return
                assert auth is not None
                if not await auth.challenged(self.server, challenge, status):
                    raise self.unavailable("refused", f"the server refused the client (HTTP {status})")
        except httpx2.TimeoutException:
            raise self.unavailable("timeout", "the server did not answer in time") from None
        except httpx2.DecodingError as error:
            raise self.unavailable("protocol", f"a body that does not decode: {error}") from None
        except httpx2.HTTPError as error:
            raise self.unavailable("unreachable", f"{type(error).__name__}: {error}") from None

    async def _post(self, message: Message, on_notification: NotificationListener | None) -> Message:
        request_id = message["id"]
        try:
            async with self._stream("POST", message) as response:
                if message["method"] == "initialize":
                    self._session_id = response.headers.get("mcp-session-id")
                content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                if content_type == "application/json":
                    body = await self._read_body(response, message["method"])
                    answer = self._parse(body, message["method"])
                    if response.status_code == 400 and self.session_id is not None and not _answers(answer, request_id):
                        raise SessionExpired()  # "No valid session ID provided": the server restarted
                    return self._answer(answer, message["method"], response.status_code)
                if response.status_code == 400 and self.session_id is not None:
                    raise SessionExpired()
                if content_type != "text/event-stream":
                    raise self.unavailable(
                        "protocol", f"HTTP {response.status_code} with content type {content_type or 'none'!r}"
                    )
                last_event_id: str | None = None
                async for answer, event_id in self._events(response, request_id, on_notification):
                    last_event_id = event_id or last_event_id
                    if answer is not None:
                        return answer
        except BaseException as error:
            if not isinstance(error, Exception) and self.era is Era.HANDSHAKE and message["method"] != "initialize":
                self._cancel_soon(request_id)  # cancelled: tell the server, without waiting on one that hangs
            raise
        return await self._resume(request_id, last_event_id, message["method"], on_notification)

    def _parse(self, body: bytes, method: str) -> Any:
        """The JSON of an answer; broken JSON is the server's fault (`protocol`), never the caller's parse error."""
        try:
            return parse_json(body)
        except ParseError as error:
            raise self.unavailable("protocol", f"the answer to {method} is not JSON ({error.message})") from None

    def _answer(self, body: Any, method: str, status: int) -> Message:
        if isinstance(body, dict) and ("result" in body or "error" in body):
            return body
        raise self.unavailable("protocol", f"HTTP {status} without a JSON-RPC answer to {method}")

    async def _resume(
        self, request_id: Any, last_event_id: str | None, method: str, on_notification: NotificationListener | None
    ) -> Message:
        """The SSE stream ended before the answer: resume it with GET and `Last-Event-ID` (handshake era)."""
        for _ in range(_MAX_RESUMPTIONS):
            if last_event_id is None or self._session_id is None or self.era is not Era.HANDSHAKE:
                break
            await asyncio.sleep(min(self._reconnect_delay, self.server.read_timeout))
            resume = {"Accept": "text/event-stream", "Last-Event-ID": last_event_id}
            async with self._stream("GET", None, resume) as got:
                if got.status_code != 200:
                    break
                async for answer, event_id in self._events(got, request_id, on_notification):
                    last_event_id = event_id or last_event_id
                    if answer is not None:
                        return answer
        raise self.unavailable("closed", f"the stream ended before the answer to {method}")

    async def _events(
        self, response: httpx2.Response, request_id: Any, on_notification: NotificationListener | None
    ) -> AsyncIterator[tuple[Message | None, str | None]]:
        """Each SSE event's message: (the answer to `request_id` or None, the event id).

        An event past `REMOTE_MAX_MESSAGE_BYTES` ends the stream as it grows (`reason = "limit"`).
        """
        limit = client_settings.REMOTE_MAX_MESSAGE_BYTES
        try:
            async for event in httpx2.EventSource(response, max_event_size=limit):
                if event.retry is not None:
                    self._reconnect_delay = event.retry / 1000
                if not event.data:
                    yield None, event.id or None
                    continue
                message = parse_json(event.data.encode())
                if not isinstance(message, dict):
                    continue
                if "method" not in message and request_id_of(message) == request_id:
                    yield message, event.id or None
                    return
                if "method" in message and on_notification is None and request_id_of(message) is not None:
                    self.answer_soon(message, None, self._reply)  # the server's own stream: it names no request
                elif "method" in message:
                    reply = await self.dispatch(message, on_notification)
                    if reply is not None:
                        await self._reply(reply)
                yield None, event.id or None
        except httpx2.SSEError as error:
            if "limit" in str(error):
                raise over_limit(self.server.name, f"an event over {limit} bytes (REMOTE_MAX_MESSAGE_BYTES)") from None
            raise self.unavailable("protocol", f"a broken event stream: {error}") from None
        except (httpx2.StreamError, ParseError, ValueError) as error:
            raise self.unavailable("protocol", f"a broken event stream: {error}") from None

    def _cancel_soon(self, request_id: Any) -> None:
        """`_cancel` on its own task: whoever was cancelled goes at once, the server hears of it meanwhile."""
        with contextlib.suppress(RuntimeError):  # no loop to run it on any more
            task = asyncio.get_running_loop().create_task(self._cancel(request_id))
            self._cancels.add(task)
            task.add_done_callback(self._cancels.discard)

    async def _cancel(self, request_id: Any) -> None:
        params = {"requestId": request_id, "reason": "the caller went away"}
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.server.connect_timeout):
                await self._notify("notifications/cancelled", params)

    async def _listen(self) -> bool:
        if self.era is Era.STATELESS:
            params = self.listen_params()
            if not params["notifications"]:
                return False
            message: Message = {"jsonrpc": "2.0", "id": self.next_id(), "method": "subscriptions/listen"}
            message["params"] = params
            async with self._stream("POST", message) as response:
                if response.status_code != 200:
                    return False
                async for _ in self._events(response, message["id"], None):
                    pass
            return True
        async with self._stream("GET", None, {"Accept": "text/event-stream"}) as response:
            if response.status_code in (400, 405):
                return False
            self.stream_open.set()
            try:
                async for _ in self._events(response, None, None):
                    pass
            finally:
                self.stream_open.clear()
        return True
