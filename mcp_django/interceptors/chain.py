"""The interceptor chain: `build_plan()` turns a settings list into a plan, and the plan runs it.

Settings list interceptors like `MIDDLEWARE`; the pass order is not the list order but the
SEP-2624 execution model (seed 004):

- a *sending* pass runs mutators one after another in ascending priority (ties by name, in
  code-point order), then every validator concurrently, then the sinks;
- a *receiving* pass runs validators, then sinks, then mutators.

By default the request phase is sending and the response phase receiving;
`MCP_DJANGO["INTERCEPTOR_DIRECTIONS"]` flips either (the newer SEP text makes a server's
request phase receiving).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import time
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping, Sequence
from typing import Any, Final, TypeVar

import pydantic
from asgiref.sync import sync_to_async
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from mcp_django.executor import run_sync
from mcp_django.interceptors.base import (
    PHASES,
    Interceptor,
    InterceptorContext,
    Invocation,
    MutationResult,
    SinkResult,
    ValidationResult,
)
from mcp_django.protocol.errors import validation_problems

__all__ = [
    "DEFAULT_DIRECTIONS",
    "PROBLEM_KINDS",
    "ChainResult",
    "InterceptorConfigError",
    "InterceptorPlan",
    "InvocationRecord",
    "PlanEntry",
    "Problem",
    "build_plan",
    "plan_problems",
]

T = TypeVar("T")

# Results are frozen, so the common verdicts are shared instead of built on every invocation.
_VALID: Final = ValidationResult(valid=True)
_INVALID: Final = ValidationResult(valid=False)
_RECORDED: Final = SinkResult(recorded=True)
_NOT_RECORDED: Final = SinkResult(recorded=False)
_SUMMARY_KEYS: Final = {"warn": "warnings", "info": "infos"}
_clock: Final = time.perf_counter

logger = logging.getLogger("mcp_django.interceptors")

ENTRY_KEYS: Final = ("CLASS", "NAME", "OPTIONS", "EVENTS", "PHASES", "PRIORITY", "MODE", "FAIL_OPEN", "TIMEOUT_MS")
MODES: Final = ("active", "audit")
DEFAULT_DIRECTIONS: Final[Mapping[str, str]] = {"request": "sending", "response": "receiving"}

# The kinds of configuration problem; `checks.py` gives each its check ID (docs/checks.md).
PROBLEM_IMPORT: Final = "import"
PROBLEM_NOT_INTERCEPTOR: Final = "not_interceptor"
PROBLEM_PRIORITY_BOTH: Final = "priority_both"
PROBLEM_DUPLICATE: Final = "duplicate"
PROBLEM_WIDENED: Final = "widened"
PROBLEM_VALUE: Final = "value"
PROBLEM_OPTIONS: Final = "options"
PROBLEM_KINDS: Final = (
    PROBLEM_IMPORT,
    PROBLEM_NOT_INTERCEPTOR,
    PROBLEM_PRIORITY_BOTH,
    PROBLEM_DUPLICATE,
    PROBLEM_WIDENED,
    PROBLEM_VALUE,
    PROBLEM_OPTIONS,
)

# -- configuration --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Problem:
    """One mistake in an interceptor list: its kind (one of `PROBLEM_KINDS`), message and hint."""

    kind: str
    message: str
    hint: str


class InterceptorConfigError(ImproperlyConfigured):
    """An interceptor list that cannot be built; the system checks report the same problems."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.message} {p.hint}" for p in self.problems))


