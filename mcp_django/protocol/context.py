"""Per-connection and per-request state the protocol core works with.

`Connection` is what a transport hands the core with each message: who is
calling, through which endpoint, the handshake session if there is one, and the
protocol version header when the transport has one. `RequestContext` is built by
the core for one request and is what features and user code see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final

from mcp_django.protocol.inputs import CAPABILITY_OF, INPUT_METHODS, InputRequired
from mcp_django.protocol.jsonrpc import (
    Message,
    MissingClientCapability,
    RequestId,
    URLElicitationRequired,
    notification,
)
from mcp_django.protocol.versions import LATEST_HANDSHAKE_VERSION, Era

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
"""The `_meta` keys of the stateless era's per-request metadata (and of a result's server info)."""

URL_ELICITATION_SINCE: Final = "2025-11-25"
"""The first protocol version with URL-mode elicitation."""

LOG_LEVELS: Final[tuple[str, ...]] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, least severe first, as MCP's `LoggingLevel` lists them."""
_SEVERITY: Final[Mapping[str, int]] = {level: rank for rank, level in enumerate(LOG_LEVELS)}

Emit = Callable[[Message], Awaitable[None]]
"""Sends one message on the stream of the request being served."""
NotificationSource = Callable[[], Awaitable[AsyncIterator[Message]]]
"""Subscribes to the server notifications sent to the connection's endpoint.

Awaiting it joins the subscription; the iterator it returns yields everything sent from then on,
and closing the iterator leaves it.
"""
CLOSE_STREAM: Final[Message] = {"jsonrpc": "2.0", "method": "mcp_django/closeStream"}
"""Emitted by `RequestContext.close_stream`; `MessageHandler.stream` acts on it in order and never yields it."""
Ask = Callable[[Mapping[str, Message]], Awaitable[dict[str, Any]]]
"""Sends server-to-client requests and waits for their results (handshake era)."""


async def aclose(iterator: AsyncIterator[Any]) -> None:
    """Close an async iterator early when it can be closed (an async generator does; closing the core's
    `MessageHandler.stream` cancels its request, closing a notification inbox leaves the subscription)."""
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()


@dataclasses.dataclass(slots=True)
class SessionState:
    """What a handshake-era session remembers between requests; transports persist it.

    The core sets `changed` whenever it mutates the state so a transport knows to save it.
    """

    protocol_version: str
    client_capabilities: dict[str, Any] = dataclasses.field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    initialized: bool = False
    subscriptions: tuple[str, ...] = ()
    session_id: str | None = None
    changed: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ParamHeaders:
    """A stateless-era `tools/call`'s `Mcp-Param-*` headers, as its transport received them with the call.

    The backend checks them against the `x-mcp-header` arguments of the tool it finds, whatever its
    source (`protocol.meta.check_param_headers`): against the arguments as the client sent them, so an
    interceptor that rewrites an argument on its way in does not make a mismatch.

    Args:
        headers: each `Mcp-Param-<suffix>` header's value (trimmed, not yet decoded), by lower-case suffix.
        arguments: `params.arguments` of the call as it arrived.
    """

    headers: Mapping[str, str]
    arguments: Any


