"""The interceptor chain: `build_plan()` turns a settings list into a plan, and the plan runs it.

Settings list interceptors like `MIDDLEWARE`; the pass order is not the list order but the
SEP-2624 execution model (seed 004):

- a *sending* pass runs mutators one after another in ascending priority (ties by name, in
  code-point order), then every validator concurrently, then the sinks;
- a *receiving* pass runs validators, then sinks, then mutators.

By default the request phase is sending and the response phase receiving;
`MCP_DJANGO["INTERCEPTOR_DIRECTIONS"]` flips either (the newer SEP text makes a server's
request phase receiving).

Reading the list is `interceptors.config`; calling one interceptor, `interceptors.invoke`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mcp_django.interceptors.base import (
    Interceptor,
    InterceptorContext,
    Invocation,
    MutationResult,
    ValidationResult,
)
from mcp_django.interceptors.config import (
    InterceptorConfigError,
    PlanEntry,
    parse_entries,
)
from mcp_django.interceptors.invoke import (
    EAGER_TASKS,
    VALID,
    InvocationRecord,
    Loan,
    Outcome,
    attempt,
    copy_json,
    gather_eagerly,
    in_eager_tasks,
    invoke,
    record,
    start,
    unmodified_checked,
)
from mcp_django.interceptors.signals import phase_ran

if TYPE_CHECKING:
    import pydantic

DEFAULT_DIRECTIONS: Final[Mapping[str, str]] = {"request": "sending", "response": "receiving"}


def build_plan(
    config: Any,
    *,
    label: str = "MCP_DJANGO['INTERCEPTORS']",
    directions: Mapping[str, str] | None = None,
    chain_timeout: float | None = None,
    remote: Sequence[PlanEntry] = (),
) -> InterceptorPlan:
    """Build the plan for an interceptor list (a `MCP_DJANGO["INTERCEPTORS"]` value), merged with remote ones.

    Local and remote entries form one chain, ordered by priority then name whatever their origin.

    Args:
        config: the list of entries: import strings or dicts with `CLASS`, `NAME`, `OPTIONS`,
            `EVENTS`, `PHASES`, `PRIORITY`, `MODE`, `FAIL_OPEN`, `TIMEOUT`.
        label: how problems name the list.
        directions: `{"request": "sending"|"receiving", "response": ...}`; missing keys keep the defaults.
        chain_timeout: a deadline in seconds for each phase of the whole chain; None for none.
        remote: entries invoking interceptors on remote servers (`mcp_django.gateway.remote_chain`),
            numbered after the list's own.

    Raises:
        InterceptorConfigError: the list has mistakes (the system checks name them first).
    """
    entries, problems = parse_entries(config, label)
    if problems:
        raise InterceptorConfigError(problems)
    return InterceptorPlan(
        [*entries, *remote],
        directions={**DEFAULT_DIRECTIONS, **(directions or {})},
        timeout_ms=None if chain_timeout is None else round(chain_timeout * 1000),
    )


@dataclasses.dataclass(slots=True)
class ChainResult:
    """The outcome of one phase of the chain (never sent on the wire).

    `status` is `"success"`, `"validation_failed"`, `"mutation_failed"` or `"timeout"`; anything
    but success blocks the operation, and `final_payload` is then the phase's input, untouched.
    `results` (a record per invocation, in run order) is built from `outcomes` when first read.
    """

    event: str
    phase: str
    status: str
    final_payload: dict[str, Any]
    outcomes: list[Outcome] = dataclasses.field(repr=False, compare=False)
    validation_summary: dict[str, int]
    aborted_at: dict[str, Any] | None = None
    total_duration_ms: float = 0.0
    sinks_ran: bool = False
    _results: list[InvocationRecord] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    @property
    def blocked(self) -> bool:
        return self.status != "success"

    @property
    def results(self) -> list[InvocationRecord]:
        if self._results is None:
            self._results = [record(outcome, self.phase) for outcome in self.outcomes]
        return self._results

    def messages(self) -> list[str]:
        """Every validation message and failure, for the log (never for the client)."""
        lines = []
        for entry, result, error, _ in self.outcomes:
            if error is not None:
                lines.append(f"{entry.name}: failed: {error}")
            elif isinstance(result, ValidationResult):
                lines += [f"{entry.name}: [{m.severity}] {m.message}" for m in result.messages]
        return lines


_SELECTION = tuple[tuple[PlanEntry, ...], tuple[PlanEntry, ...], tuple[PlanEntry, ...]]
_PASSES = tuple[tuple[str, tuple[PlanEntry, ...]], ...]
_MUTATE: Final = "mutate"
_VALIDATE: Final = "validate"
_SINK: Final = "sink"


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledPhase:
    """One phase of one event as the plan runs it, compiled once: only the entries hooking it, in run order.

    Attributes:
        event, phase: what it serves.
        mutators, validators, sinks: the entries of each kind, each in run order (priority, name, position).
        passes: the non-empty passes as (kind, entries), in the order the phase's direction runs them.
        options: the options object every entry has (equal frozen options are one object), or None:
            then one `Invocation` serves them all while the payload stays the same.
    """

    event: str
    phase: str
    mutators: tuple[PlanEntry, ...]
    validators: tuple[PlanEntry, ...]
    sinks: tuple[PlanEntry, ...]
    passes: _PASSES
    options: pydantic.BaseModel | None

    def __bool__(self) -> bool:
        return bool(self.passes)


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledEvent:
    """Both phases of one event, compiled, and the active entries hooking it that may refuse it up front."""

    request: CompiledPhase
    response: CompiledPhase
    gates: tuple[PlanEntry, ...]


class InterceptorPlan:
    """A built interceptor chain: which entries run for an event and phase, in which order, and the runner.

    A plan is built once per interceptor list (an endpoint builds it again when the admin's state or the
    settings change) and compiles each (event, phase) the first time it runs: what cannot apply to an
    event costs nothing on it, and what can runs from flat, ordered tuples.
    """

    def __init__(
        self,
        entries: Sequence[PlanEntry],
        *,
        directions: Mapping[str, str] = DEFAULT_DIRECTIONS,
        timeout_ms: int | None,
    ) -> None:
        self.entries = tuple(entries)
        self.directions = dict(directions)
        self.timeout_ms = timeout_ms
        self._compiled: dict[str, CompiledEvent] = {}
        self._events = frozenset(event for entry in self.entries for event in entry.events)
        self._gating = tuple(
            entry
            for entry in self.entries
            if type(entry.interceptor).admits is not Interceptor.admits and entry.mode == "active"
        )

    def __bool__(self) -> bool:
        return bool(self.entries)

    def get(self, name: str) -> PlanEntry | None:
        return next((entry for entry in self.entries if entry.name == name), None)

    def intercepts(self, event: str) -> bool:
        """True when some entry hooks `event` in some phase."""
        return "*" in self._events or event in self._events

    def admit(self, event: str) -> None:
        """Let every active entry hooking `event` refuse it up front (`Interceptor.admits` raises `MCPError`)."""
        for entry in self.compiled_event(event).gates:
            entry.interceptor.admits(event)

    def supported_events(self) -> list[str]:
        """The union of the hooked events, sorted (`"*"` when a wildcard is hooked)."""
        return sorted(self._events)

    def compiled_event(self, event: str) -> CompiledEvent:
        """What both phases of `event` run, compiled the first time it is asked for."""
        compiled = self._compiled.get(event)
        if compiled is None:
            gates = tuple(entry for entry in self._gating if entry.hooks_event(event))
            compiled = CompiledEvent(self._compile(event, "request"), self._compile(event, "response"), gates)
            self._compiled[event] = compiled
        return compiled

    def compiled(self, event: str, phase: str) -> CompiledPhase:
        """What `phase` of `event` runs, compiled the first time it is asked for."""
        compiled = self.compiled_event(event)
        return compiled.request if phase == "request" else compiled.response

    def _compile(self, event: str, phase: str) -> CompiledPhase:
        chosen = sorted(
            (entry for entry in self.entries if entry.hooks(event, phase)),
            key=lambda entry: (entry.priority[phase], entry.name, entry.index),
        )
        mutators, validators, sinks = (tuple(entry for entry in chosen if entry.type == kind) for kind in _KINDS)
        ordered = [(_MUTATE, mutators), (_VALIDATE, validators), (_SINK, sinks)]
        if self.directions.get(phase) == "receiving":
            ordered = [ordered[1], ordered[2], ordered[0]]
        first = chosen[0].options if chosen else None
        return CompiledPhase(
            event=event,
            phase=phase,
            mutators=mutators,
            validators=validators,
            sinks=sinks,
            passes=tuple((kind, entries) for kind, entries in ordered if entries),
            options=first if all(entry.options is first for entry in chosen) else None,
        )

    def select(self, event: str, phase: str) -> _SELECTION:
        """The (mutators, validators, sinks) hooked on `event` in `phase`, each in run order."""
        compiled = self.compiled(event, phase)
        return compiled.mutators, compiled.validators, compiled.sinks

    def passes(self, event: str, phase: str) -> _PASSES:
        """The non-empty passes of `event` in `phase`, in the order the phase's direction runs them."""
        return self.compiled(event, phase).passes

    async def run(self, event: str, phase: str, payload: dict[str, Any], context: InterceptorContext) -> ChainResult:
        """Run one phase of the chain on `payload` and return what happened."""
        return await self.run_compiled(self.compiled(event, phase), payload, context)

    async def run_compiled(
        self, compiled: CompiledPhase, payload: dict[str, Any], context: InterceptorContext
    ) -> ChainResult:
        """Run one compiled phase on `payload` and return what happened (`run`, for a phase looked up already)."""
        chain = ChainResult(
            compiled.event, compiled.phase, "success", payload, [], {"errors": 0, "warnings": 0, "infos": 0}
        )
        run = _PhaseRun(chain, compiled, context)
        started = time.perf_counter()
        try:
            if self.timeout_ms is None:
                await run.passes()
            else:
                async with asyncio.timeout(self.timeout_ms / 1000):
                    await run.passes()
        except TimeoutError:
            run.abort("timeout", {"type": "chain", "reason": "timeout", "timeoutMs": self.timeout_ms})
        if chain.status != "success":
            chain.final_payload = payload
        chain.total_duration_ms = (time.perf_counter() - started) * 1000
        if phase_ran.receivers:
            phase_ran.send(InterceptorPlan, chain=chain)
        return chain

    async def run_sinks(self, event: str, phase: str, payload: dict[str, Any], context: InterceptorContext) -> None:
        """Let the sinks of `phase` observe `payload` (a refusal or an error that ended the operation)."""
        compiled = self.compiled(event, phase)
        if compiled.sinks:
            observed = _PhaseRun(ChainResult(event, phase, "success", payload, [], {}), compiled, context)
            outcomes = observed.concurrently(compiled.sinks)
            if not isinstance(outcomes, list):
                await outcomes

    async def invoke(self, entry: PlanEntry, invocation: Invocation, timeout_ms: int | None) -> InvocationRecord:
        """Invoke one entry on its own (the `interceptor/invoke` wire method)."""
        return await invoke(entry, invocation, timeout_ms)


