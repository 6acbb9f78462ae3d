"""The chain's execution model (checklist B): ordering, routing, timeouts, summaries, atomicity."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_django.interceptors import InterceptorPlan, Invocation, ValidationInterceptor, build_plan
from tests.interceptors import support
from tests.interceptors.support import CONTEXT, LOG


@pytest.fixture(autouse=True)
def clear_log() -> Iterator[None]:
    LOG.clear()
    yield
    LOG.clear()


def step(tag: str, **entry: Any) -> dict[str, Any]:
    return {"CLASS": support.Step, "NAME": tag, "OPTIONS": {"tag": tag}, **entry}


def verdict(tag: str, entry: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    return {"CLASS": support.Verdict, "NAME": tag, "OPTIONS": {"tag": tag, **options}, **(entry or {})}


def sink(tag: str, **entry: Any) -> dict[str, Any]:
    return {"CLASS": support.Sink, "NAME": tag, "OPTIONS": {"tag": tag}, **entry}


async def run(plan: InterceptorPlan, phase: str = "request", payload: dict[str, Any] | None = None) -> Any:
    return await plan.run("tools/call", phase, payload if payload is not None else {"name": "echo"}, CONTEXT)


def ran(kind: str | None = None) -> list[str]:
    return [entry[1] for entry in LOG if kind is None or entry[0] == kind]


# -- ordering -------------------------------------------------------------------------------------


async def test_the_request_phase_runs_mutations_then_validations_then_sinks() -> None:
    plan = build_plan([sink("s"), verdict("v"), step("m")])
    result = await run(plan)
    assert [entry[0] for entry in LOG] == ["mutation", "validation", "sink"]
    assert result.final_payload["steps"] == ["m"]


async def test_the_response_phase_runs_validations_then_sinks_then_mutations() -> None:
    plan = build_plan([step("m"), sink("s"), verdict("v")])
    await run(plan, "response")
    assert [entry[0] for entry in LOG] == ["validation", "sink", "mutation"]


async def test_a_setting_flips_the_request_phase_to_validate_first() -> None:
    plan = build_plan([step("m"), sink("s"), verdict("v")], directions={"request": "receiving"})
    await run(plan, "request")
    assert [entry[0] for entry in LOG] == ["validation", "sink", "mutation"]


async def test_mutators_run_in_ascending_priority() -> None:
    plan = build_plan([step("late", PRIORITY=100), step("early", PRIORITY=-100), step("middle")])
    result = await run(plan)
    assert result.final_payload["steps"] == ["early", "middle", "late"]


async def test_priority_ties_are_broken_by_name_in_code_point_order() -> None:
    plan = build_plan([step("charlie", PRIORITY=10), step("alpha", PRIORITY=10), step("bravo", PRIORITY=10)])
    assert (await run(plan)).final_payload["steps"] == ["alpha", "bravo", "charlie"]
    plan = build_plan([step("b"), step("B"), step("a")])
    assert (await run(plan)).final_payload["steps"] == ["B", "a", "b"]


async def test_mixed_scalar_per_phase_and_unset_priorities_interleave_at_zero() -> None:
    plan = build_plan(
        [
            step("request-only", PRIORITY={"request": 5}),
            step("b-unset"),
            step("a-response-only", PRIORITY={"response": -7}),
            step("scalar", PRIORITY=-10),
        ]
    )
    assert (await run(plan)).final_payload["steps"] == ["scalar", "a-response-only", "b-unset", "request-only"]


async def test_per_phase_priorities_invert_the_order_between_phases() -> None:
    plan = build_plan(
        [
            step("pii", PRIORITY={"request": -50000, "response": 50000}),
            step("compressor", PRIORITY={"request": 5000, "response": -5000}),
        ]
    )
    assert (await run(plan, "request")).final_payload["steps"] == ["pii", "compressor"]
    assert (await run(plan, "response")).final_payload["steps"] == ["compressor", "pii"]


async def test_mutations_chain_each_sees_the_previous_output() -> None:
    plan = build_plan([step("one", PRIORITY=1), step("two", PRIORITY=2)])
    result = await run(plan, payload={"name": "echo", "original": True})
    assert result.final_payload == {"name": "echo", "original": True, "steps": ["one", "two"]}


async def test_the_plan_is_the_same_whatever_order_validators_finish_in() -> None:
    entries = [verdict("z", valid=False), verdict("a", valid=False, severity="error")]
    first = await run(build_plan(entries))
    second = await run(build_plan(list(reversed(entries))))
    assert (
        first.aborted_at
        == second.aborted_at
        == {"interceptor": "a", "reason": "Validation failed", "type": "validation"}
    )
    assert [record.interceptor for record in first.results] == ["a", "z"]


# -- events and phases ----------------------------------------------------------------------------


async def test_entries_are_selected_by_event_and_phase() -> None:
    plan = build_plan(
        [
            step("calls", EVENTS=["tools/call"], PHASES=["request"]),
            step("lists", EVENTS=["tools/list"]),
            step("responses", PHASES=["response"]),
        ]
    )
    assert (await run(plan)).final_payload["steps"] == ["calls"]
    assert "steps" not in (await plan.run("prompts/get", "request", {}, CONTEXT)).final_payload


async def test_a_wildcard_entry_narrowed_to_tools_call_skips_prompts_get() -> None:
    plan = build_plan([step("narrow", EVENTS=["tools/call"])])
    assert plan.intercepts("tools/call")
    assert not plan.intercepts("prompts/get")


# -- validation routing ---------------------------------------------------------------------------


async def test_an_error_verdict_blocks_and_names_the_first_blocker() -> None:
    plan = build_plan([verdict("ok"), verdict("strict", valid=False, severity="error", messages=[("no", "error")])])
    result = await run(plan)
    assert result.status == "validation_failed"
    assert result.aborted_at == {"interceptor": "strict", "reason": "no", "type": "validation"}
    assert result.final_payload == {"name": "echo"}


async def test_valid_false_without_severity_blocks() -> None:
    assert (await run(build_plan([verdict("v", valid=False)]))).blocked


@pytest.mark.parametrize("severity", ["warn", "info"])
async def test_warn_and_info_verdicts_never_block(severity: str) -> None:
    assert not (await run(build_plan([verdict("v", valid=False, severity=severity)]))).blocked


async def test_valid_true_with_severity_error_does_not_block() -> None:
    assert not (await run(build_plan([verdict("v", valid=True, severity="error")]))).blocked


async def test_an_unknown_severity_blocks() -> None:
    assert (await run(build_plan([verdict("v", valid=False, severity="fatal")]))).blocked


async def test_every_validator_runs_even_when_one_blocks() -> None:
    plan = build_plan([verdict("a", valid=False), verdict("b"), verdict("c", valid=False), verdict("d")])
    result = await run(plan)
    assert result.blocked
    assert sorted(ran("validation")) == ["a", "b", "c", "d"]


async def test_an_audit_validator_never_blocks_but_is_counted() -> None:
    result = await run(build_plan([verdict("v", {"MODE": "audit"}, valid=False, severity="error")]))
    assert result.status == "success"
    assert result.validation_summary == {"errors": 1, "warnings": 0, "infos": 0}
    assert result.aborted_at is None


async def test_policy_mode_active_makes_an_author_audit_validator_block() -> None:
    class AuthorAudit(support.Verdict):
        mode = "audit"

    entry = {"CLASS": AuthorAudit, "NAME": "a", "OPTIONS": {"valid": False}}
    assert not (await run(build_plan([entry]))).blocked
    assert (await run(build_plan([{**entry, "MODE": "active"}]))).blocked


async def test_a_crashing_validator_blocks_when_fail_closed_and_not_when_fail_open() -> None:
    assert (await run(build_plan([verdict("v", crash=True)]))).status == "validation_failed"
    assert (await run(build_plan([verdict("v", {"FAIL_OPEN": True}, crash=True)]))).status == "success"
    assert (await run(build_plan([verdict("v", {"MODE": "audit"}, crash=True)]))).status == "success"


async def test_fail_open_never_turns_an_explicit_refusal_into_an_allow() -> None:
    assert (await run(build_plan([verdict("v", {"FAIL_OPEN": True}, valid=False)]))).blocked


async def test_the_summary_counts_message_severities() -> None:
    messages = [("a", "info"), ("b", "warn"), ("c", "warn")]
    result = await run(build_plan([verdict("v", valid=True, messages=messages)]))
    assert result.validation_summary == {"errors": 0, "warnings": 2, "infos": 1}


async def test_validators_see_the_post_mutation_snapshot_when_sending() -> None:
    plan = build_plan([step("m"), {"CLASS": support.Sees, "NAME": "seer", "OPTIONS": {"tag": "seer"}}])
    await run(plan)
    assert LOG[-1] == ("validation", "seer", "request", "['m']")


async def test_receiving_side_a_blocking_validation_skips_the_mutators() -> None:
    plan = build_plan([step("m"), verdict("v", valid=False)])
    result = await run(plan, "response")
    assert result.blocked
    assert ran("mutation") == []


# -- mutation routing -----------------------------------------------------------------------------


async def test_an_audit_mutation_is_recorded_but_not_applied() -> None:
    plan = build_plan([step("shadow", MODE="audit", PRIORITY=1), step("real", PRIORITY=2)])
    result = await run(plan)
    assert result.final_payload["steps"] == ["real"]
    shadow = result.results[0]
    assert shadow.interceptor == "shadow"
    assert shadow.result.modified
    assert shadow.result.payload["steps"] == ["shadow"]


async def test_a_fail_closed_mutation_failure_aborts_and_keeps_the_payload_atomic() -> None:
    plan = build_plan(
        [
            step("before", PRIORITY=1),
            {"CLASS": support.Crash, "NAME": "crashing", "OPTIONS": {"tag": "crashing"}, "PRIORITY": 2},
            step("after", PRIORITY=3),
            verdict("v"),
        ]
    )
    payload = {"name": "echo"}
    result = await run(plan, payload=payload)
    assert result.status == "mutation_failed"
    assert result.aborted_at == {"interceptor": "crashing", "reason": "RuntimeError: boom", "type": "mutation"}
    assert result.final_payload == {"name": "echo"}
    assert payload == {"name": "echo"}
    assert ran() == ["before", "crashing"]


@pytest.mark.parametrize("policy", [{"FAIL_OPEN": True}, {"MODE": "audit"}])
async def test_a_failing_mutation_that_fails_open_or_audits_continues_unchanged(policy: dict[str, Any]) -> None:
    crash = {"CLASS": support.Crash, "NAME": "crashing", "OPTIONS": {"tag": "crashing"}, "PRIORITY": 1, **policy}
    result = await run(build_plan([crash, step("after", PRIORITY=2)]))
    assert result.status == "success"
    assert result.final_payload == {"name": "echo", "steps": ["after"]}


async def test_modified_false_with_a_different_payload_is_a_malformed_result() -> None:
    result = await run(build_plan([{"CLASS": support.Liar}]))
    assert result.status == "mutation_failed"
    assert "modified=False" in result.aborted_at["reason"]


async def test_a_sync_mutator_runs_in_a_thread() -> None:
    result = await run(build_plan([{"CLASS": support.SyncStep}]), payload={"arguments": {"text": "hi"}})
    assert result.final_payload == {"arguments": {"text": "HI"}}


# -- sinks ----------------------------------------------------------------------------------------


async def test_sink_failures_are_swallowed_and_recorded() -> None:
    result = await run(build_plan([{"CLASS": support.BrokenSink}, sink("ok")]))
    assert result.status == "success"
    broken = result.results[0]
    assert (broken.type, broken.result.recorded, broken.error) == ("sink", False, "RuntimeError: sink down")
    assert ran("sink") == ["ok"]


async def test_sinks_do_not_run_after_a_block() -> None:
    await run(build_plan([verdict("v", valid=False), sink("s")]))
    assert ran("sink") == []


# -- timeouts -------------------------------------------------------------------------------------


async def test_a_timed_out_mutation_blocks_when_fail_closed() -> None:
    result = await run(build_plan([{"CLASS": support.Hang, "TIMEOUT": 0.02}]))
    assert result.status == "mutation_failed"
    assert result.aborted_at["reason"] == "timeout"
    assert result.results[0].timed_out


async def test_a_timed_out_validator_is_routed_by_fail_open() -> None:
    assert (await run(build_plan([verdict("v", {"TIMEOUT": 0.02}, hang=True)]))).blocked
    assert not (await run(build_plan([verdict("v", {"TIMEOUT": 0.02, "FAIL_OPEN": True}, hang=True)]))).blocked


async def test_a_per_interceptor_timeout_applies_to_that_invocation_only() -> None:
    plan = build_plan([verdict("slow", {"TIMEOUT": 0.02, "FAIL_OPEN": True}, hang=True), verdict("fast")])
    result = await run(plan)
    assert [(record.interceptor, record.error) for record in result.results] == [("fast", None), ("slow", "timeout")]


async def test_two_validators_timing_out_side_by_side_are_each_routed_by_fail_open() -> None:
    """Two waiting at once: from Python 3.12 on `wait_for` enters `asyncio.timeout()`, which cancels the
    task it was entered in; started in the caller's task and carried on in another, it cancelled the call."""
    plan = build_plan([verdict(tag, {"TIMEOUT": 0.02, "FAIL_OPEN": True}, hang=True) for tag in ("a", "b")])
    result = await run(plan)
    assert not result.blocked
    assert [(record.interceptor, record.error) for record in result.results] == [("a", "timeout"), ("b", "timeout")]


