"""The `MCP_DJANGO` settings dict, read in exactly one place.

Everything in mcp_django reads configuration through `mcp_settings`::

    from mcp_django.conf import mcp_settings

    mcp_settings.MAX_REQUEST_BYTES

Values come from `settings.MCP_DJANGO`, falling back to `DEFAULTS`. Keys listed in
`IMPORT_STRINGS` are resolved to the object they name on first access. Everything is
re-read when a test changes `MCP_DJANGO` (`override_settings` sends `setting_changed`).

`DEFAULTS` holds the core's keys only. An extension or optional app owns its keys: it makes an
`MCPSettings` of its own (their defaults and value rules) and names it on its `AppConfig`
(`mcp_settings = ["shop.conf.shop_settings"]`) or its `Extension` class (`settings = shop_settings`).
Its code reads its keys through that object; `mcp_settings` answers for them too, and the system
checks accept and check them (docs/extensions.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.crypto import salted_hmac
from django.utils.module_loading import import_string

from mcp_django.version import __version__

SETTING_NAME: Final = "MCP_DJANGO"
CORE: Final = "mcp_django"
"""The owner of `DEFAULTS`' keys."""

MiB: Final = 1024 * 1024

DEFAULTS: Final[Mapping[str, Any]] = {
    # None means {"name": "mcp-django", "version": mcp_django.__version__}, filled in on first access.
    "SERVER_INFO": None,
    "INSTRUCTIONS": None,
    "SESSIONS": True,
    "SESSION_IDLE_TIMEOUT": 3600,
    "SESSION_STORE": "mcp_django.endpoints.sessions.DatabaseSessionStore",
    "SESSION_MAX_CLIENT_BYTES": 64 * 1024,
    "SESSION_MAX_PER_USER": 100,
    "SESSION_MAX_ANONYMOUS": 100,
    "SESSION_CACHE_MAX_BYTES": 32 * MiB,
    "SESSION_PURGE_INTERVAL": 300,
    "MAX_REQUEST_BYTES": 4 * MiB,
    # Timeouts and limits of a request on the wire (docs/deployment.md).
    "MAX_HEADER_BYTES": 16 * 1024,
    "REQUEST_BODY_TIMEOUT": 30,
    # The package's public views beside the endpoints (the OAuth server, metadata): bodies from anyone.
    "MAX_PUBLIC_REQUEST_BYTES": 64 * 1024,
    "ALLOWED_ORIGINS": [],
    "PAGE_SIZE": 100,
    "CACHE_TTL": 60,
    "CACHE_SCOPE": "private",
    "STATIC_MODULE": "mcp",
    # Asking the client for input (docs/asking-the-client.md).
    "CLIENT_REQUEST_TIMEOUT": 300,
    "REQUEST_STATE_TTL": 600,
    # Scopes and authentication (docs/scopes.md, docs/authentication.md).
    "SCOPE_GROUPS": {},
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "mcp_django.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "AUTHORIZATION_SERVERS": [],
    # Protocol extensions (docs/extensions.md): import strings, served beside those the apps name.
    "EXTENSIONS": [],
    # Interceptors (docs/interceptors.md).
    "INTERCEPTORS": [],
    "INTERCEPTOR_DIRECTIONS": {"request": "sending", "response": "receiving"},
    "INTERCEPTOR_CHAIN_TIMEOUT": None,
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
    # The site's absolute URL (`https://example.com/`) where no request names it (stdio): the links a
    # client is sent to open, such as the page where a user connects their own account upstream.
    "SITE_URL": None,
    # Faults (docs/deployment.md): time limits, shutdown, an unavailable database.
    "TOOL_TIMEOUT": None,
    "SHUTDOWN_GRACE": 5.0,
    "RETRY_AFTER": 5,
    # Safe side effects (docs/side-effects.md): idempotency keys on tools/call.
    "IDEMPOTENCY_TTL": 24 * 3600,
    "IDEMPOTENCY_WAIT": 30.0,
    "IDEMPOTENCY_LEASE": 600,
    "IDEMPOTENCY_MAX_KEYS": 1000,
    # Output caps: the most characters of a tool's result, and "truncate" or "refuse" past it.
    "TOOL_OUTPUT_MAX_CHARS": None,
    "TOOL_OUTPUT_OVERFLOW": "truncate",
}
"""The core's keys, with their defaults; the installed parts declare their own (`declared_settings()`).
`docs/settings.md` describes each, under its owner."""

IMPORT_STRINGS: Final[frozenset[str]] = frozenset({"SESSION_STORE", "SCOPE_POLICY"})
"""Keys whose value is a dotted path (or the object itself), resolved lazily."""


def _default_server_info() -> dict[str, Any]:
    return {"name": "mcp-django", "version": __version__}


def _default_audit_spool_dir() -> Path:
    """`<tmp>/mcp_django-audit-<digest of the default database>`: one spool per database, never shared by two."""
    database = settings.DATABASES.get("default", {})
    where = "|".join(str(database.get(key, "")) for key in ("ENGINE", "NAME", "HOST", "PORT"))
    return Path(tempfile.gettempdir()) / f"mcp_django-audit-{hashlib.sha256(where.encode()).hexdigest()[:12]}"