_KINDS: Final = ("mutation", "validation", "sink")
_SUMMARY_KEYS: Final = {"warn": "warnings", "info": "infos"}


class _PhaseRun:
    """One phase being run: it fills in its `ChainResult` as it goes (`final_payload` is the current
    payload, set back to the input if the phase blocks; `outcomes` grows by one per invocation)."""

    __slots__ = ("chain", "compiled", "context", "made")

    def __init__(self, chain: ChainResult, compiled: CompiledPhase, context: InterceptorContext) -> None:
        self.chain = chain
        self.compiled = compiled
        self.context = context
        self.made: Invocation | None = None

    def abort(self, status: str, aborted_at: dict[str, Any]) -> None:
        chain = self.chain
        if chain.status == "success":
            chain.status, chain.aborted_at = status, aborted_at

    async def passes(self) -> None:
        """Run the passes, in order, until one blocks."""
        chain = self.chain
        for kind, entries in self.compiled.passes:
            if kind is _MUTATE:
                await self.mutate(entries)
            else:
                if kind is _SINK:
                    chain.sinks_ran = True  # even if the chain's deadline stops them: they saw the payload
                outcomes = self.concurrently(entries)
                if not isinstance(outcomes, list):
                    outcomes = await outcomes
                if kind is _VALIDATE:
                    self.judge(outcomes)
            if chain.status != "success":
                return

    def invocation(self, entry: PlanEntry, payload: dict[str, Any]) -> Invocation:
        """The invocation of `entry` on `payload`: the last one made, when it has the same payload and options."""
        made = self.made
        if made is None or made.payload is not payload or made.options is not entry.options:
            compiled = self.compiled
            made = self.made = Invocation(compiled.event, compiled.phase, payload, entry.options, self.context)  # type: ignore[arg-type]
        return made

    async def mutate(self, mutators: tuple[PlanEntry, ...]) -> None:
        """Sequentially; audit results are shadows; a fail-closed failure aborts and keeps the input.

        A mutator run in this task is lent the payload itself, not a copy: what it changes in place is
        put back afterwards (`Loan`), and what it returned is copied out first, so nothing else ever
        sees the change, as if it had changed a copy; a mutator that changes nothing costs no copy. A
        sync mutator, which runs on a thread that a timeout or a cancellation would leave running, gets
        a copy of its own.
        """
        chain = self.chain
        loan: Loan | None = None
        for entry in mutators:
            payload = chain.final_payload
            lent: Loan | None = None
            if entry.inline:
                invocation = self.invocation(entry, payload)
                lent = loan = loan or Loan(payload)
            else:
                compiled = self.compiled
                invocation = Invocation(compiled.event, compiled.phase, copy_json(payload), entry.options, self.context)  # type: ignore[arg-type]
            try:
                outcome = await attempt(entry, invocation, entry.timeout_ms)
            except BaseException:  # cancelled, or the chain's deadline: leave the payload as it was lent
                if lent is not None and lent.changed():
                    lent.restore()
                raise
            if lent is not None and lent.containers != lent.contents:  # `lent.changed()`, without the call
                outcome = _copied_out(outcome)
                lent.restore()
            _, result, error, _ = outcome
            if error is None and not result.modified and result.payload is not payload:  # type: ignore[union-attr]
                outcome = unmodified_checked(outcome, invocation, payload)
                result, error = outcome[1], outcome[2]
            chain.outcomes.append(outcome)
            if error is None:
                if entry.mode == "active" and result.modified and result.payload is not payload:  # type: ignore[union-attr]
                    chain.final_payload = result.payload  # type: ignore[union-attr]
                    loan = None  # lent anew when the next mutator runs
            elif entry.mode == "active" and not entry.fail_open:
                self.abort("mutation_failed", {"interceptor": entry.name, "reason": error, "type": "mutation"})
                return

    def judge(self, outcomes: list[Outcome]) -> None:
        """Count the validators' verdicts; the first blocker in plan order is named (every validator ran)."""
        summary = self.chain.validation_summary
        for entry, result, error, _ in outcomes:
            if result is VALID:
                continue  # the common verdict: nothing to count, nothing blocks
            _count(summary, result, error)
            if entry.mode != "active":
                continue
            if error is not None and not entry.fail_open:
                reason = error
            elif isinstance(result, ValidationResult) and error is None and result.blocks():
                reason = result.messages[0].message if result.messages else "Validation failed"
            else:
                continue
            self.abort("validation_failed", {"interceptor": entry.name, "reason": reason, "type": "validation"})

    def concurrently(self, entries: tuple[PlanEntry, ...]) -> list[Outcome] | Coroutine[Any, Any, list[Outcome]]:
        """Run `entries` concurrently on the current payload: each started at once, the waiting ones carried on.

        Their outcomes, in `entries`' order, are also added to the chain's. When every entry finished
        without waiting (no-op and in-memory interceptors do) they are returned as they are, with no
        coroutine of ours; else a coroutine to await for them.
        """
        payload = self.chain.final_payload
        shared = self.invocation(entries[0], payload) if self.compiled.options is not None else None
        if EAGER_TASKS and len(entries) > 1:  # each in a task of its own from its first step (in_eager_tasks)
            return self._in_tasks(
                [attempt(entry, shared or self.invocation(entry, payload), entry.timeout_ms) for entry in entries]
            )
        outcomes: list[Any] = [start(entry, shared or self.invocation(entry, payload)) for entry in entries]
        for outcome in outcomes:
            if not isinstance(outcome, tuple):
                return self._carried_on(outcomes)
        self.chain.outcomes += outcomes
        return outcomes

    async def _in_tasks(self, coroutines: list[Coroutine[Any, Any, Outcome]]) -> list[Outcome]:
        outcomes = await in_eager_tasks(coroutines)
        self.chain.outcomes += outcomes
        return outcomes

    async def _carried_on(self, outcomes: list[Any]) -> list[Outcome]:
        await _carry_on(outcomes)
        self.chain.outcomes += outcomes
        return outcomes


