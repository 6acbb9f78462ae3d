"""The transport-agnostic message handler: one parsed JSON-RPC message in, the reply out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from typing import Any, Final

from mcp_django.protocol.asking import ask_client, restore_inputs, session_key
from mcp_django.protocol.backend import Backend
from mcp_django.protocol.capabilities import advertised_capabilities
from mcp_django.protocol.context import (
    CLOSE_STREAM,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    Connection,
    Emit,
    RequestContext,
)
from mcp_django.protocol.errors import error_response, validation_problems
from mcp_django.protocol.features import METHODS, MethodSpec
from mcp_django.protocol.features.subscriptions import still_readable, wanted_by_session
from mcp_django.protocol.hooks import OperationHook, compose
from mcp_django.protocol.inputs import (
    INPUT_METHODS,
    InputRequired,
    PendingRequests,
    RequestStateCodec,
    ResponseRelay,
    binding_of,
)
from mcp_django.protocol.jsonrpc import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPError,
    Message,
    MethodNotFound,
    RequestId,
    request_id_of,
    result_response,
)
from mcp_django.protocol.meta import check_stateless_meta, era_of
from mcp_django.protocol.observers import MessageObserver, compose_observers
from mcp_django.protocol.pagination import paginate
from mcp_django.protocol.results import tool_error
from mcp_django.protocol.versions import (
    BATCH_VERSIONS,
    STATELESS_VERSIONS,
    Era,
)
from mcp_django.protocol.wire import wire

logger = logging.getLogger("mcp_django.protocol")

_DONE: Final = object()

_Serializer = Callable[[Mapping[str, Any]], dict[str, Any]]
_serializers: dict[tuple[str, str], _Serializer] = {}


def _with_extensions(written: dict[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """An `InitializeResult` with the `capabilities.extensions` its era's schema dropped (SEP-2133 clients read it)."""
    capabilities = result.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    if not extensions or not isinstance(written.get("capabilities"), dict):
        return written
    return {**written, "capabilities": {**written["capabilities"], "extensions": extensions}}


