"""The audit trail under real faults, through the official client against the example project under daphne.

Each test serves its own copy of the demo database, with the audit settings it needs
(`tests/live/audit_settings.py`), and performs the fault for real: `kill -9` of the worker, an
exclusive SQLite lock held by another connection, a database file the server may not write, a
full spool. Waits are bounded by deadlines; nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from mcp_django.interceptors.audit import AuditUnavailable
from tests.conftest import LiveServer, serve_example
from tests.live.admin_support import AdminUser
from tests.live.test_official_client import client, text_of
from tests.live.words import unique_word

pytestmark = pytest.mark.live

WAIT_S = 30.0
DASHBOARD = "/admin/mcp_django/controlroom/"
# A short bounded wait and a quick replay, so a test does not sit out the defaults (5 s each).
FAULT_SETTINGS = {"AUDIT_DB_TIMEOUT": 0.25, "AUDIT_REPLAY_INTERVAL": 0.1}


@dataclass(frozen=True)
class Fault:
    """A daphne serving its own database and spool."""

    server: LiveServer
    database: Path
    spool: Path


def _bound_by_file_modes() -> None:
    """In the server's process (when the tests run as root): obey file modes, as any other user does.

    Drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER from the bounding set, so a file
    made read-only is read-only for daphne too.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@contextlib.contextmanager
def fault_server(
    live_server_env: dict[str, str],
    directory: Path,
    audit: dict[str, Any] | None = None,
    *,
    wal: bool = False,
    reuse: bool = False,
    lock_timeout: float | None = None,
) -> Iterator[Fault]:
    """The example project under daphne on a copy of the demo database (`reuse`: the one already in
    `directory`, with its spool), with `audit` in `MCP_DJANGO` (`lock_timeout`: SQLite's, in seconds)."""
    database, spool = directory / "db.sqlite3", directory / "spool"
    if not reuse:
        shutil.copyfile(live_server_env["MCP_EXAMPLE_DB"], database)
    if wal:  # readers go on while another connection holds the write lock, as in most SQLite deployments
        with contextlib.closing(sqlite3.connect(database)) as connection:
            connection.execute("PRAGMA journal_mode=WAL")
    env = {
        **live_server_env,
        "MCP_EXAMPLE_DB": str(database),
        "DJANGO_SETTINGS_MODULE": "tests.live.audit_settings",
        "MCP_TEST_AUDIT": json.dumps({"AUDIT_SPOOL_DIR": str(spool), **(audit or {})}),
        **({} if lock_timeout is None else {"MCP_TEST_SQLITE_TIMEOUT": str(lock_timeout)}),
    }
    preexec = _bound_by_file_modes if os.geteuid() == 0 else None
    with serve_example(env, directory, preexec_fn=preexec) as server:
        yield Fault(server, database, spool)


def markers(count: int) -> list[str]:
    """Unique search words of letters only: a run of digits could look like a phone number to the redaction."""
    return [unique_word(16) for _ in range(count)]


async def call(fault: Fault, queries: list[str]) -> None:
    """`search_books` once per query, all at once, each reply checked; a refusal raises `MCPError`."""
    try:
        async with client(fault.server, "2026-07-28") as session:
            calls = (session.call_tool("search_books", {"query": query}) for query in queries)
            results = await asyncio.gather(*calls)
    except BaseExceptionGroup as group:  # the client's task group wraps what a call raised
        matched: BaseException | None = group.split(MCPError)[0]
        while isinstance(matched, BaseExceptionGroup):
            matched = matched.exceptions[0]
        if matched is None:
            raise
        raise matched from None
    assert [text_of(result) for result in results] == [f"No book matches '{query}'." for query in queries]


