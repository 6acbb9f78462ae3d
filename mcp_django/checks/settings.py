"""The checks of `MCP_DJANGO`: its type, its keys (the core's and every installed owner's), import strings,
values, and the scopes and authentication classes it names.

Every configuration mistake is reported at start-up with a stable ID; IDs are documented in
`docs/checks.md`; never renumber one.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.utils.module_loading import import_string

from mcp_django.checks.support import is_number, is_positive_int, setting, short, type_name
from mcp_django.conf import (
    DEFAULTS,
    IMPORT_STRINGS,
    SETTING_NAME,
    MCPSettings,
    declared_settings,
    mcp_settings,
    normalize_origin,
)

CACHE_SCOPES: Final = ("public", "private")
AUDIT_WHEN_FULL: Final = ("refuse", "drop")
_DOCS: Final = "See docs/settings.md."


# key -> (accepts the value, what the message says it must be)
_VALUE_RULES: Final[Mapping[str, tuple[Callable[[Any], bool], str]]] = {
    "SERVER_INFO": (lambda v: v is None or isinstance(v, dict), "a dict"),
    "INSTRUCTIONS": (lambda v: v is None or isinstance(v, str), "a string or None"),
    "SESSIONS": (lambda v: isinstance(v, bool), "True or False"),
    "SESSION_IDLE_TIMEOUT": (is_positive_int, "a positive integer"),
    "MAX_REQUEST_BYTES": (is_positive_int, "a positive integer"),
    "SESSION_MAX_CLIENT_BYTES": (is_positive_int, "a positive integer"),
    "SESSION_CACHE_MAX_BYTES": (is_positive_int, "a positive integer"),
    "SESSION_MAX_PER_USER": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "SESSION_MAX_ANONYMOUS": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "SESSION_PURGE_INTERVAL": (lambda v: v is None or (is_number(v) and v >= 0), "a number >= 0 or None"),
    "MAX_HEADER_BYTES": (is_positive_int, "a positive integer"),
    "MAX_PUBLIC_REQUEST_BYTES": (is_positive_int, "a positive integer"),
    "REQUEST_BODY_TIMEOUT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "ALLOWED_ORIGINS": (lambda v: isinstance(v, (list, tuple)), "a list of origins"),
    "PAGE_SIZE": (is_positive_int, "a positive integer"),
    "SITE_URL": (lambda v: v is None or (isinstance(v, str) and v.startswith(("http://", "https://"))), "a URL"),
    "CACHE_TTL": (lambda v: is_number(v) and v >= 0, "a number of seconds >= 0"),
    "CACHE_SCOPE": (lambda v: v in CACHE_SCOPES, "'public' or 'private'"),
    "STATIC_MODULE": (lambda v: v is None or (isinstance(v, str) and v.isidentifier()), "a module name or None"),
    "CLIENT_REQUEST_TIMEOUT": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
        "a number > 0",
    ),
    "REQUEST_STATE_TTL": (is_positive_int, "a positive integer"),
    "SCOPE_GROUPS": (lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v), "a dict of group names"),
    "DEFAULT_AUTHENTICATION_CLASSES": (lambda v: isinstance(v, (list, tuple)), "a list of dotted paths"),
    "AUTHORIZATION_SERVERS": (
        lambda v: isinstance(v, (list, tuple)) and all(isinstance(url, str) for url in v),
        "a list of URLs",
    ),
    "EXTENSIONS": (lambda v: isinstance(v, (list, tuple)), "a list of dotted paths"),
    "INTERCEPTOR_DIRECTIONS": (
        lambda v: (
            isinstance(v, dict)
            and set(v) <= {"request", "response"}
            and all(d in ("sending", "receiving") for d in v.values())
        ),
        "{phase: 'sending' or 'receiving'}",
    ),
    "INTERCEPTOR_CHAIN_TIMEOUT": (
        lambda v: v is None or (is_number(v) and v > 0),
        "a positive number of seconds or None",
    ),
    "AUDIT_SPOOL_DIR": (lambda v: v is None or (isinstance(v, (str, os.PathLike)) and bool(str(v))), "a path or None"),
    "AUDIT_SPOOL_MAX_BYTES": (is_positive_int, "a positive integer"),
    "AUDIT_WHEN_FULL": (lambda v: v in AUDIT_WHEN_FULL, "'refuse' or 'drop'"),
    "AUDIT_DB_TIMEOUT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "AUDIT_REPLAY_INTERVAL": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "STATE_CHECK_INTERVAL": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 60,
        "a number of seconds from 0 to 60",
    ),
    "DATABASE_THREADS": (is_positive_int, "a positive integer"),
    "TOOL_TIMEOUT": (lambda v: v is None or (is_number(v) and v > 0), "a positive number of seconds or None"),
    "SHUTDOWN_GRACE": (lambda v: is_number(v) and v >= 0, "a number of seconds >= 0"),
    "RETRY_AFTER": (is_positive_int, "a positive integer"),
    "IDEMPOTENCY_TTL": (is_positive_int, "a positive integer"),
    "IDEMPOTENCY_WAIT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "IDEMPOTENCY_LEASE": (is_positive_int, "a positive integer"),
    "IDEMPOTENCY_MAX_KEYS": (is_positive_int, "a positive integer"),
    "TOOL_OUTPUT_MAX_CHARS": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "TOOL_OUTPUT_OVERFLOW": (lambda v: v in ("truncate", "refuse"), '"truncate" or "refuse"'),
    "AUTH_CACHE_TTL": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
        "a number of seconds >= 0",
    ),
}


@register(Tags.compatibility)
def check_settings(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check `MCP_DJANGO`: its type, its keys, import strings and values."""
    user = getattr(settings, SETTING_NAME, {})
    if not isinstance(user, Mapping):
        return [
            Error(
                f"{SETTING_NAME} must be a dict, not {type_name(user)}.",
                hint=f"Set {SETTING_NAME} = {{...}} with the keys in docs/settings.md.",
                id="mcp_django.E001",
            )
        ]
    owners = settings_owners()
    messages: list[CheckMessage] = _twice_declared(owners)
    known = {key for owner in owners for key in owner.defaults}
    for key in user:
        if key not in known:
            messages.append(_unknown_key(key, known))
    for key in IMPORT_STRINGS:
        if key in user:
            messages += _check_import(key, user[key])
    rules = [*_VALUE_RULES.items(), *(rule for owner in owners for rule in owner.rules.items())]
    for key, (accepts, expected) in rules:
        if key in user and not accepts(user[key]):
            messages.append(
                Error(
                    f"{setting(key)} must be {expected}.",
                    hint=f"It is {short(user[key])}: fix it, or remove it to use the default.",
                    id="mcp_django.E004",
                )
            )
    messages += _check_server_info(user.get("SERVER_INFO"))
    messages += _check_origins(user.get("ALLOWED_ORIGINS"))
    messages += _check_session_caps(user)
    return messages


