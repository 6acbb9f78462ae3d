"""One structured log record per tool call, on the `mcp_django.calls` logger, without OpenTelemetry.

Install the extension (docs/observability.md, "The call log")::

    MCP_DJANGO = {"EXTENSIONS": ["mcp_django.telemetry.CallLogExtension"]}

Each record's message reads `tools/call search_books on books: ok in 3.1 ms`; its facts are attributes
of the record (`extra=`), for a JSON formatter: `endpoint`, `tool`, `user`, `outcome`, `duration_ms`
and `trace_id` (the current OpenTelemetry trace, when the API is installed and there is one, else None).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.extensions import Extension
from mcp_django.protocol.context import Connection
from mcp_django.protocol.jsonrpc import Message
from mcp_django.protocol.observers import UNOBSERVED, MessageObserver, Unobserved

logger = logging.getLogger("mcp_django.calls")

CALL_FIELDS: Final = ("endpoint", "tool", "user", "outcome", "duration_ms", "trace_id")
"""The attributes every record of `mcp_django.calls` carries."""

try:
    from opentelemetry import trace as _trace
except ImportError:  # the call log needs no OpenTelemetry; a trace id is only there when it is installed
    _trace = None  # type: ignore[assignment]


class CallLogExtension(Extension):
    """A record on the `mcp_django.calls` logger for every `tools/call` an endpoint answers (never advertised)."""

    identifier = "mcp-django.dev/call-log"
    advertised = False

    def __init__(self) -> None:
        self._log = CallLog()

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return {}

    def observers(self, endpoint: Any) -> Sequence[MessageObserver]:
        return (self._log,)


class CallLog:
    """The `MessageObserver` behind `CallLogExtension`: watches `tools/call` requests, logs each when answered."""

    def observe(self, message: Any, connection: Connection) -> _Call | Unobserved:
        """A logged observation for a `tools/call` request while `mcp_django.calls` logs INFO; else nothing."""
        if not isinstance(message, dict) or message.get("method") != "tools/call" or "id" not in message:
            return UNOBSERVED
        if not logger.isEnabledFor(logging.INFO):
            return UNOBSERVED
        return _Call(message, connection)

    def asking(self, request: Message, connection: Connection) -> Unobserved:
        return UNOBSERVED

    def opened(self, connection: Connection) -> None:
        return None

    def closed(self, connection: Connection) -> None:
        return None


class _Call:
    """One call being served: its outcome is read from the reply, the record written when it ends."""

    __slots__ = ("connection", "message", "outcome", "started", "trace_id")

    def __init__(self, message: dict[str, Any], connection: Connection) -> None:
        self.message = message
        self.connection = connection
        self.outcome = "ok"
        self.trace_id: str | None = None

    def __enter__(self) -> _Call:
        self.started = time.perf_counter()
        return self

    def answered(self, reply: Message | list[Message] | None) -> None:
        # Every observer's observation is still entered here, the telemetry's span among them.
        self.trace_id = _current_trace_id()
        if not isinstance(reply, dict):
            return
        error = reply.get("error")
        result = reply.get("result")
        if isinstance(error, dict):
            self.outcome = f"error {error.get('code')}"
        elif isinstance(result, dict) and result.get("isError") is True:
            self.outcome = "tool_error"
        elif isinstance(result, dict) and result.get("resultType") not in (None, "complete"):
            self.outcome = str(result["resultType"])  # input_required, task: the call goes on elsewhere

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: Any) -> None:
        if error is not None:
            self.outcome = "cancelled"
        params = self.message.get("params")
        tool = params.get("name") if isinstance(params, dict) else None
        facts = {
            "endpoint": getattr(self.connection.endpoint, "name", None),
            "tool": tool if isinstance(tool, str) else None,
            "user": _user(self.connection),
            "outcome": self.outcome,
            "duration_ms": round((time.perf_counter() - self.started) * 1000, 3),
            "trace_id": self.trace_id,
        }
        logger.info(
            "tools/call %s on %s: %s in %.1f ms",
            facts["tool"],
            facts["endpoint"],
            facts["outcome"],
            facts["duration_ms"],
            extra=facts,
        )


def _user(connection: Connection) -> str | None:
    username = getattr(connection.principal, "get_username", None)
    if callable(username) and getattr(connection.principal, "is_authenticated", False):
        return str(username())
    return connection.principal_id


def _current_trace_id() -> str | None:
    if _trace is None:
        return None
    context = _trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else None
