"""Every interceptor configuration mistake is a system check with a whole, stable message (E018-E024)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from mcp_django.checks.endpoints import check_interceptors
from mcp_django.checks.settings import check_settings
from mcp_django.interceptors import InterceptorConfigError, build_plan

LABEL = "MCP_DJANGO['INTERCEPTORS'][0]"


def messages(entries: Any) -> list[tuple[str, str, str]]:
    with override_settings(MCP_DJANGO={"INTERCEPTORS": entries}):
        return [(m.id or "", m.msg, m.hint or "") for m in check_interceptors()]


def test_a_valid_list_passes() -> None:
    assert messages(["mcp_django.interceptors.redaction.RedactionInterceptor"]) == []


def test_an_unknown_class_is_e018() -> None:
    assert messages(["nowhere.Nothing"]) == [
        (
            "mcp_django.E018",
            f"{LABEL} names a class that cannot be imported.",
            "Check the dotted path 'nowhere.Nothing'.",
        )
    ]


def test_a_class_of_the_wrong_type_is_e019() -> None:
    assert messages([{"CLASS": "tests.interceptors.support.NotAnInterceptor"}]) == [
        (
            "mcp_django.E019",
            f"{LABEL} is not an interceptor class.",
            "Subclass ValidationInterceptor, MutationInterceptor or SinkInterceptor.",
        )
    ]


def test_both_a_scalar_and_a_per_phase_priority_is_e020() -> None:
    assert messages(["tests.interceptors.support.BothPriorities"]) == [
        (
            "mcp_django.E020",
            f"{LABEL} has a scalar and a per-phase priority.",
            "Give BothPriorities priority or request_/response_priority, not both.",
        )
    ]


def test_a_duplicate_name_is_e021() -> None:
    step = "tests.interceptors.support.Step"
    assert messages([step, step]) == [
        (
            "mcp_django.E021",
            "MCP_DJANGO['INTERCEPTORS'][1] reuses the name 'Step'.",
            "Give one of them a NAME.",
        )
    ]


def test_an_events_override_wider_than_the_class_is_e022() -> None:
    assert messages([{"CLASS": "tests.interceptors.support.ToolsOnly", "EVENTS": ["tools/call", "tools/list"]}]) == [
        (
            "mcp_django.E022",
            f"{LABEL} hooks events its class does not declare.",
            "ToolsOnly declares tools/call; EVENTS may only narrow that.",
        )
    ]


def test_a_phases_override_wider_than_the_class_is_e022() -> None:
    assert messages([{"CLASS": "tests.interceptors.support.ToolsOnly", "PHASES": ["request", "response"]}]) == [
        (
            "mcp_django.E022",
            f"{LABEL} hooks phases its class does not declare.",
            "ToolsOnly declares request; PHASES may only narrow that.",
        )
    ]


@pytest.mark.parametrize(
    ("entry", "message", "hint"),
    [
        ({"MODE": "enforce"}, "has an invalid MODE.", "Use 'active' or 'audit'."),
        ({"PHASES": ["both"]}, "has an invalid PHASES.", "Use a list of 'request' and/or 'response'."),
        ({"TIMEOUT": 0}, "has an invalid TIMEOUT.", "Use a positive number of seconds, or None."),
        ({"FAIL_OPEN": "yes"}, "has an invalid FAIL_OPEN.", "Use True or False."),
        ({"EVENTS": "tools/call"}, "has an invalid EVENTS.", "Use a list of event names."),
        ({"PRIORITY": "high"}, "has an invalid PRIORITY.", "Use an integer, or {'request': n, 'response': n}."),
        ({"PRIORITY": {"both": 1}}, "has an invalid PRIORITY.", "Use an integer, or {'request': n, 'response': n}."),
        ({"NAME": ""}, "has an invalid NAME.", "Use a non-empty string."),
        (
            {"ORDER": 1},
            "has an unknown key 'ORDER'.",
            "Use only CLASS, NAME, OPTIONS, EVENTS, PHASES, PRIORITY, MODE, FAIL_OPEN, TIMEOUT.",
        ),
    ],
)
def test_a_bad_value_is_e023(entry: dict[str, Any], message: str, hint: str) -> None:
    entries = [{"CLASS": "tests.interceptors.support.Step", **entry}]
    assert messages(entries) == [("mcp_django.E023", f"{LABEL} {message}", hint)]


def test_an_entry_that_is_neither_a_string_nor_a_dict_is_e023() -> None:
    assert messages([42]) == [
        ("mcp_django.E023", f"{LABEL} must be an import string or a dict.", "Write 'path.to.Class' or {'CLASS': ...}.")
    ]


def test_a_list_that_is_not_a_list_is_e023() -> None:
    assert messages("tests.interceptors.support.Step") == [
        (
            "mcp_django.E023",
            "MCP_DJANGO['INTERCEPTORS'] must be a list.",
            "List import strings or dicts, like MIDDLEWARE.",
        )
    ]


def test_options_the_class_rejects_are_e024() -> None:
    entry = {"CLASS": "mcp_django.interceptors.limits.RateLimitInterceptor", "OPTIONS": {"calls": 0}}
    assert messages([entry]) == [
        (
            "mcp_django.E024",
            f"{LABEL} has OPTIONS RateLimitInterceptor rejects.",
            "calls: Input should be greater than 0.",
        )
    ]


def test_the_phase_directions_and_chain_timeout_are_value_checked() -> None:
    settings = {"INTERCEPTOR_DIRECTIONS": {"request": "up"}, "INTERCEPTOR_CHAIN_TIMEOUT": -1}
    with override_settings(MCP_DJANGO=settings):
        found = sorted((m.id, m.msg) for m in check_settings())
    assert found == [
        ("mcp_django.E004", "MCP_DJANGO['INTERCEPTOR_CHAIN_TIMEOUT'] must be a positive number of seconds or None."),
        ("mcp_django.E004", "MCP_DJANGO['INTERCEPTOR_DIRECTIONS'] must be {phase: 'sending' or 'receiving'}."),
    ]


def test_every_message_is_shorter_than_80_characters() -> None:
    long_label = "MCP_DJANGO['INTERCEPTORS'][10]"
    for message in [
        "names a class that cannot be imported.",
        "has a scalar and a per-phase priority.",
        "hooks events its class does not declare.",
        "reuses the name 'abcdefghijklmnopqrst'.",
    ]:
        assert len(f"{long_label} {message}") < 80


def test_building_a_bad_plan_raises_improperly_configured_with_the_same_problems() -> None:
    with pytest.raises(InterceptorConfigError, match=r"cannot be imported\. Check the dotted path 'nowhere\.X'\."):
        build_plan(["nowhere.X"])