def settings_owners() -> list[MCPSettings]:
    """Everyone who declares `MCP_DJANGO` keys: the core, the installed apps and extensions
    (`declared_settings()`), and the extensions only an endpoint's `extensions=` names."""
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.extensions import offered_extensions

    owners = [mcp_settings, *declared_settings()]
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        endpoints = []
    for endpoint in endpoints:
        for extension in offered_extensions(endpoint.added_extensions)[0]:
            declared = extension.settings
            if isinstance(declared, MCPSettings) and not any(declared is owner for owner in owners):
                owners.append(declared)
    return owners


def _twice_declared(owners: list[MCPSettings]) -> list[CheckMessage]:
    """E025: a key two owners declare (which default and which rules apply would depend on load order)."""
    first: dict[str, MCPSettings] = {}
    messages: list[CheckMessage] = []
    for owner in owners:
        for key in owner.defaults:
            other = first.setdefault(key, owner)
            if other is not owner:
                messages.append(
                    Error(
                        f"{setting(key)} is declared by {short(other.owner)} and {short(owner.owner)}.",
                        hint="Rename the key of one of them: each key has one owner (docs/extensions.md).",
                        id="mcp_django.E025",
                    )
                )
    return messages


def _unknown_key(key: Any, known: Iterable[str]) -> CheckMessage:
    guesses = difflib.get_close_matches(str(key).upper(), list(known), n=1)
    hint = f"Did you mean {guesses[0]!r}?" if guesses else f"Remove it, or install what declares it. {_DOCS}"
    return Error(f"{SETTING_NAME} has an unknown key {short(key, 40)}.", hint=hint, id="mcp_django.E002")


def _check_import(key: str, value: Any) -> list[CheckMessage]:
    if not isinstance(value, str):
        if isinstance(value, type):
            return _check_class(key, value)
        return [
            Error(
                f"{setting(key)} must be a dotted import path, not {type_name(value)}.",
                hint=f"Write it as a string, e.g. {DEFAULTS[key]!r}.",
                id="mcp_django.E003",
            )
        ]
    try:
        imported = import_string(value)
    except ImportError:
        return [
            Error(
                f"{setting(key)} cannot be imported.",
                hint=f"Check the dotted path {short(value, 60)}.",
                id="mcp_django.E003",
            )
        ]
    return _check_class(key, imported)


def _base_classes() -> dict[str, type]:
    """The class each import-string setting must name a subclass of."""
    from mcp_django.endpoints.sessions import SessionStore
    from mcp_django.scopes import ScopePolicy

    return {"SESSION_STORE": SessionStore, "SCOPE_POLICY": ScopePolicy}


