"""What an interceptor is: the three base classes, what they receive and what they return.

An interceptor is a class, built once per process and shared by every request: keep
configuration in `options` (handed to every invocation) and nothing per request on
`self`. Subclass one of::

    class NoProfanity(ValidationInterceptor):
        name = "no-profanity"
        events = ("tools/call",)
        phases = ("request",)

        def validate(self, invocation: Invocation) -> ValidationResult | bool:
            return "darn" not in str(invocation.payload.get("arguments"))

Methods may be sync or async; sync ones run in a worker thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeAlias

from mcp_django.runtime.lazy_models import LazyModel, lazy_attributes

if TYPE_CHECKING:
    import pydantic

    OptionsModel: TypeAlias = type[pydantic.BaseModel]

    class NoOptions(pydantic.BaseModel):
        """The options schema of an interceptor that takes none (made on first use: `LazyModel`)."""


Phase = Literal["request", "response"]
Severity = Literal["info", "warn", "error"]

PHASES: Final[tuple[Phase, ...]] = ("request", "response")
EVENTS: Final[tuple[str, ...]] = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
)
"""The operations mcp_django runs interceptors around; `"*"` stands for all of them."""


@LazyModel
def _no_options() -> type[pydantic.BaseModel]:
    import pydantic  # here, not when the package loads: a management command pays none (issue 34)

    class NoOptions(pydantic.BaseModel):
        """The options schema of an interceptor that takes none."""

        model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    return NoOptions


__getattr__ = lazy_attributes(__name__, NoOptions=_no_options)  # made when first asked for (`LazyModel`)


@dataclasses.dataclass(frozen=True, slots=True)
class InterceptorContext:
    """Who and what an invocation is about.

    Args:
        principal: the caller in SEP-2624's shape: `{"type": "user", "id": "42"}` or `{"type": "anonymous"}`.
        user: the caller as the transport knows it (a Django user), or None.
        trace_id: one id for both phases of one operation.
        timestamp: when the operation started, ISO 8601 (not for authorization decisions).
        endpoint: the name of the endpoint serving the operation, if known.
        request: in the response phase, the request payload the operation ran with.
        outcome: in the response phase, `"ok"`, `"error"` (an `isError` result) or `"blocked"`.
        duration_ms: in the response phase, how long the request phase and the operation took.
    """

    principal: Mapping[str, Any]
    user: Any = None
    trace_id: str = ""
    timestamp: str = ""
    endpoint: str | None = None
    request: Mapping[str, Any] | None = None
    outcome: str | None = None
    duration_ms: float | None = None

    def to_wire(self) -> dict[str, Any]:
        """The SEP-2624 `context` object."""
        return {"principal": dict(self.principal), "traceId": self.trace_id, "timestamp": self.timestamp}


@dataclasses.dataclass(frozen=True, slots=True)
class Invocation:
    """One call of one interceptor.

    Args:
        event: the operation, e.g. `"tools/call"`.
        phase: `"request"` (the payload is the operation's params) or `"response"` (its result).
        payload: the params or result; a mutator may change it (what it does not return is undone, see
            `MutationInterceptor.mutate`), everyone else must not.
        options: this interceptor's validated options (its `Options` model).
        context: who is calling, and a trace id.
    """

    event: str
    phase: Phase
    payload: dict[str, Any]
    options: Any
    context: InterceptorContext


@dataclasses.dataclass(frozen=True, slots=True)
class ValidationMessage:
    """One finding of a validator; logged, never sent to the client."""

    message: str
    severity: Severity = "error"
    path: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ValidationResult:
    """A validator's verdict. `valid=False` blocks unless `severity` is `"warn"` or `"info"`.

    `messages` go to the log only. What the client (and the model behind it) is told of a refusal is
    `reason`, a sentence it can act on ("at most 3 calls of 'search' every 60 seconds"), and
    `retry_after`, the seconds after which the same call may succeed; without them the refusal is generic.
    """

    valid: bool
    severity: str | None = None
    messages: Sequence[ValidationMessage] = ()
    info: Mapping[str, Any] | None = None
    reason: str | None = None
    retry_after: int | None = None
    type: ClassVar[str] = "validation"

    def blocks(self) -> bool:
        """True when the verdict refuses the operation (a missing or unknown severity counts as error)."""
        return not self.valid and self.severity not in ("warn", "info")

    def to_wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "valid": self.valid}
        if self.severity is not None:
            data["severity"] = self.severity
        if self.messages:
            data["messages"] = [
                {"message": m.message, "severity": m.severity, **({"path": m.path} if m.path else {})}
                for m in self.messages
            ]
        if self.info:
            data["info"] = dict(self.info)
        return data


@dataclasses.dataclass(frozen=True, slots=True)
class MutationResult:
    """A mutator's outcome: the whole replacement payload, or the input unchanged with `modified=False`."""

    modified: bool
    payload: dict[str, Any]
    info: Mapping[str, Any] | None = None
    type: ClassVar[str] = "mutation"

    def to_wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "modified": self.modified, "payload": self.payload}
        if self.info:
            data["info"] = dict(self.info)
        return data


