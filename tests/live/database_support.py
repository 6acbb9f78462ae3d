"""The live server's database, read and written from the test process: SQLite in the live suite, PostgreSQL in
the production-shaped leg (tests/production/), whichever the server's environment names.

Queries use `?` placeholders and portable SQL (`CAST(column AS TEXT)` for a JSON column); the PostgreSQL
connection gets them as `%s`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

SQLITE_TIMEOUT_S = 20.0


class Database:
    """One connection to the server's database; every statement commits."""

    def __init__(self, connection: Any, placeholder: str) -> None:
        self.connection = connection
        self.placeholder = placeholder

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows `sql` selects."""
        return list(self.connection.execute(sql.replace("?", self.placeholder), tuple(params)).fetchall())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run `sql` (an update) and commit it."""
        self.connection.execute(sql.replace("?", self.placeholder), tuple(params))
        self.connection.commit()


@contextlib.contextmanager
def server_database(env: Mapping[str, str]) -> Iterator[Database]:
    """The database of a server started with `env`: `MCP_EXAMPLE_DATABASE_URL` (PostgreSQL) or `MCP_EXAMPLE_DB`."""
    if env.get("MCP_EXAMPLE_DATABASE_URL"):
        import psycopg  # the production-shaped leg only

        with psycopg.connect(env["MCP_EXAMPLE_DATABASE_URL"], autocommit=True) as pg:
            yield Database(pg, "%s")
        return
    with contextlib.closing(sqlite3.connect(env["MCP_EXAMPLE_DB"], timeout=SQLITE_TIMEOUT_S)) as connection:
        yield Database(connection, "?")
