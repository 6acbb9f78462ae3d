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
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pydantic

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
    InvocationRecord,
    Outcome,
    copy_json,
    gather_eagerly,
    invoke,
    record,
    start,
)
from mcp_django.interceptors.signals import phase_ran

_SUMMARY_KEYS: Final = {"warn": "warnings", "info": "infos"}
DEFAULT_DIRECTIONS: Final[Mapping[str, str]] = {"request": "sending", "response": "receiving"}


def build_plan(
    config: Any,
    *,
    label: str = "MCP_DJANGO['INTERCEPTORS']",
    directions: Mapping[str, str] | None = None,
    chain_timeout_ms: int | None = None,
    remote: Sequence[PlanEntry] = (),
) -> InterceptorPlan:
    """Build the plan for an interceptor list (a `MCP_DJANGO["INTERCEPTORS"]` value), merged with remote ones.

    Local and remote entries form one chain, ordered by priority then name whatever their origin.

    Args:
        config: the list of entries: import strings or dicts with `CLASS`, `NAME`, `OPTIONS`,
            `EVENTS`, `PHASES`, `PRIORITY`, `MODE`, `FAIL_OPEN`, `TIMEOUT_MS`.
        label: how problems name the list.
        directions: `{"request": "sending"|"receiving", "response": ...}`; missing keys keep the defaults.
        chain_timeout_ms: a deadline for each phase of the whole chain; None for none.
        remote: entries invoking interceptors on remote servers (`mcp_django.gateway.remote_chain`),
            numbered after the list's own.

    Raises:
        InterceptorConfigError: the list has mistakes (the system checks name them first).
    """
    entries, problems = parse_entries(config, label)
    if problems:
        raise InterceptorConfigError(problems)
    return InterceptorPlan(
        [*entries, *remote], directions={**DEFAULT_DIRECTIONS, **(directions or {})}, timeout_ms=chain_timeout_ms
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


class InterceptorPlan:
    """A built interceptor chain: which entries run for an event and phase, in which order, and the runner."""

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
        self._selections: dict[tuple[str, str], _SELECTION] = {}
        self._passes: dict[tuple[str, str], _PASSES] = {}
        self._common: dict[int, tuple[tuple[PlanEntry, ...], pydantic.BaseModel | None]] = {}
        self._events = frozenset(event for entry in self.entries for event in entry.events)
        self._gates = tuple(
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
        for entry in self._gates:
            if entry.hooks_event(event):
                entry.interceptor.admits(event)

    def supported_events(self) -> list[str]:
        """The union of the hooked events, sorted (`"*"` when a wildcard is hooked)."""
        return sorted(self._events)

    def select(self, event: str, phase: str) -> _SELECTION:
        """The (mutators, validators, sinks) hooked on `event` in `phase`, each in run order."""
        key = (event, phase)
        if key not in self._selections:
            chosen = sorted(
                (entry for entry in self.entries if entry.hooks(event, phase)),
                key=lambda entry: (entry.priority[phase], entry.name, entry.index),
            )
            self._selections[key] = tuple(  # type: ignore[assignment]  # three tuples, by construction
                tuple(entry for entry in chosen if entry.type == kind) for kind in ("mutation", "validation", "sink")
            )
        return self._selections[key]

    def common_options(self, entries: tuple[PlanEntry, ...]) -> pydantic.BaseModel | None:
        """The options object every one of `entries` has (equal frozen options are one object), else None."""
        cached = self._common.get(id(entries))
        if cached is None or cached[0] is not entries:
            first = entries[0].options if entries else None
            cached = self._common[id(entries)] = (
                entries,
                first if all(entry.options is first for entry in entries) else None,
            )
        return cached[1]

    def passes(self, event: str, phase: str) -> _PASSES:
        """The non-empty passes of `event` in `phase`, in the order the phase's direction runs them; built once."""
        key = (event, phase)
        passes = self._passes.get(key)
        if passes is None:
            mutators, validators, sinks = self.select(event, phase)
            ordered = [("mutate", mutators), ("validate", validators), ("sink", sinks)]
            if self.directions.get(phase) == "receiving":
                ordered = [ordered[1], ordered[2], ordered[0]]
            passes = self._passes[key] = tuple((kind, entries) for kind, entries in ordered if entries)
        return passes

    async def run(self, event: str, phase: str, payload: dict[str, Any], context: InterceptorContext) -> ChainResult:
        """Run one phase of the chain on `payload` and return what happened."""
        passes = self._passes.get((event, phase)) or self.passes(event, phase)
        run = _PhaseRun(self, event, phase, payload, context)
        started = time.perf_counter()
        try:
            if self.timeout_ms is None:
                await run.passes(passes)
            else:
                async with asyncio.timeout(self.timeout_ms / 1000):
                    await run.passes(passes)
        except TimeoutError:
            run.abort("timeout", {"type": "chain", "reason": "timeout", "timeoutMs": self.timeout_ms})
        result = ChainResult(
            event=event,
            phase=phase,
            status=run.status,
            final_payload=run.payload if run.status == "success" else payload,
            outcomes=run.outcomes,
            validation_summary=run.summary,
            aborted_at=run.aborted_at,
            total_duration_ms=(time.perf_counter() - started) * 1000,
            sinks_ran=run.sinks_ran,
        )
        if phase_ran.receivers:
            phase_ran.send(InterceptorPlan, chain=result)
        return result

    async def run_sinks(self, event: str, phase: str, payload: dict[str, Any], context: InterceptorContext) -> None:
        """Let the sinks of `phase` observe `payload` (a refusal or an error that ended the operation)."""
        sinks = self.select(event, phase)[2]
        if sinks:
            await _PhaseRun(self, event, phase, payload, context).sink(sinks)

    async def invoke(self, entry: PlanEntry, invocation: Invocation, timeout_ms: int | None) -> InvocationRecord:
        """Invoke one entry on its own (the `interceptor/invoke` wire method)."""
        original = invocation.payload
        if entry.type == "mutation":
            invocation = dataclasses.replace(invocation, payload=copy_json(original))
        return await invoke(entry, invocation, timeout_ms, original=original)


class _PhaseRun:
    """The state of one phase being run: the current payload, the records, the verdict."""

    __slots__ = (
        "aborted_at",
        "context",
        "event",
        "outcomes",
        "payload",
        "phase",
        "plan",
        "sinks_ran",
        "status",
        "summary",
    )

    def __init__(
        self, plan: InterceptorPlan, event: str, phase: str, payload: dict[str, Any], context: InterceptorContext
    ) -> None:
        self.plan = plan
        self.event = event
        self.phase = phase
        self.payload = payload
        self.context = context
        self.outcomes: list[Outcome] = []
        self.summary = {"errors": 0, "warnings": 0, "infos": 0}
        self.status = "success"
        self.aborted_at: dict[str, Any] | None = None
        self.sinks_ran = False

    def abort(self, status: str, aborted_at: dict[str, Any]) -> None:
        if self.status == "success":
            self.status, self.aborted_at = status, aborted_at

    async def passes(self, passes: _PASSES) -> None:
        for kind, entries in passes:
            if kind == "validate":
                await self.validate(entries)
            elif kind == "mutate":
                await self.mutate(entries)
            else:
                await self.sink(entries)
            if self.status != "success":
                return

    async def mutate(self, mutators: tuple[PlanEntry, ...]) -> None:
        """Sequentially; audit results are shadows; a fail-closed failure aborts and keeps the input."""
        for entry in mutators:
            invocation = Invocation(self.event, self.phase, copy_json(self.payload), entry.options, self.context)  # type: ignore[arg-type]
            outcome = start(entry, invocation, self.payload)
            if not isinstance(outcome, tuple):
                outcome = await outcome
            self.outcomes.append(outcome)
            _, result, error, _ = outcome
            if error is None:
                assert isinstance(result, MutationResult)
                if entry.mode == "active" and result.modified:
                    self.payload = result.payload
            elif entry.mode == "active" and not entry.fail_open:
                self.abort("mutation_failed", {"interceptor": entry.name, "reason": error, "type": "mutation"})
                return

    async def validate(self, validators: tuple[PlanEntry, ...]) -> None:
        """All at once on one snapshot; every validator runs, and the first blocker in plan order is named."""
        outcomes = await self.all(validators)
        self.outcomes += outcomes
        for entry, result, error, _ in outcomes:
            self.count(result, error)
            if entry.mode != "active":
                continue
            if error is not None and not entry.fail_open:
                reason = error
            elif isinstance(result, ValidationResult) and error is None and result.blocks():
                reason = result.messages[0].message if result.messages else "Validation failed"
            else:
                continue
            self.abort("validation_failed", {"interceptor": entry.name, "reason": reason, "type": "validation"})

    async def sink(self, sinks: tuple[PlanEntry, ...]) -> None:
        """All at once; a failure is swallowed and recorded as `recorded=False`."""
        self.sinks_ran = True
        self.outcomes += await self.all(sinks)

    async def all(self, entries: tuple[PlanEntry, ...]) -> list[Outcome]:
        """Run `entries` concurrently on the current payload: each started at once, the waiting ones carried on."""
        pairs = zip(entries, self.invocations(entries), strict=True)
        outcomes: list[Any] = [start(entry, call) for entry, call in pairs]
        waiting = [index for index, outcome in enumerate(outcomes) if not isinstance(outcome, tuple)]
        if len(waiting) == 1:  # no task for a lone waiter: what it sets in its context stays in ours
            outcomes[waiting[0]] = await outcomes[waiting[0]]
        elif waiting:
            finished = await gather_eagerly([outcomes[index] for index in waiting])
            for index, outcome in zip(waiting, finished, strict=True):
                outcomes[index] = outcome
        return outcomes

    def invocations(self, entries: tuple[PlanEntry, ...]) -> list[Invocation]:
        """The invocation of each entry on the current payload; entries with the same options share one."""
        event, phase, payload, context = self.event, self.phase, self.payload, self.context
        common = self.plan.common_options(entries)
        if common is not None:
            return [Invocation(event, phase, payload, common, context)] * len(entries)  # type: ignore[arg-type]
        made: dict[int, Invocation] = {}
        invocations = []
        for entry in entries:
            invocation = made.get(id(entry.options))
            if invocation is None:
                invocation = made[id(entry.options)] = Invocation(event, phase, payload, entry.options, context)  # type: ignore[arg-type]
            invocations.append(invocation)
        return invocations

    def count(self, result: Any, error: str | None) -> None:
        if error is not None or not isinstance(result, ValidationResult):
            self.summary["errors"] += 1
            return
        if result.valid and not result.messages:
            return  # the common verdict: nothing to count
        severities: list[str] = [m.severity for m in result.messages]
        if not severities and not result.valid:
            severities = [result.severity or "error"]
        for severity in severities:
            self.summary[_SUMMARY_KEYS.get(severity, "errors")] += 1
