"""Reading an interceptor list: each entry (an import string or a dict, like `MIDDLEWARE`) becomes a
`PlanEntry` with its effective policy, and every mistake a `Problem`.

`checks.py` reports the problems as system checks (one check ID per kind); `chain.build_plan()`
raises `InterceptorConfigError` for them and builds the plan from the entries.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import sync_to_async
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from mcp_django.interceptors.base import PHASES, Interceptor, Invocation
from mcp_django.protocol.errors import validation_problems
from mcp_django.runtime.executor import run_sync

if TYPE_CHECKING:
    import pydantic

ENTRY_KEYS: Final = ("CLASS", "NAME", "OPTIONS", "EVENTS", "PHASES", "PRIORITY", "MODE", "FAIL_OPEN", "TIMEOUT")
MODES: Final = ("active", "audit")

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
    inline: bool = dataclasses.field(init=False, repr=False, compare=False)
    """The method is a coroutine function, run in the caller's task: it ends before the chain goes on.
    (A sync one runs on a thread, which a timeout or a cancellation leaves running.)"""

    def __post_init__(self) -> None:
        method = getattr(self.interceptor, type(self.interceptor).entrypoint)
        object.__setattr__(self, "inline", inspect.iscoroutinefunction(method))
        if not self.inline:
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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


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
        timeout = raw.get("TIMEOUT", cls.timeout)
        if timeout is not None and not (_is_number(timeout) and timeout > 0):
            self.problem(PROBLEM_VALUE, "has an invalid TIMEOUT.", "Use a positive number of seconds, or None.")
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
            timeout_ms=None if timeout is None else round(timeout * 1000),
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
        import pydantic  # here, not when the package loads: a management command pays none (issue 34)

        try:
            options: pydantic.BaseModel = cls.Options.model_validate(raw)
            return options
        except pydantic.ValidationError as error:
            where, problem, *_ = validation_problems(error)[0]
            self.problem(
                PROBLEM_OPTIONS, f"has OPTIONS {cls.__name__} rejects.", f"{where or 'OPTIONS'}: {problem}."[:120]
            )
            return None


def is_server_entry(raw: Any) -> bool:
    """True for a `{"SERVER": ...}` entry: the interceptors of a remote server (`mcp_django.gateway.remote_chain`)."""
    return isinstance(raw, Mapping) and "SERVER" in raw


def parse_entries(config: Any, label: str) -> tuple[list[PlanEntry], list[Problem]]:
    """Read an interceptor list into its entries and every mistake in it (an entry with one is left out).

    `{"SERVER": ...}` entries are skipped: the gateway reads and checks them (docs/gateway.md).
    """
    problems: list[Problem] = []
    if not isinstance(config, (list, tuple)):
        problems.append(
            Problem(PROBLEM_VALUE, f"{label} must be a list.", "List import strings or dicts, like MIDDLEWARE.")
        )
        return [], problems
    entries: list[PlanEntry] = []
    seen: set[str] = set()
    for index, raw in enumerate(config):
        if is_server_entry(raw):
            continue
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
    return parse_entries(config, label)[1]
