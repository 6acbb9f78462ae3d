"""A hub's view of one remote's health and its circuit (`gateway.health.Health`), on a clock the tests turn."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.gateway.health import Health, opens_circuit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _timings(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_LIST_TIMEOUT": 5.0, "REMOTE_RETRY_AFTER": 30.0}


def test_a_remote_that_did_not_answer_is_not_asked_until_its_retry_time() -> None:
    clock = Clock()
    health = Health(clock)
    health.failed("no complete tools/list within 5s")

    clock.now += 29.0
    assert (health.admits(), health.state, health.retry_in()) == (False, "down", 1.0)


def test_after_its_retry_time_one_caller_probes_it_and_the_others_still_leave_it_out() -> None:
    clock = Clock()
    health = Health(clock)
    health.failed("unreachable")
    clock.now += 30.0

    assert [health.admits(), health.admits()] == [True, False]
    health.answered("tools/list")
    assert (health.admits(), health.state, health.retry_in()) == (True, "up", None)


def test_a_probe_that_never_reports_lets_another_caller_probe_after_one_list_budget() -> None:
    clock = Clock()
    health = Health(clock)
    health.failed("unreachable")
    clock.now += 30.0
    assert health.admits()  # the probe's caller went away

    clock.now += 4.9
    assert not health.admits()
    clock.now += 0.2
    assert health.admits()


def test_a_failed_probe_keeps_it_out_for_another_retry_interval() -> None:
    clock = Clock()
    health = Health(clock)
    health.failed("unreachable")
    clock.now += 30.0
    assert health.admits()
    health.failed("unreachable again")

    clock.now += 29.0
    assert not health.admits()
    assert health.detail == "unreachable again"


def test_a_list_answered_with_an_error_degrades_it_without_opening_the_circuit() -> None:
    health = Health(Clock())
    health.answered()
    health.erred("prompts/list", "error -32603: prompts/list broke")

    assert (health.admits(), health.state, health.detail) == (
        True,
        "degraded",
        "prompts/list: error -32603: prompts/list broke",
    )
    health.answered("prompts/list")
    assert (health.state, health.detail) == ("up", None)


def test_a_callers_own_credentials_refused_are_not_the_remotes_fault() -> None:
    assert [opens_circuit(reason) for reason in ("refused", "not_connected", "timeout", "unreachable", "limit")] == [
        False,
        False,
        True,
        True,
        True,
    ]
