"""Which database errors mean "unavailable now, retry later": locked past its timeout, read-only, down.

`run_sync` (`mcp_django.runtime.executor`) turns such an error, raised by any sync code it runs, into the
protocol's `ServiceUnavailable`, which every transport answers with the request's id (HTTP: 503 with
`Retry-After: MCP_DJANGO["RETRY_AFTER"]`). Errors that are bugs, not weather (a missing table, bad
SQL, an integrity error), stay what they are. Nothing is remembered between requests: the next request
tries the database again, so service comes back by itself when the database does.
"""

from __future__ import annotations

import logging
from typing import Final

from django.db import DatabaseError, InterfaceError, OperationalError

from mcp_django.protocol.errors import ServiceUnavailable

logger = logging.getLogger("mcp_django.runtime.unavailable")

SQLITE_MESSAGES: Final = (
    "database is locked",
    "database table is locked",
    "readonly database",
    "unable to open database",
    "disk i/o error",
    "database or disk is full",
)
"""What SQLite says (all as `OperationalError`, like a syntax error) when the file cannot be used now."""

SQLSTATE_PREFIXES: Final = ("08", "53", "57P", "25006", "55P03", "57014", "40001", "40P01")
"""PostgreSQL: connection exceptions, insufficient resources, operator intervention (shutdown,
starting up), read-only transaction, lock not available, statement timeout, serialization failure and
deadlock (both: retry)."""

MYSQL_CODES: Final = frozenset({1205, 1213, 1290, 1836, 2002, 2003, 2006, 2013})
"""MySQL: lock wait timeout, deadlock, read-only server (two codes), cannot connect, server gone away."""


def is_database_unavailable(exc: BaseException) -> bool:
    """True when `exc` says the database cannot be used now, rather than that the query is wrong."""
    if isinstance(exc, InterfaceError):
        return True  # the connection is closed or broken
    if not isinstance(exc, DatabaseError):
        return False
    cause = exc.__cause__ or exc  # Django's wrapper; the driver's error says what happened
    sqlstate = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if isinstance(sqlstate, str):
        return sqlstate.startswith(SQLSTATE_PREFIXES)
    if type(cause).__module__.startswith("psycopg"):
        return isinstance(exc, OperationalError)  # no SQLSTATE: the connection itself failed
    args = getattr(cause, "args", ())
    if args and isinstance(args[0], int):
        return args[0] in MYSQL_CODES
    message = str(cause).lower()
    return any(text in message for text in SQLITE_MESSAGES)


def database_unavailable(exc: BaseException) -> ServiceUnavailable:
    """The protocol error for `exc` (logged once here: the client sees no database text)."""
    logger.warning("Database unavailable, answering 503: %s: %s", type(exc).__name__, exc)
    return ServiceUnavailable()
