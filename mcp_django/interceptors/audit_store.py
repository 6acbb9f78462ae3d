"""Writing `ToolCallRecord` rows for the audit writer (`mcp_django.interceptors.audit`): one transaction a batch.

A batch is inserted with the model's INSERT (the values prepared by each field, as `bulk_create` prepares
them, without building model instances), between a `BEGIN` and a `COMMIT` sent on the DB-API connection
itself on SQLite and PostgreSQL (on PostgreSQL all of it as one query string, one round trip; `atomic()`
elsewhere, and for a replay); the wait for a lock is bounded by `MCP_DJANGO["AUDIT_DB_TIMEOUT"]` (SQLite:
the writer connection's busy timeout, set once per connection; PostgreSQL: per transaction). A batch the
database cannot take raises `Unavailable`, and the writer spools it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any, Final

from django.db import DatabaseError, DataError, IntegrityError, connections, models, router, transaction

from mcp_django.conf import mcp_settings
from mcp_django.runtime.first_use import first_use

logger = logging.getLogger("mcp_django.interceptors")

BATCH_SIZE: Final = 500
"""Rows per transaction, for a group commit and for a replayed chunk alike."""


class Unavailable(Exception):
    """The database could not take a batch (locked past the bounded wait, read-only, unreachable)."""


_record_model = first_use("mcp_django.models", "ToolCallRecord")
"""`ToolCallRecord` (models need the app registry, ready only after this module loads)."""


def tidy_connection() -> None:
    """Keep the writer's connection between batches, as `CONN_MAX_AGE` allows, and drop a broken one.

    The writer is one long-lived thread, not a request: with `CONN_MAX_AGE = 0` it keeps its connection
    (reconnecting per batch costs more than the batch; on SQLite in WAL mode closing the last connection
    even checkpoints). A positive `CONN_MAX_AGE` still bounds the connection's age.
    """
    connection = connections[router.db_for_write(_record_model())]
    if connection.settings_dict.get("CONN_MAX_AGE") != 0:
        connection.close_if_unusable_or_obsolete()
    elif connection.errors_occurred and connection.connection is not None and not connection.is_usable():
        connection.close()


def write_chunks(rows: Sequence[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH_SIZE):
        write_rows(rows[start : start + BATCH_SIZE], dedupe=True)


def write_rows(rows: Sequence[dict[str, Any]], *, dedupe: bool) -> None:
    """Insert `rows` in one transaction (with `dedupe`, leaving out the ones already there).

    Raises:
        Unavailable: the database could not take them; nothing was written.
    """
    ToolCallRecord = _record_model()
    alias = router.db_for_write(ToolCallRecord)
    try:
        _bound_the_wait_once(alias)
        if dedupe or not _insert_committed(ToolCallRecord, alias, rows):
            with transaction.atomic(using=alias):
                _bound_the_wait(alias)
                if dedupe:
                    rows = _missing(ToolCallRecord, alias, rows)
                _insert(ToolCallRecord, alias, rows)
    except (IntegrityError, DataError):
        _write_one_by_one(ToolCallRecord, alias, rows)
    except DatabaseError as exc:
        with contextlib.suppress(Exception):
            connections[alias].close()  # a read-only or broken connection is not reused once the database is back
        raise Unavailable(str(exc) or type(exc).__name__) from exc


def _missing(model: Any, alias: str, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose (trace_id, origin) is neither in the database nor earlier in `rows`."""
    seen = set(
        model.objects.using(alias)
        .filter(trace_id__in={row["trace_id"] for row in rows})
        .values_list("trace_id", "origin")
    )
    missing = []
    for row in rows:
        key = (row["trace_id"], row["origin"])
        if key not in seen:
            seen.add(key)
            missing.append(row)
    return missing


