"""The `MCP_DJANGO` settings dict, read in exactly one place.

Everything in mcp_django reads configuration through `mcp_settings`::

    from mcp_django.conf import mcp_settings

    mcp_settings.MAX_REQUEST_BYTES

Values come from `settings.MCP_DJANGO`, falling back to `DEFAULTS`. Keys listed in
`IMPORT_STRINGS` are resolved to the object they name on first access. Everything is
re-read when a test changes `MCP_DJANGO` (`override_settings` sends `setting_changed`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.crypto import salted_hmac
from django.utils.module_loading import import_string

from mcp_django.version import __version__

SETTING_NAME: Final = "MCP_DJANGO"

MiB: Final = 1024 * 1024

DEFAULTS: Final[Mapping[str, Any]] = {
    # None means {"name": "mcp-django", "version": mcp_django.__version__}, filled in on first access.
    "SERVER_INFO": None,
    "INSTRUCTIONS": None,
    "SESSIONS": True,
    "SESSION_IDLE_TIMEOUT": 3600,
    "SESSION_STORE": "mcp_django.sessions.DatabaseSessionStore",
    "SESSION_MAX_CLIENT_BYTES": 64 * 1024,
    "SESSION_MAX_PER_USER": None,
    "SESSION_MAX_ANONYMOUS": None,
    "SESSION_PURGE_INTERVAL": 300,
    "MAX_REQUEST_BYTES": 4 * MiB,
    # Timeouts and limits of a request on the wire (docs/deployment.md).
    "MAX_HEADER_BYTES": 16 * 1024,
    "REQUEST_BODY_TIMEOUT": 30,
    # The package's public views beside the endpoints (the OAuth server, metadata): bodies from anyone.
    "MAX_PUBLIC_REQUEST_BYTES": 64 * 1024,
    "ALLOWED_ORIGINS": [],
    "PAGE_SIZE": 100,
    "CACHE_TTL_MS": 60_000,
    "CACHE_SCOPE": "private",
    "STATIC_MODULE": "mcp",
    # Asking the client for input (docs/asking-the-client.md).
    "CLIENT_REQUEST_TIMEOUT": 300,
    "REQUEST_STATE_TTL": 600,
    # Tools that run as tasks (docs/tasks.md): the backend of settings.TASKS that runs them, and the
    # ttlMs and pollIntervalMs their tasks advertise.
    "TASKS_BACKEND": "default",
    "TASK_TTL_MS": 3_600_000,
    "TASK_POLL_INTERVAL_MS": 500,
    # What one caller can make the workers hold (docs/tasks.md): active tasks per user and for all anonymous
    # callers together, seconds a task may run, bytes stored per task, and how often expired rows go.
    "TASK_MAX_ACTIVE_PER_USER": 20,
    "TASK_MAX_ACTIVE_ANONYMOUS": 20,
    "TASK_TIMEOUT": 900,
    "TASK_MAX_BYTES": MiB,
    "TASK_PURGE_INTERVAL": 300,
    # The Skills extension (docs/skills.md): directories of skill directories, searched before the apps'.
    "SKILLS_DIRS": [],
    # The scope a caller needs to see a skill, by skill name (USER when not listed).
    "SKILL_SCOPES": {},
    # Scopes and authentication (docs/scopes.md, docs/authentication.md).
    "SCOPE_GROUPS": {},
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "mcp_django.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "AUTHORIZATION_SERVERS": [],
    # The `oauth` extra (docs/oauth.md): client registrations one address may make, and failed logins.
    "OAUTH_REGISTRATION_RATE": "30/hour",
    "OAUTH_LOGIN_RATE": "5/minute",
    "OAUTH_TOKEN_RATE": "60/minute",
    "OAUTH_CLIENT_ASSERTION_MAX_AGE": 300,
    "OAUTH_JWKS_MAX_AGE": 3600,
    # Enterprise sign-in (docs/oauth.md): identity providers whose ID-JAGs are exchanged for tokens, by issuer.
    "OAUTH_TRUSTED_ISSUERS": {},
    # Protocol extensions (docs/extensions.md): import strings, served beside those the apps name.
    "EXTENSIONS": [],
    # Interceptors (docs/interceptors.md).
    "INTERCEPTORS": [],
    "INTERCEPTOR_DIRECTIONS": {"request": "sending", "response": "receiving"},
    "INTERCEPTOR_CHAIN_TIMEOUT_MS": None,
    # Telemetry (docs/observability.md): tool arguments and results as span attributes only when opted
    # in, and then redacted with the redaction interceptor's rules (RedactionOptions: patterns, replacement).
    "TELEMETRY_TOOL_CONTENT": False,
    "TELEMETRY_REDACTION": {},
    # The admin's state (docs/admin.md).
    "STATE_CHECK_INTERVAL": 0.5,
    # The audit trail (docs/interceptors.md): the local spool used while the database cannot take rows.
    # None means a directory named after the database, in the system's temporary directory.
    "AUDIT_SPOOL_DIR": None,
    "AUDIT_SPOOL_MAX_BYTES": 64 * MiB,
    "AUDIT_WHEN_FULL": "refuse",
    "AUDIT_DB_TIMEOUT": 5.0,
    "AUDIT_REPLAY_INTERVAL": 5.0,
    # Speed (docs/settings.md, docs/authentication.md).
    "DATABASE_THREADS": 8,
    "AUTH_CACHE_TTL": 60,
    "SCOPE_POLICY": "mcp_django.scopes.GroupScopePolicy",
    # Remote MCP servers by name, like DATABASES (docs/gateway.md): what gateways, hubs, interceptor
    # entries `{"SERVER": name}` and `MCPClient(name)` connect to; then the timeouts of the connections.
    "SERVERS": {},
    # The site's absolute URL (`https://example.com/`) where no request names it (stdio): the links a
    # client is sent to open, such as the page where a user connects their own account upstream.
    "SITE_URL": None,
    "GATEWAY_CONNECT_TIMEOUT": 10.0,
    "GATEWAY_READ_TIMEOUT": 60.0,
    # Bounds on what a remote MCP server sends (docs/deployment.md): one message after decompression
    # (a JSON answer, an SSE event, a stdio line), one listing (all its pages), descriptions, input
    # rounds and the wall time of one forwarded operation.
    "REMOTE_MAX_MESSAGE_BYTES": 4 * MiB,
    "REMOTE_MAX_LIST_ITEMS": 10_000,
    "REMOTE_MAX_LIST_PAGES": 100,
    "REMOTE_MAX_DESCRIPTION_CHARS": 8192,
    "REMOTE_MAX_INPUT_ROUNDS": 10,
    "REMOTE_CALL_TIMEOUT": 600.0,
    # The site as an OAuth client of remote servers (docs/client.md): the largest answer it reads from
    # their authorization servers (metadata, registration, tokens); whether a server on a loopback name
    # may use an authorization server on loopback too (development and tests only).
    "OAUTH_CLIENT_MAX_BYTES": 64 * 1024,
    "OAUTH_CLIENT_ALLOW_LOOPBACK": False,
    # Faults (docs/deployment.md): time limits, shutdown, an unavailable database.
    "TOOL_TIMEOUT": None,
    "SHUTDOWN_GRACE": 5.0,
    "RETRY_AFTER": 5,
}
"""Every key `MCP_DJANGO` accepts, with its default. `docs/settings.md` describes each."""

IMPORT_STRINGS: Final[frozenset[str]] = frozenset({"SESSION_STORE", "SCOPE_POLICY"})
"""Keys whose value is a dotted path (or the object itself), resolved lazily."""


def _default_server_info() -> dict[str, Any]:
    return {"name": "mcp-django", "version": __version__}


def _default_audit_spool_dir() -> Path:
    """`<tmp>/mcp_django-audit-<digest of the default database>`: one spool per database, never shared by two."""
    database = settings.DATABASES.get("default", {})
    where = "|".join(str(database.get(key, "")) for key in ("ENGINE", "NAME", "HOST", "PORT"))
    return Path(tempfile.gettempdir()) / f"mcp_django-audit-{hashlib.sha256(where.encode()).hexdigest()[:12]}"


class MCPSettings:
    """Attribute access to `MCP_DJANGO`, with defaults and lazily imported import strings.

    Values are cached on the instance after first access; `reload()` drops the cache.
    """

    def __init__(self, defaults: Mapping[str, Any] = DEFAULTS, import_strings: frozenset[str] = IMPORT_STRINGS):
        self.defaults = defaults
        self.import_strings = import_strings
        self._cached: set[str] = set()
        self._reload_callbacks: list[Callable[[], None]] = []

    @property
    def user_settings(self) -> Mapping[str, Any]:
        """The raw `settings.MCP_DJANGO` dict (empty when unset or not a dict; checks report the latter)."""
        value = getattr(settings, SETTING_NAME, None)
        return value if isinstance(value, Mapping) else {}

    def __getattr__(self, name: str) -> Any:
        if name not in self.defaults:
            raise AttributeError(f"Invalid MCP_DJANGO setting: {name!r}")
        value = self.user_settings.get(name, self.defaults[name])
        if name == "SERVER_INFO" and value is None:
            value = _default_server_info()
        elif name == "AUDIT_SPOOL_DIR":
            value = Path(value) if value else _default_audit_spool_dir()
        elif name in self.import_strings and isinstance(value, str):
            value = import_string(value)
        self._cached.add(name)
        setattr(self, name, value)
        return value

    def reload(self) -> None:
        """Forget every cached value, and tell whoever built something from them."""
        for name in self._cached:
            delattr(self, name)
        self._cached.clear()
        for callback in list(self._reload_callbacks):
            callback()

    def signing_keys(self, purpose: str) -> tuple[bytes, ...]:
        """The keys for `purpose`: from `SECRET_KEY` first (to make new things with), then one from each
        of `SECRET_KEY_FALLBACKS` (to keep opening what older keys made while the secret is rotated)."""
        secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())]
        return tuple(
            salted_hmac(f"mcp_django.{purpose}", purpose, secret=secret, algorithm="sha256").digest()
            for secret in secrets
        )

    def on_reload(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever the settings change (objects built from them use it to rebuild)."""
        self._reload_callbacks.append(callback)


