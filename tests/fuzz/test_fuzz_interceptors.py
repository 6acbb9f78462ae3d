"""The interceptor chain against a reference: random chains of validators, mutators and sinks (issue 26).

The compiled chain lends mutators the payload instead of a copy each, skips what cannot apply, and
shares invocations and verdicts. `reference()` below is the chain as it was specified before any of
that: straightforward, a deep copy of the payload for every mutator. For any chain, payload and
direction the two must agree on everything a caller or an auditor can see: the status, where it
aborted, the counts, the final payload, each interceptor's outcome (its result, the payload a
mutator returned, its error), what each interceptor was shown, and the caller's payload, untouched.
The mutators change their payload in every way one can (in place, nested, shared with what they
return, then failing or saying `modified=False`), some wait, some hang past their timeout.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

import pydantic
from hypothesis import given
from hypothesis import strategies as st

from mcp_django.interceptors import (
    InterceptorPlan,
    Invocation,
    MutationInterceptor,
    MutationResult,
    SinkInterceptor,
    SinkResult,
    ValidationInterceptor,
    ValidationMessage,
    ValidationResult,
    build_plan,
)
from mcp_django.interceptors.config import PlanEntry
from tests.interceptors.support import CONTEXT

EVENT = "tools/call"
HANG_S = 30.0
CHAIN_TIMEOUT_MS = 300
SEEN: list[tuple[str, str, str]] = []
"""What each interceptor was shown: (name, phase, the payload as JSON), in the order they started."""


class Script(pydantic.BaseModel):
    """What a scripted interceptor does (its options)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    behaviour: str = "same"
    key: str = "k"
    value: str | int = "v"
    wait: bool = False
    hang: bool = False


def _seen(invocation: Invocation) -> None:
    script: Script = invocation.options
    SEEN.append((script.name, invocation.phase, json.dumps(invocation.payload)))