class OwnDeadline(ValidationInterceptor):
    """Gives up on its own slow lookup after 20 ms, with `asyncio.timeout()` entered before it first waits."""

    async def validate(self, invocation: Invocation) -> bool:
        try:
            async with asyncio.timeout(0.02):
                await asyncio.sleep(5)
        except TimeoutError:
            return False
        return True


@pytest.mark.skipif(sys.version_info < (3, 12), reason="3.11 has no eager tasks (docs/interceptors.md, Concurrency)")
async def test_an_interceptor_with_its_own_asyncio_timeout_beside_another_times_out_itself_only() -> None:
    plan = build_plan([{"CLASS": OwnDeadline, "NAME": tag, "FAIL_OPEN": True} for tag in ("a", "b")])
    result = await run(plan)
    assert [(record.interceptor, record.result.valid) for record in result.results] == [("a", False), ("b", False)]


async def test_the_chain_timeout_blocks_the_operation() -> None:
    plan = build_plan([verdict("v", {"FAIL_OPEN": True}, hang=True)], chain_timeout=0.02)
    result = await run(plan)
    assert result.status == "timeout"
    assert result.blocked
    assert result.final_payload == {"name": "echo"}


# -- invocation ----------------------------------------------------------------------------------


async def test_each_invocation_gets_its_own_options_and_the_context() -> None:
    seen: list[Any] = []

    class Capture(support.Verdict):
        async def validate(self, invocation: Any) -> Any:
            seen.append((invocation.event, invocation.phase, invocation.options.tag, invocation.context))
            return True

    await run(
        build_plan(
            [
                {"CLASS": Capture, "NAME": "one", "OPTIONS": {"tag": "1"}},
                {"CLASS": Capture, "NAME": "two", "OPTIONS": {"tag": "2"}},
            ]
        )
    )
    assert sorted((event, phase, tag) for event, phase, tag, _ in seen) == [
        ("tools/call", "request", "1"),
        ("tools/call", "request", "2"),
    ]
    assert all(context is CONTEXT for *_, context in seen)


