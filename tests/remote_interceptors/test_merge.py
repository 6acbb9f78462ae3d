"""How listed interceptors enter the plan (in memory): one chain sorted by priority then name, per-phase
priorities, duplicates across servers kept, descriptors that cannot be invoked skipped, and the seed's pass order."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.gateway.interceptor_servers import Discovery, InterceptorServerConfig
from mcp_django.gateway.remote_chain import RemoteMutation, RemoteSink, UnlistedServer, remote_entries
from mcp_django.interceptors.chain import build_plan
from mcp_django.protocol import MCPError
from tests.interceptors.support import SyncStep

A = InterceptorServerConfig("a", None)
B = InterceptorServerConfig("b", None, fail_open=True)


def listed(server: InterceptorServerConfig, *descriptors: dict[str, Any]) -> Discovery:
    return Discovery(server, tuple(descriptors))


def interceptor(name: str, kind: str = "mutation", priority: Any = None, **extra: Any) -> dict[str, Any]:
    hooks = extra.pop(
        "hooks", [{"events": ["tools/call"], "phase": "request"}, {"events": ["tools/call"], "phase": "response"}]
    )
    descriptor = {"name": name, "type": kind, "hooks": hooks, **extra}
    if priority is not None:
        descriptor["priorityHint"] = priority
    return descriptor


def plan_of(local: list[Any], *found: Discovery) -> Any:
    remote: list[Any] = []
    for discovery in found:
        remote += remote_entries(discovery, len(local) + len(remote))
    return build_plan(local, remote=remote)


def names(entries: tuple[Any, ...]) -> list[str]:
    return [entry.name for entry in entries]


def test_local_and_remote_mutations_are_one_chain_sorted_by_priority_then_name() -> None:
    local = [{"CLASS": SyncStep, "NAME": "local", "PRIORITY": 5}]
    plan = plan_of(
        local,
        listed(A, interceptor("charlie", priority=10), interceptor("alpha", priority=10)),
        listed(B, interceptor("bravo", priority=10), interceptor("first", priority=-1)),
    )
    assert names(plan.select("tools/call", "request")[0]) == ["first", "local", "alpha", "bravo", "charlie"]


def test_per_phase_priorities_order_each_phase_on_its_own() -> None:
    plan = plan_of(
        [],
        listed(A, interceptor("pii", priority={"request": -10, "response": 10})),
        listed(B, interceptor("compressor", priority={"request": 10, "response": -10})),
    )
    assert names(plan.select("tools/call", "request")[0]) == ["pii", "compressor"]
    assert names(plan.select("tools/call", "response")[0]) == ["compressor", "pii"]


def test_duplicate_names_across_servers_are_kept_each_invoked_on_its_own_server() -> None:
    plan = plan_of([], listed(A, interceptor("same")), listed(B, interceptor("same")))
    mutators = plan.select("tools/call", "request")[0]
    assert names(mutators) == ["same", "same"]
    assert [entry.interceptor.server.name for entry in mutators] == ["a", "b"]


def test_the_seed_pass_order_request_mutate_validate_sink_response_validate_sink_mutate() -> None:
    found = listed(A, interceptor("m"), interceptor("v", "validation"), interceptor("s", "sink"))
    plan = plan_of([], found)
    assert [kind for kind, _ in plan.passes("tools/call", "request")] == ["mutate", "validate", "sink"]
    assert [kind for kind, _ in plan.passes("tools/call", "response")] == ["validate", "sink", "mutate"]


def test_hooks_on_different_events_per_phase_are_not_widened() -> None:
    hooks = [{"events": ["tools/call"], "phase": "request"}, {"events": ["tools/list"], "phase": "response"}]
    plan = plan_of([], listed(A, interceptor("split", hooks=hooks)))
    assert names(plan.select("tools/call", "request")[0]) == ["split"]
    assert names(plan.select("tools/call", "response")[0]) == []
    assert names(plan.select("tools/list", "response")[0]) == ["split"]
    assert names(plan.select("tools/list", "request")[0]) == []


def test_descriptors_that_cannot_be_invoked_as_listed_are_skipped() -> None:
    entries = remote_entries(
        listed(
            A,
            interceptor("unknown-type", "transform"),
            interceptor("unknown-mode", mode="enforce"),
            interceptor("bad-priority", priority="high"),
            interceptor("bad-hooks", hooks=[{"events": ["tools/call"], "phase": "both"}]),
            {"type": "mutation", "hooks": []},
            interceptor("fine"),
        ),
        0,
    )
    assert [entry.name for entry in entries] == ["fine"]
    assert isinstance(entries[0].interceptor, RemoteMutation)


def test_policy_comes_from_the_descriptor_and_the_server() -> None:
    entries = remote_entries(
        listed(A, interceptor("audited", "validation", mode="audit", failOpen=True), interceptor("s", "sink")), 0
    )
    assert [(e.mode, e.fail_open, e.timeout_ms) for e in entries] == [("audit", True, 5000), ("active", False, None)]
    assert isinstance(entries[1].interceptor, RemoteSink)
    [opened] = remote_entries(listed(B, interceptor("m")), 0)
    assert opened.fail_open is True


def test_a_fail_closed_server_that_could_not_be_listed_refuses_every_event_and_a_fail_open_one_is_dropped() -> None:
    failed = Discovery(A, error="no answer within 5000 ms", reason="timeout")
    [refusal] = remote_entries(failed, 0)
    assert isinstance(refusal.interceptor, UnlistedServer)
    plan = build_plan([], remote=[refusal])
    assert plan.intercepts("prompts/get")
    with pytest.raises(MCPError) as refused:
        plan.admit("tools/call")
    assert refused.value.to_error() == {
        "code": -32603,
        "message": "Interceptor server 'a' could not be listed: no answer within 5000 ms",
        "data": {"server": "a", "reason": "timeout"},
    }
    assert remote_entries(Discovery(B, error="refused", reason="unreachable"), 0) == []