def trail(database: Path | sqlite3.Connection, queries: list[str]) -> Counter[str]:
    """How many audit rows each of `queries` has in the database."""
    with contextlib.ExitStack() as stack:
        if isinstance(database, Path):
            database = stack.enter_context(contextlib.closing(sqlite3.connect(database, timeout=20)))
        rows = database.execute("SELECT arguments FROM mcp_django_toolcallrecord WHERE tool = 'search_books'")
        found = Counter(json.loads(arguments).get("query") for (arguments,) in rows)
    return Counter({query: found[query] for query in queries if found[query]})


def spooled(fault: Fault, queries: list[str]) -> Counter[str]:
    """How many rows each of `queries` has waiting in the spool files."""
    found: Counter[str] = Counter()
    for path in fault.spool.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            found[json.loads(line)["arguments"].get("query")] += 1
    return Counter({query: found[query] for query in queries if found[query]})


def eventually(condition: Callable[[], bool]) -> bool:
    """True once `condition` holds, polled until a deadline (the writer works in another process)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@contextlib.contextmanager
def exclusive_lock(database: Path) -> Iterator[sqlite3.Connection]:
    """Another connection holding SQLite's exclusive lock on `database` until the block ends."""
    connection = sqlite3.connect(database, timeout=20, isolation_level=None)
    try:
        connection.execute("BEGIN EXCLUSIVE")
        yield connection
    finally:
        connection.rollback()
        connection.close()