# -- the payload a mutator is lent ---------------------------------------------------------------


class ScribbleThenHang(support.MutationInterceptor):
    """Changes its payload in place (a nested part too), then never finishes."""

    async def mutate(self, invocation: Any) -> Any:
        invocation.payload["scribbled"] = True
        invocation.payload["arguments"]["text"] = "scribbled"
        await asyncio.Event().wait()


class ScribbleUnmodified(support.MutationInterceptor):
    """Changes its payload in place and says it did not."""

    async def mutate(self, invocation: Any) -> Any:
        invocation.payload["arguments"]["text"] = "scribbled"
        return support.MutationResult(modified=False, payload=invocation.payload)


def arguments_payload() -> dict[str, Any]:
    return {"name": "echo", "arguments": {"text": "hi"}}


@pytest.mark.parametrize("bound", [{"TIMEOUT": 0.02}, {}])
async def test_a_mutator_that_changes_its_payload_in_place_then_times_out_leaves_it_as_it_was(
    bound: dict[str, Any],
) -> None:
    plan = build_plan([{"CLASS": ScribbleThenHang, **bound}], chain_timeout=None if bound else 0.02)
    payload = arguments_payload()
    arguments = payload["arguments"]
    result = await run(plan, payload=payload)
    assert result.blocked
    assert payload == arguments_payload()
    assert payload["arguments"] is arguments
    assert result.final_payload is payload


