"""System checks: every configuration mistake is reported at start-up with a stable ID.

IDs are documented in `docs/checks.md`; never renumber one.
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

from mcp_django.checks.support import is_int, is_number, is_positive_int, setting, short, type_name
from mcp_django.conf import DEFAULTS, IMPORT_STRINGS, SETTING_NAME, normalize_origin

CACHE_SCOPES: Final = ("public", "private")
INTERCEPTOR_CHECK_IDS: Final[Mapping[str, str]] = {
    "import": "mcp_django.E018",
    "not_interceptor": "mcp_django.E019",
    "priority_both": "mcp_django.E020",
    "duplicate": "mcp_django.E021",
    "widened": "mcp_django.E022",
    "value": "mcp_django.E023",
    "options": "mcp_django.E024",
}
"""The check ID of each kind of interceptor-list problem (`interceptors.config.PROBLEM_KINDS`)."""
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
    "SESSION_MAX_PER_USER": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "SESSION_MAX_ANONYMOUS": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "SESSION_PURGE_INTERVAL": (lambda v: v is None or (is_number(v) and v >= 0), "a number >= 0 or None"),
    "MAX_HEADER_BYTES": (is_positive_int, "a positive integer"),
    "MAX_PUBLIC_REQUEST_BYTES": (is_positive_int, "a positive integer"),
    "REQUEST_BODY_TIMEOUT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "ALLOWED_ORIGINS": (lambda v: isinstance(v, (list, tuple)), "a list of origins"),
    "PAGE_SIZE": (is_positive_int, "a positive integer"),
    "SITE_URL": (lambda v: v is None or (isinstance(v, str) and v.startswith(("http://", "https://"))), "a URL"),
    "CACHE_TTL_MS": (lambda v: is_int(v) and v >= 0, "an integer >= 0"),
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
    "TASK_MAX_ACTIVE_PER_USER": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "TASK_MAX_ACTIVE_ANONYMOUS": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
    "TASK_TIMEOUT": (lambda v: v is None or (is_number(v) and v > 0), "a positive number of seconds or None"),
    "TASK_MAX_BYTES": (is_positive_int, "a positive integer"),
    "TASK_PURGE_INTERVAL": (lambda v: v is None or (is_number(v) and v >= 0), "a number >= 0 or None"),
    "EXTENSIONS": (lambda v: isinstance(v, (list, tuple)), "a list of dotted paths"),
    "INTERCEPTOR_DIRECTIONS": (
        lambda v: (
            isinstance(v, dict)
            and set(v) <= {"request", "response"}
            and all(d in ("sending", "receiving") for d in v.values())
        ),
        "{phase: 'sending' or 'receiving'}",
    ),
    "INTERCEPTOR_CHAIN_TIMEOUT_MS": (lambda v: v is None or is_positive_int(v), "a positive integer or None"),
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
    "GATEWAY_CONNECT_TIMEOUT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "GATEWAY_READ_TIMEOUT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "REMOTE_MAX_MESSAGE_BYTES": (is_positive_int, "a positive integer"),
    "REMOTE_MAX_LIST_ITEMS": (is_positive_int, "a positive integer"),
    "REMOTE_MAX_LIST_PAGES": (is_positive_int, "a positive integer"),
    "REMOTE_MAX_DESCRIPTION_CHARS": (is_positive_int, "a positive integer"),
    "REMOTE_MAX_INPUT_ROUNDS": (is_positive_int, "a positive integer"),
    "REMOTE_CALL_TIMEOUT": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
    "OAUTH_CLIENT_MAX_BYTES": (is_positive_int, "a positive integer"),
    "OAUTH_CLIENT_ALLOW_LOOPBACK": (lambda v: isinstance(v, bool), "True or False"),
    "TOOL_TIMEOUT": (lambda v: v is None or (is_number(v) and v > 0), "a positive number of seconds or None"),
    "SHUTDOWN_GRACE": (lambda v: is_number(v) and v >= 0, "a number of seconds >= 0"),
    "RETRY_AFTER": (is_positive_int, "a positive integer"),
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
    messages: list[CheckMessage] = []
    for key in user:
        if key not in DEFAULTS:
            messages.append(_unknown_key(key))
    for key in IMPORT_STRINGS:
        if key in user:
            messages += _check_import(key, user[key])
    for key, (accepts, expected) in _VALUE_RULES.items():
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


def _unknown_key(key: Any) -> CheckMessage:
    guesses = difflib.get_close_matches(str(key).upper(), list(DEFAULTS), n=1)
    hint = f"Did you mean {guesses[0]!r}?" if guesses else f"Remove it. {_DOCS}"
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
    from mcp_django.scopes import ScopePolicy
    from mcp_django.sessions import SessionStore

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
def check_registries(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check every registry's tool, resource and prompt names against MCP's rules."""
    from mcp_django.registry import all_registries

    return [
        Error(
            error,
            hint=f"Rename or fix it in the {registry.name!r} registry.",
            obj=registry,
            id="mcp_django.E008",
        )
        for registry in all_registries()
        for error in registry.name_errors()
    ]


