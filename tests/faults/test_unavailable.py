"""Which database errors are "unavailable now" (503) and which are bugs (13.9), with errors SQLite really raises."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from django.db import IntegrityError, InterfaceError, OperationalError, connection

from mcp_django.runtime.unavailable import is_database_unavailable


def _as_django(error: sqlite3.Error) -> OperationalError:
    """What Django raises for `error` (its wrapper: the driver's error as the cause)."""
    try:
        raise OperationalError(*error.args) from error
    except OperationalError as wrapped:
        return wrapped


def _sqlite_error(database: Path, statement: str, *, lock: bool = False, read_only: bool = False) -> sqlite3.Error:
    with contextlib.ExitStack() as stack:
        if lock:
            holder = stack.enter_context(contextlib.closing(sqlite3.connect(database, isolation_level=None)))
            holder.execute("BEGIN EXCLUSIVE")
        uri = f"file:{database}?mode=ro" if read_only else f"file:{database}"
        other = stack.enter_context(contextlib.closing(sqlite3.connect(uri, uri=True, timeout=0)))
        try:
            other.execute(statement)
        except sqlite3.Error as error:
            return error
    raise AssertionError(f"{statement!r} did not fail")


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "db.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as setup:
        setup.execute("CREATE TABLE t (x)")
        setup.commit()
    return path


def test_a_lock_held_past_the_timeout_is_unavailable(database: Path) -> None:
    assert is_database_unavailable(_as_django(_sqlite_error(database, "SELECT * FROM t", lock=True)))


def test_a_read_only_database_is_unavailable(database: Path) -> None:
    assert is_database_unavailable(_as_django(_sqlite_error(database, "INSERT INTO t VALUES (1)", read_only=True)))


def test_a_missing_table_or_bad_sql_is_a_bug_not_an_outage(database: Path) -> None:
    assert not is_database_unavailable(_as_django(_sqlite_error(database, "SELECT * FROM missing")))
    assert not is_database_unavailable(_as_django(_sqlite_error(database, "SELEC 1")))


@pytest.mark.django_db
def test_django_errors_other_than_a_broken_connection_are_not_outages() -> None:
    with pytest.raises(OperationalError) as raised, connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table_here")

    assert not is_database_unavailable(raised.value)
    assert not is_database_unavailable(IntegrityError("UNIQUE constraint failed"))
    assert not is_database_unavailable(ValueError("database is locked"))
    assert is_database_unavailable(InterfaceError("connection already closed"))
