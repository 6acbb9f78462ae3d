"""The telemetry extension: installs `ServerTelemetry` on every endpoint, and checks that it can."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from django.core.checks import CheckMessage, Error

from mcp_django.extensions import Extension
from mcp_django.protocol.observers import ClientObserver, MessageObserver
from mcp_django.telemetry.conf import telemetry_settings

if TYPE_CHECKING:
    from mcp_django.telemetry.server import ServerTelemetry

_NO_API: Final = "mcp_django_telemetry.E180"
_CONTENT: Final = "mcp_django_telemetry.E181"
_SESSIONS: Final = "mcp_django.telemetry.sessions"
_REFUSALS: Final = "mcp_django.telemetry.refusals"


def _api_installed() -> bool:
    try:
        import opentelemetry.metrics
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


class TelemetryExtension(Extension):
    """OpenTelemetry spans and metrics for every MCP message, on every endpoint (docs/observability.md).

    It only uses the OpenTelemetry API: whatever SDK the project configures (`opentelemetry-instrument`,
    its own `TracerProvider` and `MeterProvider`) receives them; with none, they cost next to nothing.
    Nothing is advertised to clients.
    """

    identifier = "mcp-django.dev/telemetry"
    advertised = False
    settings = telemetry_settings

    def __init__(self) -> None:
        self._telemetry: ServerTelemetry | None = None

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return {} if _api_installed() else None

    def observers(self, endpoint: Any) -> Sequence[MessageObserver]:
        return (self.telemetry(),)

    def client_observers(self) -> Sequence[ClientObserver]:
        return (self.telemetry(),) if _api_installed() else ()

    def telemetry(self) -> ServerTelemetry:
        """The process's one `ServerTelemetry`: its instruments are the process's, whatever endpoint records."""
        from mcp_django.endpoints.sessions import session_ended, sessions_expired
        from mcp_django.runtime.refusals import refused
        from mcp_django.telemetry import interceptors
        from mcp_django.telemetry.server import ServerTelemetry

        if self._telemetry is None:
            telemetry = self._telemetry = ServerTelemetry()
            interceptors.connect(telemetry.tracer, telemetry.refusals, telemetry.audit_rows)
            session_ended.connect(telemetry.session_ended, weak=False, dispatch_uid=_SESSIONS)
            sessions_expired.connect(telemetry.sessions_expired, weak=False, dispatch_uid=_SESSIONS)
            refused.connect(telemetry.refused, weak=False, dispatch_uid=_REFUSALS)
        return self._telemetry

    def check(self) -> list[CheckMessage]:
        from mcp_django.telemetry.content import content_problems

        if _api_installed():
            return [Error(message, hint=hint, id=_CONTENT) for message, hint in content_problems()]
        return [
            Error(
                "The telemetry extension needs opentelemetry-api, not installed.",
                hint="Install the otel extra: pip install 'django-mcp-host[otel]'.",
                id=_NO_API,
            )
        ]