@dataclasses.dataclass(slots=True)
class Connection:
    """What the transport knows about the sender of a message.

    Args:
        principal: the authenticated caller (a Django user at the edges); opaque to the core.
        endpoint: the endpoint the message arrived on (opaque to the core).
        session: the handshake session the message belongs to, if any. The core
            creates one on `initialize` when `sessions` is true.
        version_header: the `MCP-Protocol-Version` header, for transports that have one.
        transport: a short name (`"http"`, `"websocket"`, `"stdio"`, `"memory"`).
        sessions: whether `initialize` should open a session.
        principal_id: a stable string naming the principal (None for anonymous callers);
            `input_required` states are bound to it.
        streaming: whether messages emitted during a request reach the client before its
            response (False for a transport that can only answer in one piece); only then can a
            handshake-era request ask the client for input.
        notifications: opens the stream of server notifications for `subscriptions/listen`
            (None when the transport cannot deliver any).
        close_stream: ends the current response stream while the request goes on, for transports
            whose clients can resume (handshake-era SSE with `Last-Event-ID`); None elsewhere.
        site: the absolute URL of the site's root as the client reached it (`https://host/`), for
            links the client is sent to open (a URL-mode elicitation); None when the transport has
            no such address (stdio).
        param_headers: a stateless-era `tools/call`'s `Mcp-Param-*` headers, for a transport carrying
            one request that has headers (HTTP); None where no such headers apply (the handshake era).
    """

    principal: Any = None
    endpoint: Any = None
    session: SessionState | None = None
    version_header: str | None = None
    transport: str = "memory"
    sessions: bool = True
    principal_id: str | None = None
    streaming: bool = True
    notifications: NotificationSource | None = None
    close_stream: Callable[[], None] | None = None
    site: str | None = None
    param_headers: ParamHeaders | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(slots=True)