@register(Tags.compatibility)
def check_interceptors(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check `MCP_DJANGO["INTERCEPTORS"]` and the interceptor list of every mounted endpoint."""
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.interceptors.config import plan_problems

    user = getattr(settings, SETTING_NAME, {})
    problems = plan_problems(user.get("INTERCEPTORS", []), setting("INTERCEPTORS")) if isinstance(user, Mapping) else []
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        endpoints = []
    for endpoint in endpoints:
        if endpoint.interceptors is not None:
            problems += plan_problems(endpoint.interceptors, f"Endpoint {endpoint.name!r} interceptors")
    return [Error(problem.message, hint=problem.hint, id=INTERCEPTOR_CHECK_IDS[problem.kind]) for problem in problems]


@register(Tags.compatibility)
def check_providers(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Report what went wrong loading the apps' `mcp_providers`: imports, types, methods, duplicate ids."""
    from mcp_django.providers import provider_registry

    return [Error(message, hint=hint, id=check_id) for check_id, message, hint in provider_registry.problems]


@register(Tags.urls)
def check_endpoints(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check the endpoints the root URLconf mounts: distinct paths and names, known provider ids."""
    from django.core.exceptions import ImproperlyConfigured

    from mcp_django.endpoints import endpoint_registry
    from mcp_django.providers import provider_registry

    try:
        registry = endpoint_registry()
    except ImproperlyConfigured as error:
        message, _, hint = str(error).partition("; ")
        return [Error(f"{message}.", hint=f"{hint[:1].upper()}{hint[1:]}", id="mcp_django.E013")]
    except Exception:  # a URLconf that does not import: Django's own URL checks report it
        return []
    messages: list[CheckMessage] = []
    for endpoint in registry:
        for provider_id in endpoint.provider_ids or ():
            if not isinstance(provider_id, str):
                continue
            try:
                provider_registry.get(provider_id)
            except LookupError:
                messages.append(
                    Error(
                        f"Endpoint {endpoint.name!r} names an unknown provider {short(provider_id, 40)}.",
                        hint="Use the id of a provider an app lists in mcp_providers.",
                        id="mcp_django.E014",
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


@register(Tags.compatibility)
def check_bus_providers(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Warn about bus providers without a whitelist: they expose every action of their bus to MCP clients."""
    from mcp_django.bus import BusProvider
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.providers import provider_registry

    providers = list(provider_registry)
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        endpoints = []
    for endpoint in endpoints:
        try:
            served = endpoint.providers
        except LookupError:  # an unknown provider id is mcp_django.E014
            continue
        providers += served
    seen: set[str] = set()
    messages: list[CheckMessage] = []
    for provider in providers:
        if isinstance(provider, BusProvider) and provider.actions is None and provider.id not in seen:
            seen.add(provider.id)
            messages.append(
                Warning(
                    f"Bus provider {short(provider.id, 40)} exposes every action of its bus.",
                    hint=f"Set {type(provider).__name__}.actions to glob patterns, or ['*'] to mean it.",
                    obj=provider,
                    id="mcp_django.W002",
                )
            )
    return messages


@register(Tags.database)
def check_state_rows(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Warn about admin state rows naming a provider or interceptor no longer in code (they have no effect).

    A database check: it runs with `manage.py check --database default` and before `migrate`.
    """
    if not kwargs.get("databases"):
        return []
    from mcp_django.control.inventory import code_interceptors, code_providers
    from mcp_django.models import InterceptorState, ProviderState

    try:
        stale = [
            ("provider", name)
            for name in ProviderState.objects.exclude(provider_id__in=[p.id for p in code_providers()])
            .order_by("provider_id")
            .values_list("provider_id", flat=True)
        ]
        stale += [
            ("interceptor", name)
            for name in InterceptorState.objects.exclude(name__in=list(code_interceptors()))
            .order_by("name")
            .values_list("name", flat=True)
        ]
    except Exception:  # no tables yet: migrate has not run
        return []
    return [
        Warning(
            f"The MCP {kind} row {short(name, 40)} names nothing in code.",
            hint="Delete the row in the admin, or restore what it names.",
            id="mcp_django.W010",
        )
        for kind, name in stale
    ]