Rule = tuple[Callable[[Any], bool], str]
"""A value rule: (accepts the value, what the check message says it must be, e.g. "a positive integer")."""


class MCPSettings:
    """Attribute access to the `MCP_DJANGO` keys one owner declares, with defaults and lazily imported strings.

    The core's are `mcp_settings`, which also answers for the keys the installed parts declare
    (`declared_settings()`). An extension makes its own::

        shop_settings = MCPSettings(
            {"SHOP_RECEIPT_DAYS": 30},
            owner="shop",
            rules={"SHOP_RECEIPT_DAYS": (lambda v: isinstance(v, int) and v > 0, "a positive integer")},
        )

    Values are cached on the instance after first access; `reload()` drops the cache (every instance
    reloads when `MCP_DJANGO` changes).

    Args:
        defaults: every key the owner accepts, with its default.
        owner: who declares the keys, the package or app (`"mcp_django.tasks"`): the settings reference
            and the check that finds two owners of one key name it.
        rules: value rules by key, checked by `manage.py check` (`mcp_django.E004`).
        import_strings: keys whose value is a dotted path, resolved to the object on first access.
    """

    def __init__(
        self,
        defaults: Mapping[str, Any],
        *,
        owner: str,
        rules: Mapping[str, Rule] | None = None,
        import_strings: frozenset[str] = frozenset(),
    ) -> None:
        self.defaults = defaults
        self.import_strings = import_strings
        self.owner = owner
        self.rules: Mapping[str, Rule] = rules or {}
        self._cached: set[str] = set()
        self._reload_callbacks: list[Callable[[], None]] = []
        _instances.add(self)

    def __repr__(self) -> str:
        return f"<MCPSettings of {self.owner}: {len(self.defaults)} keys>"

    @property
    def user_settings(self) -> Mapping[str, Any]:
        """The raw `settings.MCP_DJANGO` dict (empty when unset or not a dict; checks report the latter)."""
        value = getattr(settings, SETTING_NAME, None)
        return value if isinstance(value, Mapping) else {}

    def __getattr__(self, name: str) -> Any:
        if name not in self.defaults:
            owner = _owner_of(name) if self.owner == CORE and not name.startswith("_") else None
            if owner is None:
                raise AttributeError(f"Invalid MCP_DJANGO setting: {name!r}")
            return getattr(owner, name)
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


_instances: weakref.WeakSet[MCPSettings] = weakref.WeakSet()
mcp_settings = MCPSettings(DEFAULTS, owner=CORE, import_strings=IMPORT_STRINGS)
_declared: tuple[MCPSettings, ...] | None = None


def declared_settings() -> tuple[MCPSettings, ...]:
    """The settings the installed parts declare beside the core's, in `INSTALLED_APPS` order.

    Each app config's `mcp_settings` (import strings of `MCPSettings`), then the `settings` of the
    extensions `MCP_DJANGO["EXTENSIONS"]` and the apps' `mcp_extensions` name. Found on first use and
    again after `MCP_DJANGO` or `INSTALLED_APPS` change; until the app registry is ready only
    `EXTENSIONS` is looked at, and nothing is kept. An extension that does not import is left out
    (check `mcp_django.E121` reports it); an `mcp_settings` entry that does not import raises.
    """
    global _declared
    if _declared is not None:
        return _declared
    from django.apps import apps

    found: list[Any] = []
    named: list[Any] = list(_as_list(mcp_settings.EXTENSIONS))
    if apps.apps_ready:
        for app_config in apps.get_app_configs():
            found += (import_string(path) for path in _as_list(getattr(app_config, "mcp_settings", ())))
            named += _as_list(getattr(app_config, "mcp_extensions", ()))
    for entry in named:
        try:
            extension = import_string(entry) if isinstance(entry, str) else entry
        except ImportError:
            continue
        found.append(getattr(extension, "settings", None))
    owners = (owner for owner in found if isinstance(owner, MCPSettings) and owner is not mcp_settings)
    unique = tuple({id(owner): owner for owner in owners}.values())
    if apps.apps_ready:
        _declared = unique
    return unique


def _as_list(value: Any) -> Iterable[Any]:
    return value if isinstance(value, (list, tuple)) else ()


def _owner_of(name: str) -> MCPSettings | None:
    return next((owner for owner in declared_settings() if name in owner.defaults), None)


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
    global _allowed_hosts, _http_settings, _declared
    if setting in (SETTING_NAME, "SECRET_KEY", "SECRET_KEY_FALLBACKS"):  # keys are derived from the secrets
        _declared = None
        for instance in list(_instances):
            instance.reload()
    elif setting == "INSTALLED_APPS":
        _declared = None
    elif setting in ("ALLOWED_HOSTS", "DEBUG"):
        _allowed_hosts = None
    elif setting in _HTTP_SETTINGS:
        _http_settings = None


setting_changed.connect(_reload_mcp_settings)
