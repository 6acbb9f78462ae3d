"""`RedactionInterceptor`: replaces e-mail addresses, card and phone numbers (or your patterns)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any, Final

import pydantic

from mcp_django.interceptors.base import Invocation, MutationInterceptor, MutationResult

DEFAULT_PATTERNS: Final[tuple[str, ...]] = (
    # e-mail addresses
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    # payment card numbers: 13-19 digits, optionally grouped by spaces or dashes
    r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)",
    # phone numbers: 9-15 digits, optionally with a leading + and the usual separators
    r"(?<![\w+])(?:\+|\()?\d(?:[\s().-]{0,2}\d){8,14}(?!\w)",
)

_STRUCTURAL: Final = frozenset({"type", "mimeType", "blob", "_meta", "inputSchema", "outputSchema", "annotations"})
"""Result keys whose values are protocol structure, never user data."""


class RedactionOptions(pydantic.BaseModel):
    """Options of `RedactionInterceptor`."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    patterns: tuple[str, ...] = pydantic.Field(DEFAULT_PATTERNS, description="Regular expressions to redact.")
    replacement: str = pydantic.Field("[REDACTED]", description="What each match is replaced with.")

    @pydantic.field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"{pattern!r} is not a regular expression: {error}") from None
        return patterns


@functools.lru_cache(maxsize=32)
def _compiled(patterns: Sequence[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns)) if patterns else None


def redact(value: Any, options: RedactionOptions) -> Any:
    """`value` (any JSON value) with every match of `options.patterns` replaced, as the interceptor does it."""
    pattern = _compiled(options.patterns)
    return value if pattern is None else _Redactor(pattern, options.replacement).redact(value)


class RedactionInterceptor(MutationInterceptor):
    """Redacts sensitive strings: in the request phase the `arguments`, in the response phase the result.

    It runs before other mutators (priority -1000), so everything after it, the tool and the audit
    trail included, sees the redacted values.
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
        redactor = _Redactor(pattern, options.replacement)
        if invocation.phase == "request":
            redacted = {**payload, "arguments": redactor.redact(payload["arguments"])} if "arguments" in payload else {}
        else:
            redacted = redactor.redact(payload)
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
            redacted = self.pattern.sub(self.replacement, value)
            self.changed = self.changed or redacted != value
            return redacted
        if isinstance(value, dict):
            return {key: item if key in _STRUCTURAL else self.redact(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.redact(item) for item in value]
        return value
