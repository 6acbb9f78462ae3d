"""A remote's questions, asked of the caller: what a forwarded request hears, and who answers it.

A forwarded request's listener (`Relay`) passes the remote's progress and log messages on to the
caller. A handshake-era remote also asks during a request (`sampling/createMessage`,
`elicitation/create`, `roots/list`: the gateway declared them, `client.config.RELAYED_CAPABILITIES`),
and the caller of that request answers (`AskingRelay`), in its era, under its own rules:

- a handshake-era caller is asked on its own stream (`RequestContext.request_input`), at once;
- a 2026-07-28 caller is asked with an `input_required` result. The remote waits on its stream
  meanwhile, so the forwarded request is parked (`ParkedCall`): it runs on in this process, under a
  random id the caller's sealed `requestState` carries; the retried request finds it, its answer goes
  to the remote, and the call goes on to the next question or to its result. A retry that reaches
  another worker, or comes after `CLIENT_REQUEST_TIMEOUT`, finds nothing and is refused.

A question the caller cannot answer is refused with an error the remote sees: the caller did not
declare the capability, its request cannot ask, or it must not be sent to the URL (`screen_questions`).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from mcp_django.client.remote import NotForwardable, RemoteConnection
from mcp_django.conf import mcp_settings
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.protocol import jsonrpc
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.inputs import CAPABILITY_OF, ClientRequestError, InputRequired
from mcp_django.protocol.jsonrpc import Message, MissingClientCapability

_PARKED_KEY: Final = "gateway.parked"
_QUESTION_KEY: Final = "gateway.question-"
_ERA_FIELDS: Final = ("resultType", "ttlMs", "cacheScope")

Forwarded = Callable[["Relay"], Coroutine[Any, Any, dict[str, Any]]]
"""Sends the forwarded request with the given listener and returns its result (`forwarding.forward`)."""

_parked: dict[str, ParkedCall] = {}
"""The calls waiting in this process for their 2026-07-28 caller to come back with an answer, by id."""


def web_url(url: Any) -> bool:
    """Whether `url` is an absolute http(s) URL, a single line: the only kind a remote may send a user to."""
    if not isinstance(url, str) or not url.isprintable() or " " in url:
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def screen_questions(asked: Mapping[str, Any], ctx: RequestContext, server: str) -> None:
    """Refuse a remote's questions that would send the caller's user to a URL they must not be sent to.

    A URL-mode elicitation goes on only with an http(s) URL (never `javascript:`, `data:` or a page of
    another scheme) and only to a caller that declared URL-mode elicitation.

    Raises:
        BackendUnavailable: (`reason = "protocol"`) a URL that is not http(s).
        NotForwardable: the caller did not declare URL-mode elicitation.
    """
    for request in asked.values():
        params = request.get("params") if isinstance(request, Mapping) else None
        if not (isinstance(params, Mapping) and request.get("method") == "elicitation/create"):
            continue
        if params.get("mode") == "url":
            _screen_url(params.get("url"), ctx, server)


def _screen_url(url: Any, ctx: RequestContext, server: str) -> None:
    if not web_url(url):
        raise BackendUnavailable(server, "protocol", "it asks to send the user to a URL that is not http(s)")
    if not ctx.can_elicit_url():
        raise NotForwardable("The backend asks to send the user to a URL; this caller did not declare URL elicitation")


def screen_url_error(error: RemoteError, ctx: RequestContext, server: str) -> None:
    """Refuse a remote's `URLElicitationRequired` (-32042) unless every URL in it may reach this caller (as above)."""
    data = error.data if isinstance(error.data, Mapping) else {}
    elicitations = data.get("elicitations")
    for elicitation in elicitations if isinstance(elicitations, list) else [None]:
        _screen_url(elicitation.get("url") if isinstance(elicitation, Mapping) else None, ctx, server)


