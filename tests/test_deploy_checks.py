"""`check --deploy`: docs/deployment.md's production advice as warnings, each with its whole message."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from mcp_django.checks.deployment import check_audit_storage, check_persistent_connections

AUDIT = ["mcp_django.interceptors.audit.AuditSinkInterceptor"]
SQLITE = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:", "CONN_MAX_AGE": 60}


def found(messages: list[Any]) -> list[tuple[str, str, str]]:
    return [(message.id, message.msg, message.hint) for message in messages]


def test_a_database_without_persistent_connections_is_w262() -> None:
    with override_settings(DATABASES={"default": {**SQLITE, "CONN_MAX_AGE": 0}, "replica": SQLITE}):
        assert found(check_persistent_connections()) == [
            (
                "mcp_django.W262",
                "DATABASES['default'] closes its connection after every request.",
                "Set CONN_MAX_AGE above 0 (e.g. 60): sync tools reopen one per call otherwise.",
            )
        ]


def test_the_audit_trail_in_a_temporary_spool_and_on_sqlite_without_wal_is_w263_and_w264() -> None:
    with override_settings(DATABASES={"default": SQLITE}, MCP_DJANGO={"INTERCEPTORS": AUDIT}):
        assert found(check_audit_storage()) == [
            (
                "mcp_django.W263",
                "The audit spool is in the temporary directory (AUDIT_SPOOL_DIR unset).",
                "Set MCP_DJANGO['AUDIT_SPOOL_DIR'] to a persistent directory on local disk.",
            ),
            (
                "mcp_django.W264",
                "The audit trail is written to SQLite without WAL.",
                "Add 'init_command': 'PRAGMA journal_mode=WAL;' to the database's OPTIONS.",
            ),
        ]


def test_a_deployment_as_the_docs_advise_passes(tmp_path: Any) -> None:
    wal = {**SQLITE, "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}}
    settings = {"INTERCEPTORS": AUDIT, "AUDIT_SPOOL_DIR": str(tmp_path)}
    with override_settings(DATABASES={"default": wal}, MCP_DJANGO=settings):
        assert check_audit_storage() == []
        assert check_persistent_connections() == []


@pytest.mark.parametrize("deploy", [False, True])
def test_they_run_only_under_check_deploy(deploy: bool) -> None:
    with override_settings(DATABASES={"default": {**SQLITE, "CONN_MAX_AGE": 0}}):
        ids = {message.id for message in run_checks(include_deployment_checks=deploy)}
    assert ("mcp_django.W262" in ids) is deploy