async def test_every_call_a_client_saw_succeed_is_in_the_trail_after_kill_9(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    one_by_one, together = markers(2), markers(6)
    with fault_server(live_server_env, tmp_path) as fault:
        for query in one_by_one:
            await call(fault, [query])
        await call(fault, together)
        fault.server.process.kill()  # SIGKILL, right after the last reply arrived
        fault.server.process.wait(timeout=10)
    assert trail(fault.database, one_by_one + together) == Counter(one_by_one + together)


async def test_rows_spooled_by_a_worker_killed_with_kill_9_are_replayed_once_by_the_next_one(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    during = markers(4)
    with fault_server(live_server_env, tmp_path, FAULT_SETTINGS, wal=True) as fault:
        with exclusive_lock(fault.database):
            await call(fault, during)
            fault.server.process.kill()
            fault.server.process.wait(timeout=10)
        assert spooled(fault, during) == Counter(during)
    with fault_server(live_server_env, tmp_path, FAULT_SETTINGS, reuse=True) as fault:  # no call: start-up replays
        assert eventually(lambda: trail(fault.database, during) == Counter(during)), fault.server.log_tail()
        assert eventually(lambda: not list(fault.spool.glob("*.jsonl")))
    assert trail(fault.database, during) == Counter(during)


async def test_calls_during_a_database_lock_succeed_and_their_rows_are_replayed_once(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    before, during = markers(1), markers(5)
    with fault_server(live_server_env, tmp_path, FAULT_SETTINGS, wal=True) as fault:
        await call(fault, before)
        with exclusive_lock(fault.database) as lock:
            await call(fault, during[:1])
            await call(fault, during[1:])
            assert spooled(fault, during) == Counter(during)
            assert trail(lock, before + during) == Counter(before)
        assert eventually(lambda: trail(fault.database, during) == Counter(during)), fault.server.log_tail()
        assert eventually(lambda: spooled(fault, during) == Counter())
        assert "Audit database unavailable (database is locked)" in fault.server.log_tail()
    assert trail(fault.database, before + during) == Counter(before + during)


async def test_calls_on_a_read_only_database_succeed_and_their_rows_are_replayed_once(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    during = markers(4)
    with fault_server(live_server_env, tmp_path, FAULT_SETTINGS) as fault:
        fault.database.chmod(0o444)
        try:
            await call(fault, during[:2])
            await call(fault, during[2:])
            assert spooled(fault, during) == Counter(during)
            assert trail(fault.database, during) == Counter()
        finally:
            fault.database.chmod(0o644)
        assert eventually(lambda: trail(fault.database, during) == Counter(during)), fault.server.log_tail()
        assert eventually(lambda: spooled(fault, during) == Counter())
        assert "attempt to write a readonly database" in fault.server.log_tail()
    assert trail(fault.database, during) == Counter(during)


async def test_a_full_spool_refuses_new_calls_until_the_database_is_back(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    admitted, refused = markers(1), markers(1)
    settings = {**FAULT_SETTINGS, "AUDIT_SPOOL_MAX_BYTES": 1, "AUDIT_WHEN_FULL": "refuse"}
    with fault_server(live_server_env, tmp_path, settings, wal=True) as fault:
        with exclusive_lock(fault.database):
            await call(fault, admitted)  # admitted while the spool was empty: its row is kept, past the bound
            with pytest.raises(MCPError) as raised:
                await call(fault, refused)
        assert (raised.value.code, raised.value.message) == (-32603, AuditUnavailable.default_message)
        assert eventually(lambda: trail(fault.database, admitted) == Counter(admitted)), fault.server.log_tail()
        after = markers(1)
        await _until_admitted(fault, after)
    assert trail(fault.database, admitted + refused + after) == Counter(admitted + after)


async def _until_admitted(fault: Fault, queries: list[str]) -> None:
    """Call until the server admits the call again (it does once the writer replayed the spool)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            await call(fault, queries)
            return
        except MCPError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_a_full_spool_with_drop_lets_calls_through_and_counts_the_lost_rows(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    dropped: list[str] = markers(2)
    settings = {**FAULT_SETTINGS, "AUDIT_SPOOL_MAX_BYTES": 1, "AUDIT_WHEN_FULL": "drop"}
    with fault_server(live_server_env, tmp_path, settings, wal=True) as fault:
        with exclusive_lock(fault.database):
            for query in dropped:
                await call(fault, [query])
        assert "is full: dropped 1 records (2 so far)" in fault.server.log_tail()
        # Until the writer tries the database again, rows are still dropped: call until one lands.
        after: list[str] = []
        while not after or not trail(fault.database, after[-1:]):
            assert len(after) < 100, fault.server.log_tail()
            after += markers(1)
            await call(fault, after[-1:])
        lost = dropped + after[:-1]
        dashboard = AdminUser(fault.server).get(DASHBOARD)
        assert f"Audit records dropped by this worker: {len(lost)}" in dashboard
    assert trail(fault.database, lost + after) == Counter(after[-1:])


LOCK_TIMEOUT_S = 2.0
"""How long the server's SQLite connections wait for a lock in the test below (the demo's: 20 s): the behaviour
is the same after any timeout, and each query that meets the lock waits it."""
LOCKED_WAIT_S = 120.0


async def test_without_wal_a_locked_sqlite_fails_calls_before_they_are_audited_so_the_spool_stays_empty(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    """SQLite's default journal: an exclusive lock blocks readers too. A call's own queries (its token's
    first) wait for the lock as long as the connection's timeout, then the call is answered 503 with
    Retry-After, before any tool or audit row: the spool's bound is never reached (docs/interceptors.md)."""
    query = markers(1)[0]
    settings = {**FAULT_SETTINGS, "AUDIT_SPOOL_MAX_BYTES": 1, "AUDIT_WHEN_FULL": "refuse"}
    body = {"name": "search_books", "arguments": {"query": query}}
    with fault_server(live_server_env, tmp_path, settings, lock_timeout=LOCK_TIMEOUT_S) as fault:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {fault.server.tokens['alice']}",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "search_books",
        }
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
        }
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**body, "_meta": meta}}
        with exclusive_lock(fault.database):
            async with httpx2.AsyncClient(timeout=LOCKED_WAIT_S) as http:
                answer = await http.post(fault.server.url("/mcp"), json=message, headers=headers)
            assert spooled(fault, [query]) == Counter()
        after = markers(1)
        await call(fault, after)

    assert answer.status_code == 503, answer.text
    assert "Retry-After" in answer.headers, answer.headers
    assert answer.json()["error"]["data"] == {"reason": "database_unavailable"}, answer.text
    assert trail(fault.database, [query, *after]) == Counter(after)