def _nested(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload's `arguments` when it is a dict (a nested part to change in place), else the payload."""
    arguments = payload.get("arguments")
    return arguments if isinstance(arguments, dict) else payload


def mutation(script: Script, payload: dict[str, Any]) -> Any:
    """What a scripted mutator does to the payload it was handed, and returns."""
    key, value, behaviour = script.key, script.value, script.behaviour
    if behaviour == "same":
        return MutationResult(modified=False, payload=payload)
    if behaviour == "same-copy":
        return MutationResult(modified=False, payload=copy.deepcopy(payload))
    if behaviour == "same-but-modified":
        return MutationResult(modified=True, payload=payload)
    if behaviour in ("set", "set-unmodified"):
        payload[key] = value
        return MutationResult(modified=behaviour == "set", payload=payload)
    if behaviour in ("nested", "nested-unmodified"):
        _nested(payload)[key] = value
        return MutationResult(modified=behaviour == "nested", payload=payload)
    if behaviour == "nested-shared":  # changes a nested part in place and returns a new dict sharing it
        _nested(payload)[key] = value
        return MutationResult(modified=True, payload={**payload})
    if behaviour == "nested-then-fresh":
        _nested(payload)[key] = value
        return MutationResult(modified=True, payload={"fresh": value})
    if behaviour == "new":
        return MutationResult(modified=True, payload={**payload, key: value}, info={"n": 1})
    if behaviour == "append":
        steps = payload.setdefault("steps", [])
        if isinstance(steps, list):
            steps.append(value)
        return MutationResult(modified=True, payload=payload)
    if behaviour == "pop":
        payload.pop("name", None)
        _nested(payload).pop(key, None)
        return MutationResult(modified=True, payload=payload)
    if behaviour == "clear-unmodified":
        payload.clear()
        return MutationResult(modified=False, payload=payload)
    if behaviour == "set-then-raise":
        payload[key] = value
        _nested(payload)[key] = value
        raise RuntimeError("mutator failed")
    if behaviour == "liar":
        return MutationResult(modified=False, payload={"other": value})
    if behaviour == "wrong-type":
        return True
    raise AssertionError(behaviour)


def verdict(script: Script, payload: dict[str, Any]) -> Any:
    behaviour = script.behaviour
    if behaviour == "true":
        return True
    if behaviour == "false":
        return False
    if behaviour == "raise":
        raise RuntimeError("validator failed")
    if behaviour == "wrong-type":
        return "yes"
    severity = None if script.value == "none" else str(script.value)  # "error", "warn", "info" or "fatal"
    level: Literal["info", "warn", "error"] = "warn" if severity == "warn" else "error"
    level = "info" if severity == "info" else level
    messages = [ValidationMessage(f"{script.name} says", level)] if script.key == "m" else []
    return ValidationResult(valid=behaviour == "valid", severity=severity, messages=messages)


def sink_result(script: Script, payload: dict[str, Any]) -> Any:
    behaviour = script.behaviour
    if behaviour == "raise":
        raise RuntimeError("sink failed")
    return {"none": None, "true": True, "false": False, "wrong-type": "x", "result": SinkResult(metrics={"n": 1.0})}[
        behaviour
    ]


async def _scripted(
    invocation: Invocation, answer: Callable[[Script, dict[str, Any]], Any], *, scribble: bool = False
) -> Any:
    """Note what was shown, wait (or hang) if scripted to, then give `answer(script, payload)`."""
    _seen(invocation)
    script: Script = invocation.options
    if script.hang:
        if scribble:  # a mutator changes its payload in place, then never finishes
            _nested(invocation.payload)[script.key] = script.value
        await asyncio.sleep(HANG_S)
    if script.wait:
        await asyncio.sleep(0)
    return answer(script, invocation.payload)


class ScriptedMutation(MutationInterceptor):
    Options = Script

    async def mutate(self, invocation: Invocation) -> Any:
        return await _scripted(invocation, mutation, scribble=True)


class ScriptedSyncMutation(MutationInterceptor):
    """A plain `def` mutator (run on a thread)."""

    Options = Script

    def mutate(self, invocation: Invocation) -> Any:
        _seen(invocation)
        return mutation(invocation.options, invocation.payload)


class ScriptedValidation(ValidationInterceptor):
    Options = Script

    async def validate(self, invocation: Invocation) -> Any:
        return await _scripted(invocation, verdict)


class ScriptedSink(SinkInterceptor):
    Options = Script

    async def record(self, invocation: Invocation) -> Any:
        return await _scripted(invocation, sink_result)


# -- the reference: the chain's semantics, with a deep copy for every mutator -------------------------


async def reference(plan: InterceptorPlan, phase: str, payload: dict[str, Any]) -> dict[str, Any]:
    """One phase run the plain way; what it gives, in the shape `observed()` gives the real chain's."""
    chosen = sorted(
        (entry for entry in plan.entries if entry.hooks(EVENT, phase)),
        key=lambda entry: (entry.priority[phase], entry.name, entry.index),
    )
    passes = [[entry for entry in chosen if entry.type == kind] for kind in ("mutation", "validation", "sink")]
    if plan.directions.get(phase) == "receiving":
        passes = [passes[1], passes[2], passes[0]]
    state: dict[str, Any] = {
        "status": "success",
        "aborted_at": None,
        "summary": {"errors": 0, "warnings": 0, "infos": 0},
        "payload": payload,
        "outcomes": [],
        "sinks_ran": False,
    }

    def abort(status: str, aborted_at: dict[str, Any]) -> None:
        if state["status"] == "success":
            state["status"], state["aborted_at"] = status, aborted_at

    async def run_passes() -> None:
        for entries in passes:
            if not entries:
                continue
            if entries[0].type == "mutation":
                for entry in entries:
                    current = state["payload"]
                    outcome = await _reference_call(entry, phase, copy.deepcopy(current), current)
                    state["outcomes"].append(outcome)
                    _, result, error = outcome
                    if error is None:
                        if entry.mode == "active" and result.modified:
                            state["payload"] = result.payload
                    elif entry.mode == "active" and not entry.fail_open:
                        abort("mutation_failed", {"interceptor": entry.name, "reason": error, "type": "mutation"})
                        return
            else:
                current = state["payload"]
                if entries[0].type == "sink":
                    state["sinks_ran"] = True  # even if the chain's deadline stops them
                outcomes = await asyncio.gather(*(_reference_call(entry, phase, current, current) for entry in entries))
                state["outcomes"] += outcomes
                for entry, result, error in outcomes if entries[0].type == "validation" else ():
                    _reference_count(state["summary"], result, error)
                    if entry.mode != "active":
                        continue
                    if error is not None and not entry.fail_open:
                        abort("validation_failed", {"interceptor": entry.name, "reason": error, "type": "validation"})
                    elif error is None and not result.valid and result.severity not in ("warn", "info"):
                        reason = result.messages[0].message if result.messages else "Validation failed"
                        abort("validation_failed", {"interceptor": entry.name, "reason": reason, "type": "validation"})
            if state["status"] != "success":
                return

    try:
        if plan.timeout_ms is None:
            await run_passes()
        else:
            async with asyncio.timeout(plan.timeout_ms / 1000):
                await run_passes()
    except TimeoutError:
        abort("timeout", {"type": "chain", "reason": "timeout", "timeoutMs": plan.timeout_ms})
    return {
        "status": state["status"],
        "aborted_at": state["aborted_at"],
        "summary": state["summary"],
        "final_payload": json.dumps(state["payload"] if state["status"] == "success" else payload),
        "sinks_ran": state["sinks_ran"],
        "outcomes": [_described(*outcome) for outcome in state["outcomes"]],
    }


async def _reference_call(
    entry: PlanEntry, phase: str, handed: dict[str, Any], original: dict[str, Any]
) -> tuple[PlanEntry, Any, str | None]:
    invocation = Invocation(EVENT, phase, handed, entry.options, CONTEXT)  # type: ignore[arg-type]
    method = getattr(entry.interceptor, type(entry.interceptor).entrypoint)
    try:
        returned = method(invocation)
        if asyncio.iscoroutine(returned):
            timeout = None if entry.timeout_ms is None else entry.timeout_ms / 1000
            returned = await asyncio.wait_for(returned, timeout)
        result = _reference_result(entry, returned, original)
    except TimeoutError:
        return entry, SinkResult(recorded=False) if entry.type == "sink" else None, "timeout"
    except Exception as exc:
        return entry, SinkResult(recorded=False) if entry.type == "sink" else None, f"{type(exc).__name__}: {exc}"
    return entry, result, None


def _reference_result(entry: PlanEntry, raw: Any, original: dict[str, Any]) -> Any:
    if entry.type == "validation":
        if isinstance(raw, bool):
            return ValidationResult(valid=raw)
        if isinstance(raw, ValidationResult):
            return raw
    elif entry.type == "mutation":
        if isinstance(raw, MutationResult):
            if not raw.modified and raw.payload != original:
                raise TypeError("modified=False with a payload that differs from the input")
            return raw
    else:
        if isinstance(raw, SinkResult):
            return raw
        return SinkResult(recorded=raw is not False)
    raise TypeError(f"a {entry.type} interceptor returned {type(raw).__name__}")


def _reference_count(summary: dict[str, int], result: Any, error: str | None) -> None:
    if error is not None:
        summary["errors"] += 1
        return
    severities = [message.severity for message in result.messages]
    if not severities and not result.valid:
        severities = [result.severity or "error"]
    for severity in severities:
        summary[{"warn": "warnings", "info": "infos"}.get(severity, "errors")] += 1


def _described(entry: PlanEntry, result: Any, error: str | None, *_: Any) -> tuple[Any, ...]:
    """An outcome as an auditor reads it; a mutation's payload as JSON (so that key order counts too)."""
    if isinstance(result, MutationResult):
        result = (result.modified, json.dumps(result.payload), result.info)
    return (entry.name, entry.type, entry.mode, error, result)


async def observed(plan: InterceptorPlan, phase: str, payload: dict[str, Any]) -> dict[str, Any]:
    """One phase run by the real chain, described as `reference()` describes its own."""
    chain = await plan.run(EVENT, phase, payload, CONTEXT)
    records = chain.results
    assert [(record.interceptor, record.error) for record in records] == [
        (entry.name, error) for entry, _, error, _ in chain.outcomes
    ]
    return {
        "status": chain.status,
        "aborted_at": chain.aborted_at,
        "summary": chain.validation_summary,
        "final_payload": json.dumps(chain.final_payload),
        "sinks_ran": chain.sinks_ran,
        # Read after the whole phase: a later mutator must not have changed an earlier one's record.
        "outcomes": [_described(*outcome) for outcome in chain.outcomes],
    }


# -- what is drawn ------------------------------------------------------------------------------------

MUTATIONS = [
    "same",
    "same-copy",
    "same-but-modified",
    "set",
    "set-unmodified",
    "nested",
    "nested-unmodified",
    "nested-shared",
    "nested-then-fresh",
    "new",
    "append",
    "pop",
    "clear-unmodified",
    "set-then-raise",
    "liar",
    "wrong-type",
]
VALIDATIONS = ["true", "false", "raise", "wrong-type", "valid", "invalid"]
SINKS = ["none", "true", "false", "wrong-type", "result", "raise"]
NAMES = ["a", "b", "B", "c", "aa", "A", "z", "m"]
values = st.text(alphabet="xyz", max_size=3) | st.integers(min_value=2, max_value=5)
"""Values that compare equal only when they are the same JSON (no 1 == True, no 1 == 1.0)."""
json_values = st.recursive(
    values,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from("kpqs"), children, max_size=3),
    max_leaves=8,
)
payloads = st.fixed_dictionaries(
    {},
    optional={
        "name": values,
        "arguments": st.dictionaries(st.sampled_from("kpq"), json_values, max_size=3),
        "steps": st.lists(values, max_size=2),
        "k": json_values,
        "_meta": st.fixed_dictionaries({"p": st.dictionaries(st.sampled_from("kq"), values, max_size=2)}),
    },
)