@dataclasses.dataclass(frozen=True, slots=True)
class PlanEntry:
    """One configured interceptor with its effective policy (author defaults, then the entry's overrides)."""

    name: str
    interceptor: Interceptor
    type: str
    events: frozenset[str]
    phases: frozenset[str]
    priority: Mapping[str, int]
    priority_hint: int | Mapping[str, int] | None
    mode: str
    fail_open: bool
    timeout_ms: int | None
    options: pydantic.BaseModel
    index: int
    call: Callable[[Invocation], Awaitable[Any]] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        method = getattr(self.interceptor, type(self.interceptor).entrypoint)
        if not inspect.iscoroutinefunction(method):
            # thread_sensitive ones may use the ORM: the database threads; the others any thread.
            if self.interceptor.thread_sensitive:
                method = functools.partial(run_sync, method)
            else:
                method = sync_to_async(method, thread_sensitive=False)
        object.__setattr__(self, "call", method)  # derived once; the dataclass is frozen

    def hooks(self, event: str, phase: str) -> bool:
        """True when this entry intercepts `event` in `phase`."""
        return phase in self.phases and ("*" in self.events or event in self.events)

    def hooks_event(self, event: str) -> bool:
        return "*" in self.events or event in self.events

    def descriptor(self) -> dict[str, Any]:
        """The SEP-2624 `Interceptor` descriptor `interceptors/list` returns (defaults omitted)."""
        cls = type(self.interceptor)
        data: dict[str, Any] = {"name": self.name}
        if cls.version:
            data["version"] = cls.version
        if cls.description or cls.__doc__:
            data["description"] = cls.description or (cls.__doc__ or "").strip().splitlines()[0]
        data["type"] = self.type
        data["hooks"] = [{"events": sorted(self.events), "phase": phase} for phase in PHASES if phase in self.phases]
        if self.mode != "active":
            data["mode"] = self.mode
        if self.fail_open:
            data["failOpen"] = True
        if self.priority_hint is not None:
            data["priorityHint"] = (
                self.priority_hint if isinstance(self.priority_hint, int) else dict(self.priority_hint)
            )
        schema = cls.Options.model_json_schema()
        if schema.get("properties"):
            data["configSchema"] = schema
        return data


_instances: dict[type[Interceptor], Interceptor] = {}


def _instance(cls: type[Interceptor]) -> Interceptor:
    """The one instance of `cls` in this process (interceptors keep no per-request state)."""
    if cls not in _instances:
        _instances[cls] = cls()
    return _instances[cls]


_shared_options: dict[pydantic.BaseModel, pydantic.BaseModel] = {}


def _shared(options: pydantic.BaseModel) -> pydantic.BaseModel:
    """Equal frozen options as one object, so entries configured alike can share one (frozen) `Invocation`."""
    if not options.model_config.get("frozen"):
        return options
    try:
        return _shared_options.setdefault(options, options)
    except TypeError:  # a field value that cannot be hashed
        return options


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_string_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(item, str) and item for item in value)