def _write_one_by_one(model: Any, alias: str, rows: Sequence[dict[str, Any]]) -> None:
    """A batch the database rejected as data: keep every row it takes (a deleted user becomes none)."""
    for row in rows:
        for attempt in (row, {**row, "user_id": None}):
            try:
                with transaction.atomic(using=alias):
                    model.objects.using(alias).create(**attempt)
                break
            except (IntegrityError, DataError):
                continue
        else:
            logger.error("The database rejected an audit record: %r", row)


def _insert(model: Any, alias: str, rows: Sequence[dict[str, Any]]) -> None:
    """`bulk_create` of `rows` without building model instances: one `executemany` of the model's INSERT.

    The values go through each field's `get_db_prep_save`, as `bulk_create` sends them; a column a row
    leaves out gets the field's default.
    """
    if not rows:
        return
    connection = connections[alias]
    fields, sql = _insert_statement(model, connection)
    with connection.cursor() as cursor:
        cursor.executemany(sql, _values(fields, rows, connection))


def _values(fields: Sequence[Any], rows: Sequence[dict[str, Any]], connection: Any) -> list[list[Any]]:
    """Each row's values as the database takes them: what `get_db_prep_save` gives, without the call where it
    hands the value back as it is on SQLite and PostgreSQL (a `str` for a `CharField`, a `float` for a
    `FloatField`, an `int` id for a foreign key to an integer key, None)."""
    plain_vendor = connection.vendor in _PLAIN_TRANSACTIONS
    plan = [(field.attname, _as_they_are(field) if plain_vendor else frozenset(), field) for field in fields]
    return [
        [
            value if type(value) in plain else field.get_db_prep_save(value, connection)
            for attname, plain, field in plan
            for value in (row[attname] if attname in row else field.get_default(),)
        ]
        for row in rows
    ]


_PLAIN_VALUES: Final[dict[type, frozenset[type]]] = {
    models.CharField: frozenset({str, type(None)}),
    models.FloatField: frozenset({float, type(None)}),
    models.AutoField: frozenset({int, type(None)}),
    models.BigAutoField: frozenset({int, type(None)}),
    models.IntegerField: frozenset({int, type(None)}),
    models.BigIntegerField: frozenset({int, type(None)}),
}
"""The field classes (exactly these, not subclasses, which may prepare values their own way) whose
`get_db_prep_save` on SQLite and PostgreSQL returns a value of these types unchanged."""


def _as_they_are(field: Any) -> frozenset[type]:
    """The value types `field` stores as they are (none: each value goes through `get_db_prep_save`)."""
    if type(field) is models.ForeignKey:
        field = field.target_field
    return _PLAIN_VALUES.get(type(field), frozenset())


_PLAIN_TRANSACTIONS: Final = frozenset({"sqlite", "postgresql"})
"""The vendors whose DB-API connection `_insert_committed` drives itself (the others go through `atomic()`)."""


def _insert_committed(model: Any, alias: str, rows: Sequence[dict[str, Any]]) -> bool:
    """`_insert` in a transaction of its own, committed, on the DB-API connection itself; False if not done.

    The writer thread owns its connection and is never inside `atomic()`, so what `atomic()` keeps track
    of (savepoints, on-commit callbacks, the autocommit switch both ways, thread-sharing checks: about a
    third of a one-row batch's CPU on SQLite) has nothing to do here: the batch is `BEGIN`, the INSERT,
    `COMMIT`, with Django's translation of the driver's errors. False (nothing done) for another vendor
    or a connection already in a transaction; the caller then uses `atomic()`.
    """
    connection = connections[alias]
    if connection.vendor not in _PLAIN_TRANSACTIONS or connection.in_atomic_block or not rows:
        return False
    connection.close_if_health_check_failed()  # CONN_HEALTH_CHECKS: what atomic() checks before it begins
    connection.ensure_connection()
    if not connection.get_autocommit():
        return False
    fields, sql = _insert_statement(model, connection)
    values = _values(fields, rows, connection)
    with connection.wrap_database_errors:
        cursor = connection.connection.cursor()
        try:
            if connection.vendor == "sqlite":
                mode = getattr(connection, "transaction_mode", None)  # OPTIONS["transaction_mode"], as atomic() begins
                cursor.execute(f"BEGIN {mode}" if mode else "BEGIN")
                cursor.executemany(sql.replace("%s", "?"), values)
                cursor.execute("COMMIT")
            elif (statement := _one_round_trip(cursor, sql, values)) is not None:
                cursor.execute(statement)
            else:
                cursor.execute("BEGIN")
                timeout = f"{_wait_milliseconds()}ms"
                cursor.execute(
                    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true)",
                    [timeout, timeout],
                )
                cursor.executemany(sql, values)
                cursor.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):  # nothing to roll back when BEGIN itself failed
                cursor.execute("ROLLBACK")
            raise
        finally:
            cursor.close()
    return True