@st.composite
def entries(draw: st.DrawFn, chain_timeout: bool) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=7, unique=True))
    drawn = []
    for name in names:
        kind = draw(st.sampled_from(["mutation", "mutation", "validation", "sink"]))
        behaviour = draw(st.sampled_from({"mutation": MUTATIONS, "validation": VALIDATIONS, "sink": SINKS}[kind]))
        value = draw(st.sampled_from(["error", "warn", "info", "none", "fatal"]) if kind == "validation" else values)
        cls: type = {"mutation": ScriptedMutation, "validation": ScriptedValidation, "sink": ScriptedSink}[kind]
        sync = kind == "mutation" and not chain_timeout and draw(st.integers(0, 9)) == 0
        hang = not sync and draw(st.integers(0, 19)) == 0
        timeout_ms: int | None = draw(st.sampled_from([None, None, 10_000]))
        if hang and not (chain_timeout and draw(st.booleans())):
            timeout_ms = 2  # a hang ends by its own timeout, or (sometimes) by the chain's
        script = {
            "name": name,
            "behaviour": behaviour,
            "key": draw(st.sampled_from(["k", "p", "m"])),
            "value": value,
            "wait": not sync and draw(st.booleans()),
            "hang": hang,
        }
        entry: dict[str, Any] = {
            "CLASS": ScriptedSyncMutation if sync else cls,
            "NAME": name,
            "OPTIONS": script,
            "MODE": draw(st.sampled_from(["active", "active", "audit"])),
            "FAIL_OPEN": draw(st.booleans()),
            "TIMEOUT": None if timeout_ms is None else timeout_ms / 1000,
            "PHASES": draw(st.sampled_from([["request"], ["response"], ["request", "response"]])),
        }
        priority = draw(
            st.none()
            | st.integers(-2, 2)
            | st.fixed_dictionaries({}, optional={"request": st.integers(-2, 2), "response": st.integers(-2, 2)})
        )
        if priority is not None:
            entry["PRIORITY"] = priority
        drawn.append(entry)
    return drawn


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, str], int | None]:
    chain_timeout = draw(st.integers(0, 9)) == 0
    directions = {
        "request": draw(st.sampled_from(["sending", "receiving"])),
        "response": draw(st.sampled_from(["receiving", "sending"])),
    }
    return draw(entries(chain_timeout)), directions, CHAIN_TIMEOUT_MS if chain_timeout else None


def _phases(config: Sequence[dict[str, Any]]) -> list[str]:
    return [phase for phase in ("request", "response") if any(phase in entry["PHASES"] for entry in config)]


@given(chain=chains(), payload=payloads)
async def test_any_chain_gives_what_a_chain_copying_the_payload_for_each_mutator_gives(
    chain: tuple[list[dict[str, Any]], dict[str, str], int | None], payload: dict[str, Any]
) -> None:
    config, directions, chain_timeout_ms = chain
    plan = build_plan(config, directions=directions, chain_timeout=chain_timeout_ms and chain_timeout_ms / 1000)
    for phase in _phases(config):
        pristine = json.dumps(payload)
        SEEN.clear()
        expected = await reference(plan, phase, copy.deepcopy(payload))
        expected_seen = list(SEEN)
        SEEN.clear()
        got = await observed(plan, phase, payload)

        assert got == expected
        assert expected_seen == SEEN
        assert json.dumps(payload) == pristine, "the caller's payload was changed"