class _EntryParser:
    """Reads one entry into a `PlanEntry`, collecting every problem instead of stopping at the first."""

    def __init__(self, label: str, problems: list[Problem]) -> None:
        self.label = label
        self.problems = problems

    def problem(self, kind: str, message: str, hint: str) -> None:
        self.problems.append(Problem(kind, f"{self.label} {message}", hint))

    def parse(self, raw: Any, index: int) -> PlanEntry | None:
        if isinstance(raw, str):
            raw = {"CLASS": raw}
        elif not isinstance(raw, Mapping):
            self.problem(
                PROBLEM_VALUE, "must be an import string or a dict.", "Write 'path.to.Class' or {'CLASS': ...}."
            )
            return None
        for key in raw:
            if key not in ENTRY_KEYS:
                self.problem(
                    PROBLEM_VALUE, f"has an unknown key {str(key)[:20]!r}.", f"Use only {', '.join(ENTRY_KEYS)}."
                )
        cls = self.resolve(raw.get("CLASS"))
        if cls is None:
            return None
        before = len(self.problems)
        name = raw.get("NAME", cls.name or cls.__name__)
        if not isinstance(name, str) or not name:
            self.problem(PROBLEM_VALUE, "has an invalid NAME.", "Use a non-empty string.")
        events = self.narrowed("EVENTS", raw, cls.events, cls)
        phases = self.narrowed("PHASES", raw, cls.phases, cls)
        priority, hint = self.priority(raw, cls)
        mode = raw.get("MODE", cls.mode)
        if mode not in MODES:
            self.problem(PROBLEM_VALUE, "has an invalid MODE.", "Use 'active' or 'audit'.")
        fail_open = raw.get("FAIL_OPEN", cls.fail_open)
        if not isinstance(fail_open, bool):
            self.problem(PROBLEM_VALUE, "has an invalid FAIL_OPEN.", "Use True or False.")
        timeout_ms = raw.get("TIMEOUT_MS", cls.timeout_ms)
        if timeout_ms is not None and not (_is_int(timeout_ms) and timeout_ms > 0):
            self.problem(PROBLEM_VALUE, "has an invalid TIMEOUT_MS.", "Use a positive number of milliseconds, or None.")
        options = self.options(raw.get("OPTIONS") or {}, cls)
        if len(self.problems) > before or options is None:
            return None
        return PlanEntry(
            name=name,
            interceptor=_instance(cls),
            type=cls.type,
            events=frozenset(events),
            phases=frozenset(phases),
            priority=priority,
            priority_hint=hint,
            mode=mode,
            fail_open=fail_open,
            timeout_ms=timeout_ms,
            options=_shared(options),
            index=index,
        )

    def resolve(self, path: Any) -> type[Interceptor] | None:
        cls = path
        if isinstance(path, str):
            try:
                cls = import_string(path)
            except ImportError:
                self.problem(
                    PROBLEM_IMPORT, "names a class that cannot be imported.", f"Check the dotted path {path!r}."
                )
                return None
        if not (isinstance(cls, type) and issubclass(cls, Interceptor) and cls.entrypoint):
            self.problem(
                PROBLEM_NOT_INTERCEPTOR,
                "is not an interceptor class.",
                "Subclass ValidationInterceptor, MutationInterceptor or SinkInterceptor.",
            )
            return None
        return cls

    def narrowed(self, key: str, raw: Mapping[str, Any], declared: Sequence[str], cls: type) -> Sequence[str]:
        """The entry's EVENTS or PHASES: a subset of what the class declares (`"*"` covers every event)."""
        value = raw.get(key, declared)
        if not _is_string_list(value) or (key == "PHASES" and not set(value) <= set(PHASES)):
            hint = "Use a list of 'request' and/or 'response'." if key == "PHASES" else "Use a list of event names."
            self.problem(PROBLEM_VALUE, f"has an invalid {key}.", hint)
            return ()
        if not set(value) <= set(declared) and "*" not in declared:
            what = "events" if key == "EVENTS" else "phases"
            self.problem(
                PROBLEM_WIDENED,
                f"hooks {what} its class does not declare.",
                f"{cls.__name__} declares {', '.join(declared)}; {key} may only narrow that.",
            )
            return ()
        return list(value)

    def priority(self, raw: Mapping[str, Any], cls: type[Interceptor]) -> tuple[dict[str, int], Any]:
        if "PRIORITY" in raw:
            hint = raw["PRIORITY"]
        else:
            per_phase = {
                phase: value
                for phase, value in (("request", cls.request_priority), ("response", cls.response_priority))
                if value is not None
            }
            if cls.priority is not None and per_phase:
                self.problem(
                    PROBLEM_PRIORITY_BOTH,
                    "has a scalar and a per-phase priority.",
                    f"Give {cls.__name__} priority or request_/response_priority, not both.",
                )
                return {}, None
            hint = cls.priority if cls.priority is not None else (per_phase or None)
        if hint is None:
            return dict.fromkeys(PHASES, 0), None
        if _is_int(hint):
            return dict.fromkeys(PHASES, hint), hint
        if isinstance(hint, Mapping) and set(hint) <= set(PHASES) and all(_is_int(v) for v in hint.values()):
            return {phase: hint.get(phase, 0) for phase in PHASES}, dict(hint)
        self.problem(PROBLEM_VALUE, "has an invalid PRIORITY.", "Use an integer, or {'request': n, 'response': n}.")
        return {}, None

    def options(self, raw: Any, cls: type[Interceptor]) -> pydantic.BaseModel | None:
        try:
            options: pydantic.BaseModel = cls.Options.model_validate(raw)
            return options
        except pydantic.ValidationError as error:
            where, problem, *_ = validation_problems(error)[0]
            self.problem(
                PROBLEM_OPTIONS, f"has OPTIONS {cls.__name__} rejects.", f"{where or 'OPTIONS'}: {problem}."[:120]
            )
            return None


