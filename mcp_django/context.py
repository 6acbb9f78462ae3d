"""The `Context` a tool, resource, prompt or completion function receives when it asks for one.

A function asks by annotating any one parameter with `Context`; that parameter is
left out of the input schema and filled in on every call:

    @mcp_django.tool
    async def import_orders(ctx: Context) -> str:
        \"\"\"Import today's orders.\"\"\"
        await ctx.info("starting")
        for done in range(0, 101, 50):
            await ctx.report_progress(done, 100)
        return f"imported for {ctx.user}"

Sync functions run in a worker thread and use the `*_sync` variants
(`ctx.report_progress_sync(...)`, `ctx.log_sync(...)`), which hop back to the
event loop with `asgiref.sync.async_to_sync`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from asgiref.sync import async_to_sync

from mcp_django.protocol.context import RequestContext, SessionState
from mcp_django.scopes import Scope, User, remembered_scope

if TYPE_CHECKING:
    from django.forms import BaseForm

    from mcp_django.forms import FormAnswer

    F = TypeVar("F", bound=BaseForm)


class Context:
    """What user code may know and do while serving one request.

    Attributes:
        request: the protocol `RequestContext` of the request being served.
    """

    __slots__ = ("request",)

    def __init__(self, request: RequestContext) -> None:
        self.request = request

    def __repr__(self) -> str:
        return f"<Context {self.request.method} id={self.request.request_id!r}>"

    @property
    def user(self) -> User:
        """The caller: an instance of the user model, or `AnonymousUser` for an anonymous caller (as `request.user`)."""
        principal = self.request.principal
        if principal is None:
            from django.contrib.auth.models import AnonymousUser

            return AnonymousUser()
        return principal  # type: ignore[no-any-return]  # the transports admit Django users only

    @property
    def endpoint(self) -> Any:
        """The endpoint the request arrived on."""
        return self.request.endpoint

    @property
    def scope(self) -> Scope | None:
        """The caller's `Scope` for this request (None where the endpoint applies no scopes)."""
        return remembered_scope(self.request)[1]

    @property
    def session(self) -> SessionState | None:
        """The handshake-era session, or None for stateless requests."""
        return self.request.session

    @property
    def request_id(self) -> int | str | None:
        """The JSON-RPC id of the request."""
        return self.request.request_id

    @property
    def progress_token(self) -> str | int | None:
        """The client's progress token, or None when it asked for no progress."""
        return self.request.progress_token

    @property
    def meta(self) -> Mapping[str, Any]:
        """The request's `_meta`."""
        return self.request.meta

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Send a progress notification; False when the client asked for none or the request cannot stream."""
        return await self.request.report_progress(progress, total, message)

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send a log message to the client; False when its log level filters it out.

        Args:
            level: an MCP logging level (`debug`, `info`, `notice`, `warning`, `error`, ...).
            data: any JSON-serialisable value, usually a string.
            logger: an optional logger name shown to the client.

        Raises:
            ValueError: `level` is not an MCP logging level.
        """
        return await self.request.log(level, data, logger)

    async def debug(self, data: Any, logger: str | None = None) -> bool:
        """Send a `debug` log message."""
        return await self.request.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> bool:
        """Send an `info` log message."""
        return await self.request.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> bool:
        """Send a `warning` log message."""
        return await self.request.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> bool:
        """Send an `error` log message."""
        return await self.request.log("error", data, logger)

    async def close_stream(self) -> bool:
        """End the response stream now while the call goes on; the client resumes it (`Last-Event-ID`).

        Only handshake-era SSE responses can do this (SEP-1699 polling); returns False elsewhere.
        """
        return await self.request.close_stream()

    @property
    def state(self) -> dict[str, Any]:
        """A JSON-serialisable dict that survives the rounds of a 2026 `input_required` exchange.

        Between rounds it travels inside the signed `requestState`; in the handshake era it
        simply lives as long as the request.
        """
        return self.request.state

    async def request_input(self, requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        """Ask the client several things at once; returns the answers by key.

        In the handshake era the requests go to the client now and this waits for the answers; in
        the 2026 era an unanswered request ends this run with an `input_required` result and the
        function runs again, from the start, when the client retries with the answers. Ask the
        same questions in the same order, under the same keys, on every run.

        Args:
            requests: `{key: {"method": ..., "params": {...}}}` with method `elicitation/create`,
                `sampling/createMessage` or `roots/list`.

        Raises:
            MissingClientCapability: the client did not declare the capability a request needs.
            ClientRequestError: the client refused, failed or did not answer in time.
        """
        return await self.request.request_input({key: dict(request) for key, request in requests.items()})

    async def elicit(self, message: str, requested_schema: Mapping[str, Any], *, key: str | None = None) -> Any:
        """Ask the user a question through the client and return the `ElicitResult` (`action`, `content`)."""
        return await self.request.elicit(message, requested_schema, key=key)

    async def elicit_form(
        self,
        form_class: type[F],
        *,
        message: str | None = None,
        initial: Mapping[str, Any] | None = None,
        form_kwargs: Mapping[str, Any] | None = None,
        key: str | None = None,
        rounds: int | None = None,
    ) -> FormAnswer[F]:
        """Ask the user to fill in a Django `Form` or `ModelForm`; returns a `FormAnswer` (docs/forms.md).

        The form becomes the elicitation's schema; an answer that does not validate is asked again
        with the form's own error messages, up to `rounds` answers (3 by default).

        Args:
            form_class: the form to ask.
            message: the question; by default the first line of the form's docstring.
            initial: the form's `initial=`, asked as the schema's defaults.
            form_kwargs: more arguments for the form (`instance=` for a `ModelForm`).
            key: the first round's input key (like `elicit`'s); later rounds add `.2`, `.3`...
            rounds: how many answers to take at most.

        Returns:
            `answer.form`, bound and valid, when `answer.accepted`; `answer.action` is
            `"decline"` or `"cancel"` otherwise.

        Raises:
            FormNotExpressible: a field of the form cannot be asked through elicitation.
            ToolError: the answer was still invalid after the last round.
        """
        from mcp_django.forms import DEFAULT_ROUNDS, elicit_form

        return await elicit_form(
            self.request,
            form_class,
            message=message,
            initial=initial,
            form_kwargs=form_kwargs,
            key=key,
            rounds=DEFAULT_ROUNDS if rounds is None else rounds,
        )

    def elicit_form_sync(
        self,
        form_class: type[F],
        *,
        message: str | None = None,
        initial: Mapping[str, Any] | None = None,
        form_kwargs: Mapping[str, Any] | None = None,
        key: str | None = None,
        rounds: int | None = None,
    ) -> FormAnswer[F]:
        """`elicit_form` for sync functions, which run in a worker thread (the form validates in it)."""
        return async_to_sync(self.elicit_form)(
            form_class, message=message, initial=initial, form_kwargs=form_kwargs, key=key, rounds=rounds
        )

    async def sample(
        self, messages: list[Mapping[str, Any]], *, max_tokens: int, key: str | None = None, **params: Any
    ) -> Any:
        """Ask the client's model for a message and return the `CreateMessageResult`."""
        return await self.request.sample(messages, max_tokens=max_tokens, key=key, **params)

    async def list_roots(self, *, key: str | None = None) -> Any:
        """Ask the client for its roots and return the `ListRootsResult`."""
        return await self.request.list_roots(key=key)

    def elicit_sync(self, message: str, requested_schema: Mapping[str, Any], *, key: str | None = None) -> Any:
        """`elicit` for sync functions, which run in a worker thread."""
        return async_to_sync(self.request.elicit)(message, requested_schema, key=key)

    def sample_sync(
        self, messages: list[Mapping[str, Any]], *, max_tokens: int, key: str | None = None, **params: Any
    ) -> Any:
        """`sample` for sync functions, which run in a worker thread."""
        return async_to_sync(self.request.sample)(messages, max_tokens=max_tokens, key=key, **params)

    def list_roots_sync(self, *, key: str | None = None) -> Any:
        """`list_roots` for sync functions, which run in a worker thread."""
        return async_to_sync(self.request.list_roots)(key=key)

    def report_progress_sync(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """`report_progress` for sync functions, which run in a worker thread.

        Raises:
            RuntimeError: called from the event loop's own thread (use `await ctx.report_progress(...)`).
        """
        return async_to_sync(self.request.report_progress)(progress, total, message)

    def log_sync(self, level: str, data: Any, logger: str | None = None) -> bool:
        """`log` for sync functions, which run in a worker thread.

        Raises:
            RuntimeError: called from the event loop's own thread (use `await ctx.log(...)`).
        """
        return async_to_sync(self.request.log)(level, data, logger)
