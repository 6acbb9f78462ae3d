"""The built-in interceptors: redaction, rate limit, argument size (the audit sink is in test_endpoints)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.core.cache import cache

from mcp_django.interceptors import InterceptorContext, build_plan
from mcp_django.interceptors.redaction import THREAD_CHARS, WINDOW, RedactionOptions

ADA = InterceptorContext(principal={"type": "user", "id": "1"})
BOB = InterceptorContext(principal={"type": "user", "id": "2"})


async def run(
    entry: Any, payload: dict[str, Any], *, phase: str = "request", context: Any = ADA, event: str = "tools/call"
) -> Any:
    return await build_plan([entry]).run(event, phase, payload, context)


# -- redaction ------------------------------------------------------------------------------------

REDACT = "mcp_django.interceptors.redaction.RedactionInterceptor"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("mail ada@example.co.uk now", "mail [REDACTED] now"),
        ("card 4111-1111-1111-1111 ok", "card [REDACTED] ok"),
        ("card 4111111111111111", "card [REDACTED]"),
        ("call +44 20 7946 0958", "call [REDACTED]"),
        ("call (555) 123-4567", "call [REDACTED]"),
        ("published in 1949, 328 pages", "published in 1949, 328 pages"),
    ],
)
async def test_the_default_patterns_redact_emails_cards_and_phone_numbers(text: str, redacted: str) -> None:
    result = await run(REDACT, {"name": "t", "arguments": {"q": text}})
    assert result.final_payload["arguments"] == {"q": redacted}


async def test_only_arguments_are_redacted_in_the_request_phase_nested_values_included() -> None:
    payload = {"name": "a@b.io", "arguments": {"list": ["x@y.io", 3], "deep": {"k": "z@w.io"}}}
    result = await run(REDACT, payload)
    assert result.final_payload == {
        "name": "a@b.io",
        "arguments": {"list": ["[REDACTED]", 3], "deep": {"k": "[REDACTED]"}},
    }


async def test_results_are_redacted_but_not_their_structure() -> None:
    payload = {"content": [{"type": "text", "text": "a@b.io"}], "structuredContent": {"mail": "a@b.io"}}
    result = await run(REDACT, payload, phase="response")
    assert result.final_payload == {
        "content": [{"type": "text", "text": "[REDACTED]"}],
        "structuredContent": {"mail": "[REDACTED]"},
    }


async def test_custom_patterns_and_replacement() -> None:
    entry = {"CLASS": REDACT, "OPTIONS": {"patterns": [r"sk-[a-z0-9]+"], "replacement": "***"}}
    result = await run(entry, {"arguments": {"key": "sk-abc123 a@b.io"}})
    assert result.final_payload["arguments"] == {"key": "*** a@b.io"}


async def test_nothing_to_redact_is_reported_unmodified() -> None:
    result = await run(REDACT, {"arguments": {"q": "nothing here"}})
    assert result.results[0].result.modified is False


def test_a_pattern_that_does_not_compile_is_rejected() -> None:
    with pytest.raises(ValueError, match="is not a regular expression"):
        RedactionOptions.model_validate({"patterns": ["(unclosed"]})


async def test_a_payload_with_more_text_than_max_chars_is_refused_unscanned() -> None:
    entry = {"CLASS": REDACT, "OPTIONS": {"max_chars": 10}}
    result = await run(entry, {"name": "t", "arguments": {"a": "12345", "b": ["678901"]}})
    assert result.status == "mutation_failed"
    assert result.aborted_at["reason"] == (
        "TooMuchText: the payload holds 11 characters of text; redaction scans at most 10"
    )


async def test_a_large_payload_is_redacted_on_a_thread_while_the_event_loop_runs() -> None:
    text = "a" * (THREAD_CHARS + WINDOW * 8) + " ada@example.com"
    turns = 0
    scanned = asyncio.Event()

    async def other_work() -> None:
        nonlocal turns
        while not scanned.is_set():
            turns += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(other_work())
    await asyncio.sleep(0)  # `other` starts: from here on it counts its turns
    started = turns
    result = await run(REDACT, {"name": "t", "arguments": {"q": text}})
    scanned.set()
    await other

    assert result.final_payload["arguments"]["q"].endswith("a [REDACTED]")
    assert turns > started  # on the loop, the scan would have left `other` no turn before it finished


# -- rate limit -----------------------------------------------------------------------------------

LIMIT = {"CLASS": "mcp_django.interceptors.limits.RateLimitInterceptor", "OPTIONS": {"calls": 2, "per_seconds": 3600}}


@pytest.fixture
def empty_cache() -> Any:
    cache.clear()
    yield cache
    cache.clear()


async def test_the_rate_limit_blocks_the_call_past_the_limit(empty_cache: Any) -> None:
    plan = build_plan([LIMIT])
    outcomes = [(await plan.run("tools/call", "request", {"name": "echo"}, ADA)).status for _ in range(3)]
    assert outcomes == ["success", "success", "validation_failed"]


async def test_the_rate_limit_counts_per_user_and_per_tool(empty_cache: Any) -> None:
    plan = build_plan([LIMIT])
    for _ in range(2):
        await plan.run("tools/call", "request", {"name": "echo"}, ADA)
    assert not (await plan.run("tools/call", "request", {"name": "echo"}, BOB)).blocked
    assert not (await plan.run("tools/call", "request", {"name": "other"}, ADA)).blocked
    assert (await plan.run("tools/call", "request", {"name": "echo"}, ADA)).blocked


async def test_the_rate_limit_can_be_restricted_to_some_tools(empty_cache: Any) -> None:
    plan = build_plan([{**LIMIT, "OPTIONS": {"calls": 1, "tools": ["expensive"]}}])
    results = [(await plan.run("tools/call", "request", {"name": "cheap"}, ADA)).blocked for _ in range(3)]
    assert results == [False, False, False]


# -- argument size --------------------------------------------------------------------------------

SIZE = {"CLASS": "mcp_django.interceptors.limits.ArgumentSizeInterceptor", "OPTIONS": {"max_bytes": 20}}


async def test_arguments_within_the_limit_pass() -> None:
    assert not (await run(SIZE, {"name": "t", "arguments": {"q": "short"}})).blocked


async def test_arguments_over_the_limit_are_refused_with_their_size() -> None:
    result = await run(SIZE, {"name": "t", "arguments": {"q": "é" * 20}})
    assert result.blocked
    assert result.aborted_at["reason"] == "arguments are 48 bytes, more than 20"