@dataclasses.dataclass(frozen=True, slots=True)
class SinkResult:
    """What a sink did; a sink that raises is recorded as `recorded=False`."""

    recorded: bool = True
    metrics: Mapping[str, float] | None = None
    info: Mapping[str, Any] | None = None
    type: ClassVar[str] = "sink"

    def to_wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "recorded": self.recorded}
        if self.metrics:
            data["metrics"] = dict(self.metrics)
        if self.info:
            data["info"] = dict(self.info)
        return data


class Interceptor:
    """Base of the three interceptor kinds; subclass one of them, never this one.

    Class attributes are the author's defaults; a `MCP_DJANGO["INTERCEPTORS"]` entry may
    override `mode`, `fail_open`, the priorities and `timeout`, and may narrow (never
    widen) `events` and `phases`.

    Attributes:
        name: unique name in a chain; defaults to the class name.
        description: one line for `interceptors/list`.
        version: advisory version string.
        events: the operations hooked (`"*"` for all of them).
        phases: `"request"`, `"response"`, or both.
        priority: order among mutators in both phases; lower runs first.
        request_priority / response_priority: per-phase order instead (not together with `priority`).
        mode: `"active"`, or `"audit"` to record results without acting on them.
        fail_open: whether a failure or timeout lets the operation continue (default: it blocks).
        timeout: seconds an invocation may take; None for no limit.
        Options: the pydantic model the entry's `OPTIONS` are validated against.
        thread_sensitive: run sync methods in the main sync thread (Django's default, safe for the
            ORM); False lets them run in parallel threads.
        invocable: whether a caller may run it through the SEP-2624 `interceptor/invoke` (and see it
            in `interceptors/list`) on an endpoint serving the wire protocol. Validators and
            mutators are by default (they only compute a verdict or a payload); sinks are not, since
            what a sink records must come from operations the server ran, never from a caller.
    """

    type: ClassVar[str] = ""
    name: ClassVar[str] = ""
    description: ClassVar[str | None] = None
    version: ClassVar[str | None] = None
    events: ClassVar[Sequence[str]] = ("*",)
    phases: ClassVar[Sequence[str]] = PHASES
    priority: ClassVar[int | None] = None
    request_priority: ClassVar[int | None] = None
    response_priority: ClassVar[int | None] = None
    mode: ClassVar[str] = "active"
    fail_open: ClassVar[bool] = False
    timeout: ClassVar[float | None] = None
    Options: ClassVar[OptionsModel] = _no_options  # type: ignore[assignment]  # NoOptions, on first use
    thread_sensitive: ClassVar[bool] = True
    invocable: ClassVar[bool] = True
    entrypoint: ClassVar[str] = ""

    def admits(self, event: str) -> None:
        """Raise an `MCPError` to refuse `event` before its request phase runs; by default, admit it.

        For an interceptor whose own duty cannot be met right now, such as an audit sink whose trail
        cannot take another row. It sees no payload (that is a validator's job), must not wait, and
        is only called when overridden and the entry is active.
        """


class ValidationInterceptor(Interceptor):
    """Decides whether an operation may go on: override `validate` to return a `ValidationResult` or a bool."""

    type = "validation"
    entrypoint = "validate"

    def validate(self, invocation: Invocation) -> Any:
        """Return a `ValidationResult`, or True/False (sync or async)."""
        raise NotImplementedError(f"{type(self).__name__}.validate() must be overridden")


class MutationInterceptor(Interceptor):
    """Rewrites the payload: override `mutate` to return a `MutationResult` with the whole new payload."""

    type = "mutation"
    entrypoint = "mutate"

    def mutate(self, invocation: Invocation) -> Any:
        """Return a `MutationResult` (sync or async) with the whole new payload, or `modified=False` and the input.

        An async mutator is lent the chain's payload: it may change it in place and return it, and a
        change it does not return is put back after it returns, as if it had changed a copy; it must
        not keep the payload past its return. A sync one (run on a thread) is handed a copy of its own.
        """
        raise NotImplementedError(f"{type(self).__name__}.mutate() must be overridden")


class SinkInterceptor(Interceptor):
    """Observes the payload and never changes the outcome: override `record`; failures are swallowed."""

    type = "sink"
    entrypoint = "record"
    invocable = False

    def record(self, invocation: Invocation) -> Any:
        """Record the invocation (sync or async); return None, a bool or a `SinkResult`."""
        raise NotImplementedError(f"{type(self).__name__}.record() must be overridden")


_MAX_IN_BACKGROUND: Final = 1000
_in_background: set[asyncio.Task[None]] = set()


def in_background(recording: Coroutine[Any, Any, None]) -> bool:
    """Run a sink's `recording` without holding up the call (a remote sink's send); `drain_background` waits for it.

    Returns:
        False when it was dropped (closed, never run): 1000 recordings are already in flight.
    """
    if len(_in_background) >= _MAX_IN_BACKGROUND:
        recording.close()
        return False
    task = asyncio.get_running_loop().create_task(recording)
    _in_background.add(task)
    task.add_done_callback(_in_background.discard)
    return True


async def drain_background() -> None:
    """Wait for the recordings this event loop still has in flight (a sync client's call, before its loop ends)."""
    loop = asyncio.get_running_loop()
    mine = [task for task in _in_background if task.get_loop() is loop]
    if mine:
        await asyncio.wait(mine)