def _parse(config: Any, label: str) -> tuple[list[PlanEntry], list[Problem]]:
    problems: list[Problem] = []
    if not isinstance(config, (list, tuple)):
        problems.append(
            Problem(PROBLEM_VALUE, f"{label} must be a list.", "List import strings or dicts, like MIDDLEWARE.")
        )
        return [], problems
    entries: list[PlanEntry] = []
    seen: set[str] = set()
    for index, raw in enumerate(config):
        parser = _EntryParser(f"{label}[{index}]", problems)
        entry = parser.parse(raw, index)
        if entry is None:
            continue
        if entry.name in seen:
            parser.problem(PROBLEM_DUPLICATE, f"reuses the name {entry.name[:20]!r}.", "Give one of them a NAME.")
            continue
        seen.add(entry.name)
        entries.append(entry)
    return entries, problems


def plan_problems(config: Any, label: str) -> list[Problem]:
    """Every mistake in an interceptor list (what the system checks report)."""
    return _parse(config, label)[1]


def build_plan(
    config: Any,
    *,
    label: str = "MCP_DJANGO['INTERCEPTORS']",
    directions: Mapping[str, str] | None = None,
    chain_timeout_ms: int | None = None,
) -> InterceptorPlan:
    """Build the plan for an interceptor list (a `MCP_DJANGO["INTERCEPTORS"]` value).

    Args:
        config: the list of entries: import strings or dicts with `CLASS`, `NAME`, `OPTIONS`,
            `EVENTS`, `PHASES`, `PRIORITY`, `MODE`, `FAIL_OPEN`, `TIMEOUT_MS`.
        label: how problems name the list.
        directions: `{"request": "sending"|"receiving", "response": ...}`; missing keys keep the defaults.
        chain_timeout_ms: a deadline for each phase of the whole chain; None for none.

    Raises:
        InterceptorConfigError: the list has mistakes (the system checks name them first).
    """
    entries, problems = _parse(config, label)
    if problems:
        raise InterceptorConfigError(problems)
    return InterceptorPlan(
        entries, directions={**DEFAULT_DIRECTIONS, **(directions or {})}, timeout_ms=chain_timeout_ms
    )


# -- execution ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class InvocationRecord:
    """What one invocation gave: its result, or why it failed (an exception, a timeout, a malformed result)."""

    interceptor: str
    type: str
    phase: str
    mode: str
    result: ValidationResult | MutationResult | SinkResult | None
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def timed_out(self) -> bool:
        return self.error == "timeout"


@dataclasses.dataclass(slots=True)
class ChainResult:
    """The outcome of one phase of the chain (never sent on the wire).

    `status` is `"success"`, `"validation_failed"`, `"mutation_failed"` or `"timeout"`; anything
    but success blocks the operation, and `final_payload` is then the phase's input, untouched.
    """

    event: str
    phase: str
    status: str
    final_payload: dict[str, Any]
    results: list[InvocationRecord]
    validation_summary: dict[str, int]
    aborted_at: dict[str, Any] | None = None
    total_duration_ms: float = 0.0
    sinks_ran: bool = False

    @property
    def blocked(self) -> bool:
        return self.status != "success"

    def messages(self) -> list[str]:
        """Every validation message and failure, for the log (never for the client)."""
        lines = []
        for record in self.results:
            if record.error is not None:
                lines.append(f"{record.interceptor}: failed: {record.error}")
            elif isinstance(record.result, ValidationResult):
                lines += [f"{record.interceptor}: [{m.severity}] {m.message}" for m in record.result.messages]
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
        return ChainResult(
            event=event,
            phase=phase,
            status=run.status,
            final_payload=run.payload if run.status == "success" else payload,
            results=run.results,
            validation_summary=run.summary,
            aborted_at=run.aborted_at,
            total_duration_ms=(time.perf_counter() - started) * 1000,
            sinks_ran=run.sinks_ran,
        )

    async def run_sinks(self, event: str, phase: str, payload: dict[str, Any], context: InterceptorContext) -> None:
        """Let the sinks of `phase` observe `payload` (a refusal or an error that ended the operation)."""
        sinks = self.select(event, phase)[2]
        if sinks:
            await _PhaseRun(self, event, phase, payload, context).sink(sinks)

    async def invoke(self, entry: PlanEntry, invocation: Invocation, timeout_ms: int | None) -> InvocationRecord:
        """Invoke one entry on its own (the `interceptor/invoke` wire method)."""
        original = invocation.payload
        if entry.type == "mutation":
            invocation = dataclasses.replace(invocation, payload=_copy(original))
        return await _invoke(entry, invocation, timeout_ms, original=original)