mcp_settings = MCPSettings()


def normalize_origin(origin: str) -> str | None:
    """Normalize an origin to `scheme://host[:port]` (default ports dropped); None when malformed."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in ("http", "https") or not host or parts.path not in ("", "/") or parts.query or parts.username:
        return None
    if ":" in host:
        host = f"[{host}]"
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


_allowed_hosts: list[str] | None = None


def django_allowed_hosts() -> list[str]:
    """Django's `ALLOWED_HOSTS` as `HttpRequest.get_host` applies it (with `DEBUG`'s localhost allowance)."""
    global _allowed_hosts
    if _allowed_hosts is None:
        hosts = list(settings.ALLOWED_HOSTS)
        if settings.DEBUG and not hosts:
            hosts = [".localhost", "127.0.0.1", "[::1]"]
        _allowed_hosts = hosts
    return _allowed_hosts


def django_csrf_trusted_origins() -> list[str]:
    """Django's `CSRF_TRUSTED_ORIGINS`: the origins besides a site's own that may act with its cookies."""
    return list(settings.CSRF_TRUSTED_ORIGINS)


@dataclasses.dataclass(frozen=True, slots=True)
class HTTPSettings:
    """The Django settings a transport outside Django's request cycle (the ASGI fast path) applies itself.

    Attributes:
        hsts: the `Strict-Transport-Security` value `SecurityMiddleware` sends on https
            (`SECURE_HSTS_*`), or None when `SECURE_HSTS_SECONDS` is 0.
        ssl_redirect: `SECURE_SSL_REDIRECT`.
        proxy_ssl_header: `SECURE_PROXY_SSL_HEADER` as (lower-case header name, value), or None.
        use_x_forwarded_host: `USE_X_FORWARDED_HOST`.
        force_script_name: `FORCE_SCRIPT_NAME`, or None.
    """

    hsts: str | None
    ssl_redirect: bool
    proxy_ssl_header: tuple[str, str] | None
    use_x_forwarded_host: bool
    force_script_name: str | None


_HTTP_SETTINGS: Final = frozenset(
    {
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_SSL_REDIRECT",
        "SECURE_PROXY_SSL_HEADER",
        "USE_X_FORWARDED_HOST",
        "FORCE_SCRIPT_NAME",
    }
)
_http_settings: HTTPSettings | None = None


def django_http_settings() -> HTTPSettings:
    """Django's HTTP security settings, read once per settings change."""
    global _http_settings
    if _http_settings is None:
        hsts = None
        if settings.SECURE_HSTS_SECONDS:
            hsts = f"max-age={settings.SECURE_HSTS_SECONDS}"
            if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
                hsts += "; includeSubDomains"
            if settings.SECURE_HSTS_PRELOAD:
                hsts += "; preload"
        proxy = settings.SECURE_PROXY_SSL_HEADER
        _http_settings = HTTPSettings(
            hsts=hsts,
            ssl_redirect=bool(settings.SECURE_SSL_REDIRECT),
            # Django names the header as a META key (HTTP_X_FORWARDED_PROTO): back to its HTTP name.
            proxy_ssl_header=(proxy[0].removeprefix("HTTP_").replace("_", "-").lower(), proxy[1]) if proxy else None,
            use_x_forwarded_host=bool(settings.USE_X_FORWARDED_HOST),
            force_script_name=settings.FORCE_SCRIPT_NAME or None,
        )
    return _http_settings


def _reload_mcp_settings(*, setting: str, **kwargs: Any) -> None:
    global _allowed_hosts, _http_settings
    if setting in (SETTING_NAME, "SECRET_KEY", "SECRET_KEY_FALLBACKS"):  # keys are derived from the secrets
        mcp_settings.reload()
    elif setting in ("ALLOWED_HOSTS", "DEBUG"):
        _allowed_hosts = None
    elif setting in _HTTP_SETTINGS:
        _http_settings = None


setting_changed.connect(_reload_mcp_settings)