async def test_cancelling_a_phase_while_a_mutator_waits_puts_back_what_it_changed_in_place() -> None:
    plan = build_plan([{"CLASS": ScribbleThenHang}])
    payload = arguments_payload()
    phase = asyncio.ensure_future(run(plan, payload=payload))
    await asyncio.sleep(0)
    assert payload["scribbled"]  # lent, not copied: the mutator changed the caller's dict ...
    phase.cancel()
    with pytest.raises(asyncio.CancelledError):
        await phase
    assert payload == arguments_payload()  # ... and it was put back


async def test_a_mutator_changing_its_payload_in_place_with_modified_false_is_a_malformed_result() -> None:
    payload = arguments_payload()
    result = await run(build_plan([{"CLASS": ScribbleUnmodified}, step("after", PRIORITY=1)]), payload=payload)
    assert result.status == "mutation_failed"
    assert "modified=False" in result.aborted_at["reason"]
    assert payload == arguments_payload()


async def test_a_later_mutators_change_in_place_never_reaches_an_earlier_mutators_record() -> None:
    plan = build_plan([step("one", PRIORITY=1), step("two", PRIORITY=2), step("three", PRIORITY=3)])
    result = await run(plan)
    assert [record.result.payload["steps"] for record in result.results] == [
        ["one"],
        ["one", "two"],
        ["one", "two", "three"],
    ]
    assert result.final_payload == {"name": "echo", "steps": ["one", "two", "three"]}