class Relay:
    """The listener of a forwarded request's notifications: its progress and log messages go on to the caller.

    Anything else the remote says on the request's stream (a `list_changed`, a resource update) is
    about the server, not the request: it goes to the connection's listeners, as if sent on the
    server's own stream (an endpoint passes it on to its listening clients). `ctx` is the caller's
    request now being served (None while a parked call waits for its caller: nothing reaches it then).
    """

    def __init__(self, ctx: RequestContext | None, connection: RemoteConnection) -> None:
        self.ctx = ctx
        self.connection = connection

    async def __call__(self, message: Message) -> None:
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        method = message.get("method")
        ctx = self.ctx
        if method == "notifications/progress":
            if ctx is not None and ctx.progress_token is not None:
                await ctx.send_notification("notifications/progress", {**params, "progressToken": ctx.progress_token})
        elif method == "notifications/message":
            if ctx is not None and ctx.wants_log(str(params.get("level"))):
                await ctx.send_notification("notifications/message", params)
        else:
            await self.connection.dispatch(message)


class AskingRelay(Relay):
    """A `Relay` that also has the remote's questions answered by the caller (a `client.streams.Asker`).

    With `parked`, the caller is a 2026-07-28 one: the question waits there for the caller's next round.
    """

    def __init__(self, ctx: RequestContext | None, connection: RemoteConnection, parked: ParkedCall | None = None):
        super().__init__(ctx, connection)
        self.parked = parked

    async def ask(self, request: Message) -> Message:
        """The reply to the remote's `request`: the caller's answer, or why it cannot be asked."""
        method, params = request.get("method"), request.get("params")
        question: dict[str, Any] = {"method": method}
        if isinstance(params, dict):
            question["params"] = params
        ctx = self.ctx
        if self.parked is not None:
            reply = await self.parked.asked(question)
        elif ctx is None:  # pragma: no cover (only a parked call's relay is ever without its caller)
            reply = {"error": {"code": jsonrpc.INTERNAL_ERROR, "message": "No caller to ask"}}
        else:
            refused = refusal(question, ctx, self.connection.server.name)
            reply = {"error": refused} if refused is not None else await answer_now(question, ctx)
        return {"jsonrpc": "2.0", "id": request.get("id"), **reply}


def refusal(question: Mapping[str, Any], ctx: RequestContext, server: str) -> dict[str, Any] | None:
    """The error the remote gets for `question` when its caller may not be asked it; None when it may."""
    method = question.get("method")
    capability = CAPABILITY_OF.get(method) if isinstance(method, str) else None
    if capability is None:
        return {"code": jsonrpc.METHOD_NOT_FOUND, "message": f"The gateway does not pass on {method}"}
    if not ctx.has_capability(capability):
        message = f"The gateway's caller cannot answer {method}: it did not declare the {capability} capability"
        return {"code": jsonrpc.METHOD_NOT_FOUND, "message": message}
    try:
        screen_questions({"question": question}, ctx, server)
    except (BackendUnavailable, NotForwardable) as error:
        return {"code": jsonrpc.INVALID_PARAMS, "message": f"The gateway refuses this question: {error}"}
    return None


async def answer_now(question: Message, ctx: RequestContext) -> dict[str, Any]:
    """A handshake-era caller's answer to `question`, asked on its stream: `{"result": ...}` or `{"error": ...}`."""
    try:
        answers = await ctx.request_input({"question": question})
    except ClientRequestError as error:  # the caller's own error, or no answer in time (0)
        return {"error": {"code": error.code or jsonrpc.INTERNAL_ERROR, "message": error.message}}
    except (MissingClientCapability, RuntimeError) as error:
        return {"error": _cannot_ask(error)}
    return {"result": answers["question"]}


async def asked_in_rounds(ctx: RequestContext, connection: RemoteConnection, forwarded: Forwarded) -> dict[str, Any]:
    """`forwarded`, the remote's questions asked of a 2026-07-28 caller in `input_required` rounds.

    The first round starts the call; a retry carrying a parked call's id resumes it.

    Raises:
        InputRequired: the remote asks: the call is parked until the caller answers.
        NotForwardable: the retry names a call that is no longer waiting here.
    """
    call = ParkedCall.resumed(ctx)
    if call is None:
        call = ParkedCall(ctx, connection, forwarded)
    return await call.outcome(ctx)