class RequestContext:
    """Everything known about one request while it is being served."""

    method: str
    request_id: RequestId | None
    era: Era
    protocol_version: str
    connection: Connection
    client_capabilities: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    client_info: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    log_level: str | None = None
    progress_token: str | int | None = None
    emit: Emit | None = None
    ask: Ask | None = None
    answers: dict[str, Any] = dataclasses.field(default_factory=dict)
    state: dict[str, Any] = dataclasses.field(default_factory=dict)
    asked: int = 0
    state_binding: str = ""

    @property
    def principal(self) -> Any:
        return self.connection.principal

    @property
    def endpoint(self) -> Any:
        return self.connection.endpoint

    @property
    def session(self) -> SessionState | None:
        return self.connection.session

    async def send_notification(self, method: str, params: dict[str, Any] | None = None) -> bool:
        """Send a notification on this request's stream; False when the request cannot stream."""
        if self.emit is None:
            return False
        await self.emit(notification(method, params))
        return True

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Send `notifications/progress` if the client asked for progress; False otherwise."""
        if self.progress_token is None:
            return False
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return await self.send_notification("notifications/progress", params)

    def wants_log(self, level: str) -> bool:
        """True when a message at `level` should reach the client.

        Stateless requests get log messages only when they name a level; handshake
        sessions get everything until `logging/setLevel` raises the threshold.
        """
        if self.log_level is None:
            return self.era is Era.HANDSHAKE
        return _SEVERITY.get(level, 0) >= _SEVERITY[self.log_level]

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send `notifications/message` when the client's level admits it; False otherwise."""
        if level not in _SEVERITY:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if not self.wants_log(level):
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return await self.send_notification("notifications/message", params)

    async def close_stream(self) -> bool:
        """Ask the client to reconnect: end this request's stream now, keep running, resume later.

        The stream ends after everything emitted before this call. Returns False when the transport
        cannot (the request then simply goes on streaming).
        """
        if self.connection.close_stream is None or self.emit is None:
            return False
        await self.emit(CLOSE_STREAM)
        return True

    async def request_input(self, requests: Mapping[str, Message]) -> dict[str, Any]:
        """Ask the client for input and return its answers, keyed as asked.

        Args:
            requests: input requests by key, each `{"method": ..., "params": ...}` with method
                `elicitation/create`, `sampling/createMessage` or `roots/list`.

        Raises:
            MissingClientCapability: the client did not declare what a request needs.
            ClientRequestError: the client answered with an error or not in time (handshake era).
            RuntimeError: this request cannot ask (a stateless method other than tools/call,
                resources/read and prompts/get, or a handshake request with no stream).
        """
        for request in requests.values():
            self.require_capability(CAPABILITY_OF[request["method"]])
        if self.era is Era.HANDSHAKE:
            if self.ask is None:
                raise RuntimeError(f"{self.method} cannot ask the client for input: it has no stream to ask on")
            return await self.ask(requests)
        if self.method not in INPUT_METHODS:
            raise RuntimeError(f"{self.method} cannot ask the client for input")
        answers = {
            key: self.answers[key] for key, request in requests.items() if _answers(request, self.answers.get(key))
        }
        if len(answers) < len(requests):
            raise InputRequired({key: request for key, request in requests.items() if key not in answers})
        return answers

    async def elicit(self, message: str, requested_schema: Mapping[str, Any], *, key: str | None = None) -> Any:
        """Ask the user a question through the client (`elicitation/create`); returns the `ElicitResult`."""
        request = {"method": "elicitation/create", "params": {"message": message, "requestedSchema": requested_schema}}
        return await self._ask_one(request, key)

    def can_elicit_url(self) -> bool:
        """True when the client declared URL-mode elicitation (`elicitation: {url: {}}`, 2025-11-25 on)."""
        elicitation = self.client_capabilities.get("elicitation")
        if not (isinstance(elicitation, Mapping) and isinstance(elicitation.get("url"), Mapping)):
            return False
        return self.era is Era.STATELESS or self.protocol_version >= URL_ELICITATION_SINCE

    async def elicit_url(self, message: str, url: str, *, elicitation_id: str, key: str | None = None) -> Any:
        """Send the user to `url`, out of band (URL-mode elicitation), before this request can go on.

        Stateless era: an `input_required` result asks it; the retried request gets the client's
        `ElicitResult` back (`accept` means the user agreed to open the URL, not that they are done).
        Handshake era (2025-11-25): the request ends with `URLElicitationRequired` (-32042), and the
        client retries it once the user is done, as the spec has servers do when a request cannot go on.

        Raises:
            URLElicitationRequired: in the handshake era.
            MissingClientCapability: the client did not declare URL-mode elicitation.
        """
        if not self.can_elicit_url():
            raise MissingClientCapability(
                "This request needs the client capability 'elicitation.url'",
                data={"requiredCapabilities": {"elicitation": {"url": {}}}},
            )
        if self.era is Era.HANDSHAKE:
            raise URLElicitationRequired(
                [{"mode": "url", "elicitationId": elicitation_id, "url": url, "message": message}]
            )
        request = {"method": "elicitation/create", "params": {"mode": "url", "message": message, "url": url}}
        return await self._ask_one(request, key)

    async def sample(
        self, messages: list[Mapping[str, Any]], *, max_tokens: int, key: str | None = None, **params: Any
    ) -> Any:
        """Ask the client's model for a completion (`sampling/createMessage`); returns the `CreateMessageResult`."""
        request = {
            "method": "sampling/createMessage",
            "params": {"messages": messages, "maxTokens": max_tokens, **params},
        }
        return await self._ask_one(request, key)

    async def list_roots(self, *, key: str | None = None) -> Any:
        """Ask the client for its roots (`roots/list`); returns the `ListRootsResult`."""
        return await self._ask_one({"method": "roots/list", "params": {}}, key)

    async def _ask_one(self, request: Message, key: str | None) -> Any:
        self.asked += 1
        key = key or f"input-{self.asked}"
        return (await self.request_input({key: request}))[key]

    def has_capability(self, name: str) -> bool:
        """True when the client declared the top-level capability `name` (e.g. `"sampling"`)."""
        return name in self.client_capabilities

    def require_capability(self, name: str) -> None:
        """Raise `MissingClientCapability` (-32021) unless the client declared `name`."""
        if not self.has_capability(name):
            raise MissingClientCapability(
                f"This request needs the client capability '{name}'",
                data={"requiredCapabilities": {name: {}}},
            )


def _answers(request: Message, response: Any) -> bool:
    """True when `response` is a well-formed answer to `request` (malformed ones are asked again)."""
    if not isinstance(response, dict):
        return False
    import pydantic
    from mcp_types.methods import validate_client_result  # the wire types: loaded with the first message (wire.py)

    try:
        validate_client_result(request["method"], LATEST_HANDSHAKE_VERSION, response)
    except (KeyError, ValueError, pydantic.ValidationError):
        return False
    return True