async def test_a_mutator_that_changes_nothing_is_lent_the_payload_itself() -> None:
    seen: list[Any] = []

    class Look(support.MutationInterceptor):
        async def mutate(self, invocation: Any) -> Any:
            seen.append(invocation.payload)
            return support.MutationResult(modified=False, payload=invocation.payload)

    payload = arguments_payload()
    result = await run(build_plan([{"CLASS": Look}]), payload=payload)
    assert seen == [payload]
    assert seen[0] is payload
    assert result.final_payload is payload


async def test_a_sync_mutator_gets_a_copy_of_its_own() -> None:
    payload = {"arguments": {"text": "hi"}}
    result = await run(build_plan([{"CLASS": support.SyncStep}]), payload=payload)
    assert result.final_payload == {"arguments": {"text": "HI"}}
    assert payload == {"arguments": {"text": "hi"}}


async def test_sinks_stopped_by_the_chain_deadline_count_as_having_run() -> None:
    class HangingSink(support.SinkInterceptor):
        async def record(self, invocation: Any) -> None:
            await asyncio.Event().wait()

    result = await run(build_plan([{"CLASS": HangingSink}], chain_timeout=0.02), "response")
    assert (result.status, result.sinks_ran) == ("timeout", True)


# -- compiled once -------------------------------------------------------------------------------


async def test_each_event_is_compiled_once_with_only_the_entries_hooking_it() -> None:
    plan = build_plan([step("calls", EVENTS=["tools/call"], PHASES=["request"]), sink("all")])
    compiled = plan.compiled_event("tools/call")
    assert plan.compiled_event("tools/call") is compiled
    assert [entry.name for entry in compiled.request.mutators] == ["calls"]
    assert [kind for kind, _ in compiled.response.passes] == ["sink"]
    assert plan.compiled_event("prompts/get").request.mutators == ()


async def test_phase_ran_receivers_see_both_phases_even_when_one_has_nothing_to_run() -> None:
    from mcp_django.interceptors.hook import InterceptorHook
    from mcp_django.interceptors.signals import phase_ran

    phases: list[str] = []

    def receiver(sender: Any, chain: Any, **kwargs: Any) -> None:
        phases.append(chain.phase)

    async def operation(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    hook = InterceptorHook(build_plan([step("calls", PHASES=["request"])]))
    await hook.around("tools/call", {"name": "echo"}, CONTEXT, operation)
    assert phases == []
    phase_ran.connect(receiver)
    try:
        await hook.around("tools/call", {"name": "echo"}, CONTEXT, operation)
    finally:
        phase_ran.disconnect(receiver)
    assert phases == ["request", "response"]