def _one_round_trip(cursor: Any, sql: str, values: Sequence[Sequence[Any]]) -> str | None:
    """A PostgreSQL batch as one query string: `BEGIN`, the waits bounded for this transaction, one INSERT of
    every row, `COMMIT`; or None where the cursor binds values on the server (`server_side_binding`).

    Sent as one query, that is one round trip to the server instead of four (`BEGIN`, the bounds, the
    INSERT, `COMMIT`): each cost about 100 µs of the writer's CPU here, most of a one-row batch. The values
    are bound by the driver on the client (psycopg's `ClientCursor.mogrify`), as Django's default cursor
    binds every query it sends. PostgreSQL applies `statement_timeout` to each statement of the string
    (13 and later; Django supports 14 and later), so the bounds set first hold for the INSERT and COMMIT.
    """
    mogrify = getattr(cursor, "mogrify", None)
    if mogrify is None:
        return None
    head, placeholders = sql.rsplit(" VALUES ", 1)
    rows = [mogrify(placeholders, row) for row in values]
    if not all(isinstance(row, str) for row in rows):  # psycopg2's mogrify gives bytes
        return None
    bound = f"'{_wait_milliseconds()}ms'"
    return (
        f"BEGIN; SET LOCAL lock_timeout = {bound}; SET LOCAL statement_timeout = {bound}; "
        f"{head} VALUES {', '.join(rows)}; COMMIT"
    )


_statements: dict[tuple[Any, str], tuple[list[Any], str]] = {}


def _insert_statement(model: Any, connection: Any) -> tuple[list[Any], str]:
    key = (model, connection.vendor)
    if key not in _statements:
        fields = [field for field in model._meta.concrete_fields if field is not model._meta.auto_field]
        quote = connection.ops.quote_name
        columns = ", ".join(quote(field.column) for field in fields)
        placeholders = ", ".join(["%s"] * len(fields))
        _statements[key] = fields, f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({placeholders})"
    return _statements[key]


_bounded: tuple[Any, int] | None = None
"""The SQLite connection `_bound_the_wait_once` last set a busy timeout on, and the timeout."""


def _bound_the_wait_once(alias: str) -> None:
    """On SQLite: a busy timeout of `AUDIT_DB_TIMEOUT` seconds on the writer's connection (a per-connection pragma).

    It is set when the connection is new or the setting changed, not per batch.
    """
    global _bounded
    connection = connections[alias]
    if connection.vendor != "sqlite":
        return
    connection.ensure_connection()
    milliseconds = _wait_milliseconds()
    if _bounded is not None and _bounded[0] is connection.connection and _bounded[1] == milliseconds:
        return
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA busy_timeout = {milliseconds}")
    _bounded = (connection.connection, milliseconds)


def _wait_milliseconds() -> int:
    return max(1, int(float(mcp_settings.AUDIT_DB_TIMEOUT) * 1000))


def _bound_the_wait(alias: str) -> None:
    """On PostgreSQL: wait at most `AUDIT_DB_TIMEOUT` seconds for a lock in this transaction.

    SQLite's busy timeout belongs to the connection: `_bound_the_wait_once`.
    """
    connection = connections[alias]
    if connection.vendor == "postgresql":
        milliseconds = _wait_milliseconds()
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{milliseconds}ms"])
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{milliseconds}ms"])