def _serialize_complete(method: str, version: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """`serialize_server_result(method, version, result, surface=complete_results)`, its lookups done once.

    The first call of a (method, version) goes through mcp-types itself (so an unknown pair raises as it
    does); later calls go straight to the row's pydantic validator and serializer, with the same arguments.
    """
    serialize = _serializers.get((method, version))
    if serialize is not None:
        return serialize(result)
    types = wire()
    data = types.serialize_server_result(method, version, result, surface=types.complete_results)
    row: Any = types.complete_results[(method, version)]
    import pydantic  # with the wire types (they are pydantic models): not when the package loads (issue 34)

    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(row)
    validate, dump = adapter.validator.validate_python, adapter.serializer.to_python

    def serialize_row(row: Mapping[str, Any]) -> dict[str, Any]:
        dumped: dict[str, Any] = dump(validate(row, by_name=False), by_alias=True, mode="json", exclude_none=True)
        return dumped

    _serializers[(method, version)] = serialize_row
    return data


class _Envelope:
    """The parts of a JSON-RPC message the handler routes on, checked once."""

    __slots__ = ("has_id", "method", "params", "request_id")

    def __init__(self, message: Any) -> None:
        if not isinstance(message, dict):
            raise InvalidRequest("Invalid request: expected a JSON-RPC object")
        self.has_id = "id" in message
        self.request_id = request_id_of(message)
        if self.has_id and self.request_id is None:
            raise InvalidRequest("Invalid request: id must be a string or an integer")
        if message.get("jsonrpc") != "2.0":
            raise InvalidRequest('Invalid request: jsonrpc must be "2.0"')
        method = message.get("method")
        if "method" in message and not isinstance(method, str):
            raise InvalidRequest("Invalid request: method must be a string")
        self.method: str | None = method
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            raise InvalidParams("Invalid params: params must be an object")
        self.params: dict[str, Any] = params or {}
        if method is None and not ("result" in message or "error" in message):
            raise InvalidRequest("Invalid request: neither a request, a notification nor a response")


class MessageHandler:
    """Serves the MCP methods of one endpoint over any transport.

    Args:
        backend: what serves tools, resources and prompts.
        server_info: the `Implementation` object naming this server.
        instructions: optional guidance for the client's model.
        page_size: items per page of list results.
        cache_ttl_ms: `ttlMs` on cacheable stateless results.
        cache_scope: `cacheScope` on cacheable stateless results (`"public"` or `"private"`).
        hooks: wrap every operation on the backend, outermost first (the admin's overlay, the
            interceptor chain); composed once, here.
        extra_methods: more request methods to serve, for protocol extensions. mcp-types does not
            know them, so each `impl` checks its own params; a core method's name is a `ValueError`.
        extensions: protocol extensions to advertise, by identifier, under `capabilities.extensions`
            (SEP-2133); in the handshake era, whose schema has no `extensions`, under
            `capabilities.experimental` too, where clients of that schema look.
        stateless_extensions: identifiers among `extensions` defined for the stateless era only, which
            `initialize` does not advertise.
        state_codec: signs the `requestState` of `input_required` results; None uses a random
            per-process key.
        client_request_timeout: seconds a handshake-era server-to-client request waits for its answer.
        notifications: whether the deployment delivers server notifications to listening clients
            (handshake sessions' streams, `subscriptions/listen`); advertises `listChanged` and
            resource subscriptions, and serves `subscriptions/listen`.
        relay: carries clients' answers to server-to-client requests between worker processes.
        observers: watch every message served and every channel opened and closed (telemetry);
            an observation is current while its message is served.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        server_info: Mapping[str, Any],
        instructions: str | None = None,
        page_size: int = 100,
        cache_ttl_ms: int = 0,
        cache_scope: str = "private",
        hooks: Sequence[OperationHook] = (),
        extra_methods: Sequence[MethodSpec] = (),
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
        stateless_extensions: Collection[str] = (),
        state_codec: RequestStateCodec | None = None,
        client_request_timeout: float = 300.0,
        notifications: bool = False,
        relay: ResponseRelay | None = None,
        observers: Sequence[MessageObserver] = (),
    ) -> None:
        wire()  # the wire types: loaded by the first handler, not when Django starts
        self.backend = backend
        self.server_info = dict(server_info)
        self.instructions = instructions
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.hooks = tuple(hooks)
        self.hook = compose(self.hooks)
        clashes = sorted(spec.name for spec in extra_methods if spec.name in METHODS)
        if clashes:
            raise ValueError(f"extra_methods may not replace core methods: {', '.join(clashes)}")
        self._methods = {**METHODS, **{spec.name: spec for spec in extra_methods}}
        self._untyped = frozenset(spec.name for spec in extra_methods)
        self.state_codec = state_codec or RequestStateCodec()
        self.client_request_timeout = client_request_timeout
        self.pending = PendingRequests(relay)
        self.observers = tuple(observers)
        self.observer = compose_observers(self.observers)
        self.features, self._capabilities = advertised_capabilities(
            backend.capabilities(),
            notifications=notifications,
            extensions=extensions,
            stateless_extensions=stateless_extensions,
        )
        self._inflight: dict[tuple[str, RequestId], asyncio.Task[Any]] = {}

    # -- public entry points -------------------------------------------------------------------------

    async def handle(self, message: Any, connection: Connection) -> Message | list[Message] | None:
        """Answer one parsed JSON-RPC message (or a 2025-03-26 batch); None when there is nothing to send."""
        if isinstance(message, list):
            return await self._handle_batch(message, connection)
        return await self._handle_one(message, connection, None)

    async def stream(self, message: Any, connection: Connection) -> AsyncIterator[Message]:
        """Yield the notifications a request emits while it runs, then its response.

        Closing the iterator early (the client went away) cancels the request.
        """
        if isinstance(message, list):
            reply = await self._handle_batch(message, connection)
            for item in [reply] if isinstance(reply, dict) else reply or ():
                yield item
            return
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.ensure_future(self._handle_one(message, connection, queue.put))
        task.add_done_callback(lambda _: queue.put_nowait(_DONE))
        key = self._inflight_key(message, connection)
        if key is not None:
            self._inflight[key] = task
        try:
            while (item := await queue.get()) is not _DONE:
                if item is CLOSE_STREAM:
                    # In order: everything emitted before it has been yielded, nothing after it has.
                    if connection.close_stream is not None:
                        connection.close_stream()
                    continue
                yield item
            if not task.cancelled() and (reply := task.result()) is not None:
                yield reply
        finally:
            if key is not None:
                self._inflight.pop(key, None)
            task.cancel()

    def may_stream(self, message: Any, connection: Connection) -> bool:
        """Whether serving `message` could emit anything before its response, and so needs `stream()`.

        False when it provably cannot: a stateless request that asks for no progress and no log messages,
        of a method that does not stream (`MethodSpec.streams`: `subscriptions/listen`, an extension's).
        Transports answer those with `handle()`, which runs the request inline (no task, no queue).
        """
        if not isinstance(message, dict) or "id" not in message:
            return False
        params = message.get("params")
        if era_of(params, connection)[0] is Era.HANDSHAKE:
            return True
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict):
            return False
        method = message.get("method")
        spec = self._methods.get(method) if isinstance(method, str) else None
        return "progressToken" in meta or META_LOG_LEVEL in meta or (spec is not None and spec.streams)

    async def delivers(self, note: Message, connection: Connection) -> bool:
        """Whether a server notification goes to a handshake session's channel (its GET stream, its socket).

        It does when the session takes its kind (`wanted_by_session`: list changes of served
        features, updates of the URIs it subscribed to) and, for a resource update, while the
        caller may still read the resource (its scope is checked again, now).
        """
        session = connection.session
        if session is None or not wanted_by_session(note, session.subscriptions, self.features):
            return False
        return await still_readable(self.backend, note, connection, Era.HANDSHAKE, session.protocol_version)

    def capabilities(self, era: Era) -> dict[str, Any]:
        """Return the `ServerCapabilities` advertised in `era`."""
        return {name: dict(value) for name, value in self._capabilities[era].items()}

    def page(self, key: str, items: Sequence[Any], params: Mapping[str, Any]) -> dict[str, Any]:
        """Return one page of a list result under `key`, with `nextCursor` when more follow."""
        page, next_cursor = paginate(items, params, self.page_size)
        # Copies: sources hand out what they hold (a provider's dicts, a declaration's wire form), and
        # hooks may rewrite the result in place.
        result: dict[str, Any] = {key: [dict(item) if isinstance(item, Mapping) else item for item in page]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # -- dispatch -----------------------------------------------------------------------------------

    async def _handle_batch(self, batch: list[Any], connection: Connection) -> Message | list[Message] | None:
        era, version = era_of(None, connection)
        # Where `initialize` opens sessions, a batch needs one: before it there is no negotiated
        # version, only the headerless default, and every transport refuses session-less batches alike.
        if (
            era is not Era.HANDSHAKE
            or version not in BATCH_VERSIONS
            or (connection.sessions and connection.session is None)
        ):
            return InvalidRequest("Invalid request: batches are only allowed in protocol 2025-03-26").to_response(None)
        if not batch:
            return InvalidRequest("Invalid request: empty batch").to_response(None)
        replies = await asyncio.gather(*(self._handle_one(item, connection, None) for item in batch))
        answered = [reply for reply in replies if reply is not None]
        return answered or None

    def opened(self, connection: Connection) -> None:
        """Tell the observers that a channel carrying many messages (a WebSocket, stdio) opened."""
        if self.observer is not None:
            self.observer.opened(connection)

    def closed(self, connection: Connection) -> None:
        """Tell the observers that the channel of `connection` closed."""
        if self.observer is not None:
            self.observer.closed(connection)

    async def _handle_one(self, message: Any, connection: Connection, emit: Emit | None) -> Message | None:
        if self.observer is None:
            return await self._serve_one(message, connection, emit)
        with self.observer.observe(message, connection) as observation:
            reply = await self._serve_one(message, connection, emit)
            observation.answered(reply)
            return reply

    async def _serve_one(self, message: Any, connection: Connection, emit: Emit | None) -> Message | None:
        request_id = request_id_of(message)
        try:
            envelope = _Envelope(message)
            if envelope.method is None:
                await self.pending.route(message, session_key(connection))
                return None
            if not envelope.has_id:
                self._notify(envelope.method, envelope.params, connection)
                return None
            assert request_id is not None
            ctx, spec = self._prepare(envelope, connection, emit)
            result = await self.perform(spec, envelope.params, ctx)
            return result_response(request_id, self._finish(spec, result, ctx))
        except MCPError as error:
            if isinstance(message, dict) and "id" not in message and "method" in message:
                return None  # a malformed notification gets no reply
            params = message.get("params") if isinstance(message, dict) else None
            return error_response(error, request_id, era_of(params, connection)[0])
        except Exception as error:
            logger.exception("Unhandled error while serving %r", _method_of(message))
            return error_response(error, request_id, Era.HANDSHAKE)

    def _prepare(
        self, envelope: _Envelope, connection: Connection, emit: Emit | None
    ) -> tuple[RequestContext, MethodSpec]:
        method, params = envelope.method, envelope.params
        assert method is not None
        era, version = era_of(params, connection)
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if era is Era.STATELESS:
            version, log_level = check_stateless_meta(params)
            capabilities, client_info = meta[META_CLIENT_CAPABILITIES], meta.get(META_CLIENT_INFO)
        else:
            session = connection.session
            log_level = session.log_level if session else None
            capabilities = session.client_capabilities if session else {}
            client_info = session.client_info if session else None
        spec = self._methods.get(method)
        if spec is None or era not in spec.eras or (spec.feature is not None and spec.feature not in self.features):
            raise MethodNotFound(f"Method not found: {method}")
        if method not in self._untyped:
            self._validate_params(method, version, params)
        progress_token = meta.get("progressToken")
        ctx = RequestContext(
            method=method,
            request_id=envelope.request_id,
            era=era,
            protocol_version=version,
            connection=connection,
            client_capabilities=capabilities,
            client_info=client_info,
            meta=meta,
            log_level=log_level,
            progress_token=progress_token if isinstance(progress_token, (str, int)) else None,
            emit=emit,
        )
        if era is Era.HANDSHAKE and emit is not None and connection.streaming:
            ctx.ask = lambda requests: ask_client(
                self.pending, self.client_request_timeout, ctx, requests, self.observer
            )
        elif era is Era.STATELESS and method in INPUT_METHODS:
            if "requestState" in params:  # only a retry carries a state to check the binding of
                # Bound to the params as the client sent them, before any interceptor rewrites them.
                ctx.state_binding = binding_of(connection.principal_id, method, params)
            restore_inputs(self.state_codec, ctx, params)
        return ctx, spec

    async def perform(self, spec: MethodSpec | str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Run a method (spec or name), through the hook if an operation: how an extension re-enters for `ctx`."""
        spec = self._methods[spec] if isinstance(spec, str) else spec
        if self.hook is None or not spec.operation:
            return await self._run(spec, params, ctx)

        async def call_next(rewritten: dict[str, Any]) -> dict[str, Any]:
            return await self._run(spec, rewritten, ctx)

        return await self.hook(spec.name, params, ctx, call_next)

    async def _run(self, spec: MethodSpec, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        try:
            return await spec.impl(self, params, ctx)
        except InputRequired as asked:
            if ctx.era is not Era.STATELESS or spec.name not in INPUT_METHODS:
                raise RuntimeError(f"{spec.name} asked for input it cannot ask for") from None
            pending = {key: request["method"] for key, request in asked.requests.items()}
            state = {"answers": ctx.answers, "state": ctx.state, "pending": pending}
            return {
                "resultType": "input_required",
                "inputRequests": asked.requests,
                "requestState": self.state_codec.mint(
                    binding_of(ctx.connection.principal_id, spec.name, params), state
                ),
            }

    def _finish(self, spec: MethodSpec, result: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        if ctx.era is Era.STATELESS:
            result.setdefault("resultType", "complete")
            result["_meta"] = {**(result.get("_meta") or {}), META_SERVER_INFO: self.server_info}
            if spec.cacheable and result["resultType"] == "complete":
                result.setdefault("ttlMs", self.cache_ttl_ms)
                result.setdefault("cacheScope", self.cache_scope)
        if spec.name in self._untyped or result.get("resultType") == "task":
            return result  # an extension's result (a `CreateTaskResult`: its extension checks it), not mcp-types'
        types = wire()
        import pydantic  # loaded with the wire types, not with the package (issue 34)

        try:
            if result.get("resultType") == "input_required":
                return types.serialize_server_result(
                    spec.name, ctx.protocol_version, result, surface=types.server_results
                )
            written = types.known_result(spec.name, ctx.protocol_version, result)  # text answers, without pydantic
            out = written if written is not None else _serialize_complete(spec.name, ctx.protocol_version, result)
            return _with_extensions(out, result) if spec.name == "initialize" else out
        except pydantic.ValidationError as error:
            logger.error("Invalid %s result: %s", spec.name, error)
            if spec.name == "tools/call":
                return self._finish(spec, tool_error("The tool returned an invalid result"), ctx)
            raise InternalError() from None

    # -- validation -----------------------------------------------------------------------------------

    @staticmethod
    def _validate_params(method: str, version: str, params: Mapping[str, Any]) -> None:
        types = wire()
        if types.known_valid(method, version, params):
            return  # the common shapes, checked without building mcp-types' models (`shapes.py`)
        import pydantic  # loaded with the wire types, not with the package (issue 34)

        try:
            types.validate_client_request(method, version, params)
        except pydantic.ValidationError as error:
            location, problem, *_ = validation_problems(error, skip=("params",))[0]
            raise InvalidParams(
                f"Invalid params: {location}: {problem}" if location else f"Invalid params: {problem}"
            ) from None
        except (KeyError, ValueError):
            raise MethodNotFound(f"Method not found: {method}") from None

    # -- notifications --------------------------------------------------------------------------------

    def _notify(self, method: str, params: Mapping[str, Any], connection: Connection) -> None:
        era, version = era_of(params, connection)
        version = STATELESS_VERSIONS[-1] if era is Era.STATELESS else version
        types = wire()
        if not types.known_valid_notification(method, version, params):
            import pydantic  # loaded with the wire types, not with the package (issue 34)

            try:
                types.validate_client_notification(method, version, params)
            except (KeyError, ValueError, pydantic.ValidationError):
                return  # unknown or malformed notifications are dropped, as JSON-RPC requires
        session = connection.session
        if method == "notifications/initialized" and session is not None and not session.initialized:
            session.initialized = True
            session.changed = True
        elif method == "notifications/cancelled":
            key = session_key(connection)
            task = self._inflight.get((key, params["requestId"])) if key is not None else None
            if task is not None:
                task.cancel()

    def _inflight_key(self, message: Any, connection: Connection) -> tuple[str, RequestId] | None:
        key = session_key(connection)
        if key is None or not isinstance(message, dict) or "method" not in message:
            return None
        request_id = message.get("id")
        return (key, request_id) if isinstance(request_id, (str, int)) else None


def _method_of(message: Any) -> Any:
    return message.get("method") if isinstance(message, dict) else None
