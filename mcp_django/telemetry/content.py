"""Tool arguments and results as span attributes: only when `TELEMETRY_TOOL_CONTENT` opts in, and redacted.

They may hold personal data, so by default no span carries them. Opted in, the `tools/call` SERVER span
gets `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` (the convention's names, JSON text),
after the redaction interceptor's rules (`TELEMETRY_REDACTION`, `RedactionOptions`: its default patterns
redact e-mail addresses, card and phone numbers) have replaced what they match.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pydantic

from mcp_django.conf import mcp_settings
from mcp_django.interceptors.redaction import RedactionOptions, redact
from mcp_django.telemetry.conf import telemetry_settings

ARGUMENTS: Final = "gen_ai.tool.call.arguments"
RESULT: Final = "gen_ai.tool.call.result"

_options: list[RedactionOptions | None] = []


def content_problems() -> list[tuple[str, str]]:
    """What is wrong with the two settings, as a system check's `(message, hint)` pairs (empty if fine)."""
    problems = []
    if not isinstance(telemetry_settings.TELEMETRY_TOOL_CONTENT, bool):
        problems.append(("TELEMETRY_TOOL_CONTENT must be True or False.", "Set it to True to record tool content."))
    try:
        RedactionOptions.model_validate(telemetry_settings.TELEMETRY_REDACTION)
    except pydantic.ValidationError as error:
        detail = error.errors()[0]["msg"].removeprefix("Value error, ")
        problems.append(("TELEMETRY_REDACTION is not valid redaction options.", f"Fix it: {detail[:100]}"))
    return problems


def content_options() -> RedactionOptions | None:
    """The redaction rules tool content is recorded with; None while it is not recorded (the default)."""
    if not _options:
        wanted = telemetry_settings.TELEMETRY_TOOL_CONTENT is True and not content_problems()
        _options.append(RedactionOptions.model_validate(telemetry_settings.TELEMETRY_REDACTION) if wanted else None)
    return _options[0]


def recorded(value: Any, options: RedactionOptions) -> str:
    """`value` redacted, as the JSON text a span attribute carries."""
    return json.dumps(redact(value, options), ensure_ascii=False, default=str)


mcp_settings.on_reload(_options.clear)
