"""`check --deploy`: the production advice of docs/deployment.md, as warnings (`Tags.deployment`).

Each runs only under `manage.py check --deploy`, as Django's own `security.W*` checks do:

- W262: a database closes its connection after every request (`CONN_MAX_AGE` 0, Django's default): the
  database threads that run sync tools reopen one for every call;
- W263: the audit trail is written and `AUDIT_SPOOL_DIR` is unset: the spool of rows the database could
  not take lives in the temporary directory, which a restart or a tmp cleaner may empty;
- W264: the audit trail is written to SQLite without WAL: every batch then blocks the readers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

from mcp_django.checks.support import short


@register(Tags.compatibility, deploy=True)
def check_persistent_connections(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """W262: each database keeps its connections between requests (`CONN_MAX_AGE` above 0, or None).

    It reads settings only, so it is not tagged `database`: Django 6 runs those only with `--database`.
    """
    return [
        Warning(
            f"DATABASES[{short(alias, 20)}] closes its connection after every request.",
            hint="Set CONN_MAX_AGE above 0 (e.g. 60): sync tools reopen one per call otherwise.",
            id="mcp_django.W262",
        )
        for alias, database in settings.DATABASES.items()
        if database.get("CONN_MAX_AGE", 0) == 0
    ]


@register(Tags.compatibility, deploy=True)
def check_audit_storage(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """W263 and W264: where the audit trail is written, when an endpoint writes it."""
    if not _audited():
        return []
    messages: list[CheckMessage] = []
    if not getattr(settings, "MCP_DJANGO", {}).get("AUDIT_SPOOL_DIR"):  # unset: a temporary directory's
        messages.append(
            Warning(
                "The audit spool is in the temporary directory (AUDIT_SPOOL_DIR unset).",
                hint="Set MCP_DJANGO['AUDIT_SPOOL_DIR'] to a persistent directory on local disk.",
                id="mcp_django.W263",
            )
        )
    database = settings.DATABASES.get("default", {})
    init = str(database.get("OPTIONS", {}).get("init_command", "")).lower().replace(" ", "")
    if database.get("ENGINE") == "django.db.backends.sqlite3" and "journal_mode=wal" not in init:
        messages.append(
            Warning(
                "The audit trail is written to SQLite without WAL.",
                hint="Add 'init_command': 'PRAGMA journal_mode=WAL;' to the database's OPTIONS.",
                id="mcp_django.W264",
            )
        )
    return messages


def _audited() -> bool:
    """Whether an endpoint's interceptors (or `MCP_DJANGO["INTERCEPTORS"]`) write the audit trail."""
    from mcp_django.conf import mcp_settings
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.interceptors.audit import AuditSinkInterceptor
    from mcp_django.interceptors.config import parse_entries

    try:
        configs = [endpoint.interceptors for endpoint in mounted_endpoints() if endpoint.interceptors is not None]
    except Exception:  # a URLconf that does not import: Django's own URL checks report it
        configs = []
    for config in [mcp_settings.INTERCEPTORS, *configs]:
        entries, _ = parse_entries(config, "deploy")
        if any(isinstance(entry.interceptor, AuditSinkInterceptor) for entry in entries):
            return True
    return False