class _PhaseRun:
    """The state of one phase being run: the current payload, the records, the verdict."""

    __slots__ = (
        "aborted_at",
        "context",
        "event",
        "payload",
        "phase",
        "plan",
        "results",
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
        self.results: list[InvocationRecord] = []
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
            invocation = Invocation(self.event, self.phase, _copy(self.payload), entry.options, self.context)  # type: ignore[arg-type]
            record = await _invoke(entry, invocation, entry.timeout_ms, original=self.payload)
            self.results.append(record)
            if record.error is None:
                result = record.result
                assert isinstance(result, MutationResult)
                if entry.mode == "active" and result.modified:
                    self.payload = result.payload
            elif entry.mode == "active" and not entry.fail_open:
                reason = record.error
                self.abort("mutation_failed", {"interceptor": entry.name, "reason": reason, "type": "mutation"})
                return

    async def validate(self, validators: tuple[PlanEntry, ...]) -> None:
        """All at once on one snapshot; every validator runs, and the first blocker in plan order is named."""
        invocations = self.invocations(validators)
        if len(validators) == 1:
            records = [await _invoke(validators[0], invocations[0], validators[0].timeout_ms)]
        else:
            pairs = zip(validators, invocations, strict=True)
            records = await gather_eagerly([_invoke(entry, call, entry.timeout_ms) for entry, call in pairs])
        self.results += records
        for entry, record in zip(validators, records, strict=True):
            self.count(record)
            if entry.mode != "active":
                continue
            result = record.result
            if record.error is not None and not entry.fail_open:
                reason = record.error
            elif isinstance(result, ValidationResult) and record.error is None and result.blocks():
                reason = result.messages[0].message if result.messages else "Validation failed"
            else:
                continue
            self.abort("validation_failed", {"interceptor": entry.name, "reason": reason, "type": "validation"})

    async def sink(self, sinks: tuple[PlanEntry, ...]) -> None:
        """All at once; a failure is swallowed and recorded as `recorded=False`."""
        self.sinks_ran = True
        pairs = zip(sinks, self.invocations(sinks), strict=True)
        self.results += await gather_eagerly([_invoke(entry, call, entry.timeout_ms) for entry, call in pairs])

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

    def count(self, record: InvocationRecord) -> None:
        result = record.result
        if record.error is not None or not isinstance(result, ValidationResult):
            self.summary["errors"] += 1
            return
        if result.valid and not result.messages:
            return  # the common verdict: nothing to count
        severities: list[str] = [m.severity for m in result.messages]
        if not severities and not result.valid:
            severities = [result.severity or "error"]
        for severity in severities:
            self.summary[_SUMMARY_KEYS.get(severity, "errors")] += 1


async def gather_eagerly(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines concurrently, like `asyncio.gather`, but start each one at once in the current task.

    Most interceptors finish without ever waiting (a regex, a dict lookup): those complete right here,
    with no task and no trip through the event loop. Only a coroutine that really suspends is handed,
    from the point where it suspended, to a task of its own. (Python 3.12's eager tasks do the same.)
    Cancelling the caller cancels every coroutine still running, as with `gather`.
    """
    results: list[Any] = [None] * len(coroutines)
    suspended: list[tuple[int, _Resumed]] = []
    for index, coroutine in enumerate(coroutines):
        try:
            awaited = coroutine.send(None)
        except StopIteration as finished:
            results[index] = finished.value
        else:
            suspended.append((index, _Resumed(coroutine, awaited)))
    try:
        for index, resumed in suspended:
            results[index] = await resumed.task
    except BaseException:
        for _, resumed in suspended:
            resumed.cancel()
        raise
    return results


class _Resumed:
    """A coroutine that suspended while started eagerly, carried on by a task from where it stopped."""

    def __init__(self, coroutine: Coroutine[Any, Any, Any], awaited: Any) -> None:
        self.coroutine = coroutine
        self.started = False
        self.task: asyncio.Future[Any] = asyncio.ensure_future(self._carry_on(awaited))

    async def _carry_on(self, awaited: Any) -> Any:
        self.started = True
        return await _resume(self.coroutine, awaited)

    def cancel(self) -> None:
        self.task.cancel()
        if not self.started:
            # The task will never run, so the coroutine would stay suspended: cancel it where it waits.
            self.task.add_done_callback(lambda _: _throw_cancel(self.coroutine))


def _throw_cancel(coroutine: Coroutine[Any, Any, Any]) -> None:
    try:
        coroutine.throw(asyncio.CancelledError())
    except (asyncio.CancelledError, StopIteration):
        return
    except BaseException:
        logger.debug("A cancelled interceptor raised while being cancelled", exc_info=True)
        return
    coroutine.close()  # it swallowed the cancellation and waited again: stop it for good


@types.coroutine
def _resume(coroutine: Coroutine[Any, Any, Any], awaited: Any) -> Generator[Any, Any, Any]:
    """Drive a coroutine that already suspended on `awaited`, from within the task awaiting this."""
    while True:
        try:
            sent = yield awaited
        except BaseException as exc:  # cancellation and the like go down to the coroutine
            try:
                awaited = coroutine.throw(exc)
            except StopIteration as finished:
                return finished.value
        else:
            try:
                awaited = coroutine.send(sent)
            except StopIteration as finished:
                return finished.value


async def _invoke(
    entry: PlanEntry, invocation: Invocation, timeout_ms: int | None, *, original: dict[str, Any] | None = None
) -> InvocationRecord:
    """Call one interceptor, bounded by `timeout_ms`, and turn whatever happens into a record.

    `original` is the payload a mutator's copy was made from: `modified=False` must return it unchanged.
    """
    started = _clock()
    error: str | None = None
    result: Any = None
    try:
        outcome = entry.call(invocation)
        raw = await (outcome if timeout_ms is None else asyncio.wait_for(outcome, timeout_ms / 1000))
        if raw is True and entry.type == "validation":
            result = _VALID  # the common verdicts, without a call
        elif raw is None and entry.type == "sink":
            result = _RECORDED
        else:
            result = _as_result(entry, raw, invocation.payload if original is None else original)
    except TimeoutError:
        error = "timeout"
        logger.warning("Interceptor %r timed out after %s ms on %s", entry.name, timeout_ms, invocation.event)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        logger.warning(
            "Interceptor %r failed on %s (%s)", entry.name, invocation.event, invocation.phase, exc_info=True
        )
    if error is not None and entry.type == "sink":
        result = _NOT_RECORDED
    duration = (_clock() - started) * 1000
    return InvocationRecord(entry.name, entry.type, invocation.phase, entry.mode, result, error, duration)


def _as_result(entry: PlanEntry, raw: Any, original: dict[str, Any]) -> ValidationResult | MutationResult | SinkResult:
    """Normalize what an interceptor returned, or raise `TypeError` for a result of the wrong kind."""
    if entry.type == "validation":
        if raw is True or raw is False:
            return _VALID if raw else _INVALID
        if isinstance(raw, ValidationResult):
            return raw
    elif entry.type == "mutation":
        if isinstance(raw, MutationResult):
            if not raw.modified and raw.payload != original:
                raise TypeError("modified=False with a payload that differs from the input")
            return raw
    else:
        if raw is None or raw is True:
            return _RECORDED
        if raw is False:
            return _NOT_RECORDED
        if isinstance(raw, SinkResult):
            return raw
        return _RECORDED
    raise TypeError(f"a {entry.type} interceptor returned {type(raw).__name__}")


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars), much cheaper than `copy.deepcopy`."""
    if isinstance(value, dict):
        return {key: item if type(item) in _ATOMS else _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _ATOMS else _copy(item) for item in value]
    return value


_ATOMS: Final = frozenset({str, int, float, bool, type(None)})
"""Values `_copy` hands back as they are, without a call."""
