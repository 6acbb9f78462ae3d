"""`RedactionInterceptor`: replaces e-mail addresses, card and phone numbers (or your patterns).

Python's `re` backtracks, so a pattern decides how long a scan can take. The built-in patterns are
linear in the text's length on any input: no character is taken by two quantifiers that could trade
it back and forth. The e-mail pattern starts only where a run of address characters starts and
takes each part possessively (`++`), so a long run without an `@` is read once, not once per
starting point (the pattern it replaces took time quadratic in the run's length: 30 s for 100 KB).
The card and phone patterns repeat at most 19 and 15 times from a starting point.

The text scanned is bounded too: a payload holding more than `max_chars` characters of text is
refused unscanned, and one holding more than `THREAD_CHARS` is scanned on a thread, off the event
loop. Patterns you configure yourself are yours to keep linear (docs/interceptors.md).
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Sequence
from typing import Any, Final

import pydantic

from mcp_django.interceptors.base import Invocation, MutationInterceptor, MutationResult

DEFAULT_PATTERNS: Final[tuple[str, ...]] = (
    # e-mail addresses, from where a run of address characters starts, each part taken possessively
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)*\.[A-Za-z]{2,}",
    # payment card numbers: 13-19 digits, optionally grouped by spaces or dashes
    r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)",
    # phone numbers: 9-15 digits, optionally with a leading + and the usual separators
    r"(?<![\w+])(?:\+|\()?\d(?:[\s().-]{0,2}\d){8,14}(?!\w)",
)

MAX_CHARS: Final = 4 * 1024 * 1024
"""The default `max_chars`: the most characters of text one payload may hold to be redacted."""

THREAD_CHARS: Final = 64 * 1024
"""A payload holding more characters of text than this is scanned on a thread, not on the event loop."""

WINDOW: Final = 16 * 1024
REACH: Final = 4 * 1024
"""A longer string is scanned `WINDOW` characters at a time, each search seeing `REACH` characters past its
window: `re` holds the GIL for a whole search, so the event loop's thread runs between windows. A match
starting in a window and shorter than `REACH` is found as a whole-string search finds it."""

_STRUCTURAL: Final = frozenset({"type", "mimeType", "blob", "_meta", "inputSchema", "outputSchema", "annotations"})
"""Result keys whose values are protocol structure, never user data."""


class RedactionOptions(pydantic.BaseModel):
    """Options of `RedactionInterceptor`."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    patterns: tuple[str, ...] = pydantic.Field(DEFAULT_PATTERNS, description="Regular expressions to redact.")
    replacement: str = pydantic.Field("[REDACTED]", description="What each match is replaced with.")
    max_chars: int = pydantic.Field(
        MAX_CHARS, gt=0, description="Most characters of text a payload may hold; a larger one is refused unscanned."
    )

    @pydantic.field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"{pattern!r} is not a regular expression: {error}") from None
        return patterns


class TooMuchText(ValueError):
    """A payload holds more text than the redaction interceptor scans: the operation is refused."""


@functools.lru_cache(maxsize=32)
def _compiled(patterns: Sequence[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns)) if patterns else None


def redact(value: Any, options: RedactionOptions) -> Any:
    """`value` (any JSON value) with every match of `options.patterns` replaced, as the interceptor does it.

    Raises `TooMuchText` when `value` holds more than `options.max_chars` characters of text.
    """
    pattern = _compiled(options.patterns)
    if pattern is None:
        return value
    _bounded(value, options.max_chars)
    return _Redactor(pattern, options.replacement).redact(value)


def text_length(value: Any) -> int:
    """How many characters of text the strings `_Redactor` would scan in `value` hold."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_length(item) for key, item in value.items() if key not in _STRUCTURAL)
    if isinstance(value, list):
        return sum(text_length(item) for item in value)
    return 0


def _bounded(value: Any, max_chars: int) -> int:
    length = text_length(value)
    if length > max_chars:
        raise TooMuchText(f"the payload holds {length} characters of text; redaction scans at most {max_chars}")
    return length


class RedactionInterceptor(MutationInterceptor):
    """Redacts sensitive strings: in the request phase the `arguments`, in the response phase the result.

    It runs before other mutators (priority -1000), so everything after it, the tool and the audit
    trail included, sees the redacted values. A payload with more than `max_chars` characters of text
    is refused (fail-closed: it is never passed on unredacted); one with more than `THREAD_CHARS` is
    scanned on a thread.
    """

    name = "redact"
    description = "Redacts e-mail addresses, card and phone numbers"
    events = ("tools/call", "prompts/get", "resources/read")
    priority = -1000
    Options = RedactionOptions

    async def mutate(self, invocation: Invocation) -> MutationResult:
        options: RedactionOptions = invocation.options
        pattern = _compiled(options.patterns)
        payload = invocation.payload
        if pattern is None:
            return MutationResult(modified=False, payload=payload)
        scanned = payload.get("arguments") if invocation.phase == "request" else payload
        redactor = _Redactor(pattern, options.replacement)
        if _bounded(scanned, options.max_chars) > THREAD_CHARS:
            redacted = await asyncio.to_thread(redactor.redact, scanned)
        else:
            redacted = redactor.redact(scanned)
        if invocation.phase == "request":
            redacted = {**payload, "arguments": redacted} if "arguments" in payload else {}
        # A new payload when something was redacted, the one it was handed untouched when not.
        return MutationResult(modified=True, payload=redacted) if redactor.changed else MutationResult(False, payload)


class _Redactor:
    """Walks a JSON value, replacing matches in every string outside protocol structure."""

    def __init__(self, pattern: re.Pattern[str], replacement: str) -> None:
        self.pattern = pattern
        self.replacement = replacement
        self.changed = False

    def redact(self, value: Any) -> Any:
        if isinstance(value, str):
            redacted = (
                self.pattern.sub(self.replacement, value) if len(value) <= WINDOW + REACH else self.windowed(value)
            )
            self.changed = self.changed or redacted != value
            return redacted
        if isinstance(value, dict):
            return {key: item if key in _STRUCTURAL else self.redact(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.redact(item) for item in value]
        return value

    def windowed(self, text: str, window: int = WINDOW, reach: int = REACH) -> str:
        """`text` with its matches replaced as `pattern.sub` replaces them, searched one `window` at a time."""
        search, copied, start, length = self.pattern.search, 0, 0, len(text)
        pieces: list[str] = []
        while start < length:
            end = min(length, start + window + reach)
            found = search(text, start, end)
            if found is not None and found.start() < start + window and found.end() == end < length:
                found = search(text, found.start())  # `reach` long or longer: searched on the whole text
            if found is None or found.start() >= start + window:
                start += window  # nothing starts in this window
                continue
            if found.start() == found.end():  # a pattern matching nothing: `sub` knows where to put those
                return self.pattern.sub(self.replacement, text)
            pieces += (text[copied : found.start()], found.expand(self.replacement))
            copied = start = found.end()
        pieces.append(text[copied:])
        return "".join(pieces)