def _check_class(key: str, value: Any) -> list[CheckMessage]:
    base = _base_classes()[key]
    if isinstance(value, type) and issubclass(value, base):
        return []
    return [
        Error(
            f"{setting(key)} is not a {base.__name__} subclass.",
            hint=f"Name a subclass of {base.__module__}.{base.__qualname__}.",
            id="mcp_django.E005",
        )
    ]


def _check_server_info(value: Any) -> list[CheckMessage]:
    if not isinstance(value, dict):
        return []
    if all(isinstance(value.get(field), str) and value[field] for field in ("name", "version")):
        return []
    return [
        Error(
            f"{setting('SERVER_INFO')} needs 'name' and 'version' strings.",
            hint='Use e.g. {"name": "my-server", "version": "1.0"}.',
            id="mcp_django.E006",
        )
    ]


def _check_session_caps(user: Mapping[str, Any]) -> list[CheckMessage]:
    """E060: sessions are capped, but the session store cannot count them."""
    if user.get("SESSION_MAX_PER_USER") is None and user.get("SESSION_MAX_ANONYMOUS") is None:
        return []
    store = user.get("SESSION_STORE", DEFAULTS["SESSION_STORE"])
    try:
        store_class = import_string(store) if isinstance(store, str) else store
    except ImportError:
        return []  # E003
    base = _base_classes()["SESSION_STORE"]
    if not isinstance(store_class, type) or not issubclass(store_class, base):
        return []  # E005
    if getattr(store_class, "count_open", None) is not getattr(base, "count_open", None):
        return []  # the store counts
    return [
        Error(
            f"{setting('SESSION_STORE')} cannot count sessions, and they are capped.",
            hint=f"Implement count_open() on {store_class.__name__}, or unset SESSION_MAX_PER_USER/_ANONYMOUS.",
            id="mcp_django.E060",
        )
    ]


def _check_origins(value: Any) -> list[CheckMessage]:
    if not isinstance(value, (list, tuple)):
        return []
    messages: list[CheckMessage] = []
    for origin in value:
        if origin == "*":
            messages.append(
                Warning(
                    f"{setting('ALLOWED_ORIGINS')} contains '*': any web page may call.",
                    hint="List the origins that may call instead, e.g. 'https://app.example.com'.",
                    id="mcp_django.W001",
                )
            )
        elif not isinstance(origin, str) or normalize_origin(origin) is None:
            messages.append(
                Error(
                    f"{setting('ALLOWED_ORIGINS')} has an invalid origin.",
                    hint=f"{short(origin, 40)} is not scheme://host[:port], e.g. 'https://app.example.com'.",
                    id="mcp_django.E007",
                )
            )
    return messages


@register(Tags.compatibility)
def check_scopes_and_authentication(
    app_configs: Iterable[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Check `SCOPE_GROUPS` values and the classes of `DEFAULT_AUTHENTICATION_CLASSES`."""
    from django.apps import apps
    from rest_framework.authentication import TokenAuthentication

    from mcp_django.scopes import Scope

    user = getattr(settings, SETTING_NAME, {})
    if not isinstance(user, Mapping):
        return []
    messages: list[CheckMessage] = []
    groups = user.get("SCOPE_GROUPS")
    if isinstance(groups, dict):
        for group, value in groups.items():
            try:
                Scope.parse(value)
            except ValueError:
                messages.append(
                    Error(
                        f"{setting('SCOPE_GROUPS')} grants {short(group)} no scope.",
                        hint=f"{short(value)} is not a scope: use 'USER', 'TEAM' or 'SYSTEM'.",
                        id="mcp_django.E015",
                    )
                )
    classes = user.get("DEFAULT_AUTHENTICATION_CLASSES", DEFAULTS["DEFAULT_AUTHENTICATION_CLASSES"])
    if not isinstance(classes, (list, tuple)):
        return messages
    for entry in classes:
        try:
            imported = import_string(entry) if isinstance(entry, str) else entry
        except ImportError:
            imported = None
        if not (isinstance(imported, type) and callable(getattr(imported, "authenticate", None))):
            messages.append(
                Error(
                    f"{setting('DEFAULT_AUTHENTICATION_CLASSES')} has {short(entry, 40)}.",
                    hint="Name an authentication class, e.g. 'mcp_django.auth.TokenAuthentication'.",
                    id="mcp_django.E016",
                )
            )
        elif issubclass(imported, TokenAuthentication) and not apps.is_installed("rest_framework.authtoken"):
            messages.append(
                Error(
                    f"{imported.__name__} needs 'rest_framework.authtoken' installed.",
                    hint="Add 'rest_framework.authtoken' to INSTALLED_APPS and migrate.",
                    id="mcp_django.E017",
                )
            )
    return messages