class ParkedCall:
    """A forwarded request whose 2026-07-28 caller answers the remote's questions: it runs on between the rounds."""

    def __init__(self, ctx: RequestContext, connection: RemoteConnection, forwarded: Forwarded) -> None:
        self.id = secrets.token_urlsafe(18)
        self.principal_id = ctx.connection.principal_id
        self.loop = asyncio.get_running_loop()
        self.relay = AskingRelay(ctx, connection, self)
        self.questions: asyncio.Queue[tuple[str, Message, asyncio.Future[dict[str, Any]]]] = asyncio.Queue()
        self.current: tuple[str, Message, asyncio.Future[dict[str, Any]]] | None = None
        self.count = 0
        self.expiry: asyncio.TimerHandle | None = None
        self.task = self.loop.create_task(forwarded(self.relay))

    @classmethod
    def resumed(cls, ctx: RequestContext) -> ParkedCall | None:
        """The call the retried request `ctx` comes back to (None on a first round).

        Raises:
            NotForwardable: it is no longer waiting here (expired, or this is another worker).
        """
        parked_id = ctx.state.pop(_PARKED_KEY, None)
        if parked_id is None:
            return None
        call = _parked.pop(parked_id, None) if isinstance(parked_id, str) else None
        if (
            call is None
            or call.loop is not asyncio.get_running_loop()
            or call.principal_id != ctx.connection.principal_id
        ):
            raise NotForwardable(
                "The remote server's question is no longer waiting: it is answered within CLIENT_REQUEST_TIMEOUT, "
                "by the worker that asked it"
            )
        if call.expiry is not None:
            call.expiry.cancel()
        return call

    async def asked(self, question: Message) -> dict[str, Any]:
        """What the caller answers `question` with in its next round (called by the relay, on the call's task)."""
        answer: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.count += 1
        await self.questions.put((f"{_QUESTION_KEY}{self.count}", question, answer))
        return await answer

    async def outcome(self, ctx: RequestContext) -> dict[str, Any]:
        """Serve the caller's round `ctx`: its answers go to the remote, until the result or the next question.

        Raises:
            InputRequired: a question this round has no answer to (the call is parked).
        """
        self.relay.ctx = ctx
        try:
            while True:
                if self.current is None:
                    self.current = await self._next()
                    if self.current is None:
                        result: dict[str, Any] = self.task.result()
                        return result
                key, question, answer = self.current
                refused = refusal(question, ctx, self.relay.connection.server.name)
                if refused is not None:
                    reply: dict[str, Any] = {"error": refused}
                else:
                    try:
                        answers = await ctx.request_input({key: question})
                    except RuntimeError as error:  # only tools/call, resources/read and prompts/get can ask
                        reply = {"error": _cannot_ask(error)}
                    else:
                        reply = {"result": _without_era_fields(answers[key])}
                if not answer.done():
                    answer.set_result(reply)
                self.current = None
        except InputRequired:
            self._park(ctx)
            raise
        except BaseException:
            self.task.cancel()
            raise
        finally:
            self.relay.ctx = None

    async def _next(self) -> tuple[str, Message, asyncio.Future[dict[str, Any]]] | None:
        """The remote's next question, or None when the forwarded request is over."""
        getting = asyncio.ensure_future(self.questions.get())
        try:
            await asyncio.wait({getting, self.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getting.done():
                getting.cancel()
        return getting.result() if getting.done() and not getting.cancelled() else None

    def _park(self, ctx: RequestContext) -> None:
        _parked[self.id] = self
        ctx.state[_PARKED_KEY] = self.id
        self.expiry = self.loop.call_later(float(mcp_settings.CLIENT_REQUEST_TIMEOUT), self._abandon)

    def _abandon(self) -> None:
        """The caller never came back: forget the call and cancel the remote request."""
        _parked.pop(self.id, None)
        self.task.cancel()


def _cannot_ask(error: Exception) -> dict[str, Any]:
    return {"code": jsonrpc.METHOD_NOT_FOUND, "message": f"The gateway's caller cannot be asked: {error}"}


def _without_era_fields(answer: Any) -> Any:
    """A 2026-07-28 caller's answer as a handshake-era remote expects it (no `resultType`, no cache hints)."""
    if not isinstance(answer, dict):
        return answer
    return {key: value for key, value in answer.items() if key not in _ERA_FIELDS}