async def _carry_on(outcomes: list[Any]) -> None:
    """Replace the coroutines among `outcomes` (the entries that waited) by their outcomes."""
    waiting = [index for index, outcome in enumerate(outcomes) if not isinstance(outcome, tuple)]
    if len(waiting) == 1:  # no task for a lone waiter: what it sets in its context stays in ours
        outcomes[waiting[0]] = await outcomes[waiting[0]]
        return
    finished = await gather_eagerly([outcomes[index] for index in waiting])
    for index, outcome in zip(waiting, finished, strict=True):
        outcomes[index] = outcome


def _count(summary: dict[str, int], result: Any, error: str | None) -> None:
    if error is not None or not isinstance(result, ValidationResult):
        summary["errors"] += 1
        return
    if result.valid and not result.messages:
        return  # the common verdict: nothing to count
    severities: list[str] = [m.severity for m in result.messages]
    if not severities and not result.valid:
        severities = [result.severity or "error"]
    for severity in severities:
        summary[_SUMMARY_KEYS.get(severity, "errors")] += 1


def _copied_out(outcome: Outcome) -> Outcome:
    """A mutation's outcome with a copy of the payload it returned, taken before the lent payload is restored."""
    entry, result, error, duration = outcome
    if not isinstance(result, MutationResult):
        return outcome
    return (entry, dataclasses.replace(result, payload=copy_json(result.payload)), error, duration)
