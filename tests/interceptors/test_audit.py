"""The audit writer in process: a reply waits for its row, concurrent rows share commits, and the spool file.

The faults themselves (kill -9, a locked or read-only database, a full spool) are performed against
a real daphne in `tests/live/test_audit_faults.py`.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mcp_django.endpoints import Endpoint
from mcp_django.interceptors.audit import audit_status
from mcp_django.interceptors.spool import Spool, dump_row, load_rows
from mcp_django.models import ToolCallRecord
from mcp_django.testing import MCPTestClient
from tests.interceptors.tools import registry

AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"


def audited() -> MCPTestClient:
    endpoint = Endpoint("audited", registry=registry, name="audited", allow_anonymous=True, interceptors=[AUDIT])
    return MCPTestClient(endpoint, era="stateless")


def _row(trace_id: str) -> dict[str, object]:
    return {"tool": "echo", "outcome": "ok", "duration_ms": 0.0, "trace_id": trace_id, "created": datetime.now(UTC)}


@pytest.mark.django_db(transaction=True)
async def test_a_call_returns_only_once_its_row_is_committed() -> None:
    await audited().call_tool("echo", {"text": "first"})
    # No flush: the reply was released after the commit.
    assert [record.arguments async for record in ToolCallRecord.objects.all()] == [{"text": "first"}]


@pytest.mark.django_db(transaction=True)
async def test_concurrent_calls_share_commits_and_every_row_is_stored_once() -> None:
    mcp, before = audited(), audit_status()
    texts = [f"call {n}" for n in range(40)]
    await asyncio.gather(*(mcp.call_tool("echo", {"text": text}) for text in texts))
    after = audit_status()
    stored = sorted([record.arguments["text"] async for record in ToolCallRecord.objects.all()])
    assert stored == sorted(texts)
    assert after.committed - before.committed == 40
    assert after.commits - before.commits < 40  # rows waiting together went in one transaction


@pytest.mark.django_db(transaction=True)
async def test_every_row_has_a_trace_id_of_its_own() -> None:
    mcp = audited()
    await asyncio.gather(*(mcp.call_tool("echo", {"text": str(n)}) for n in range(5)))
    trace_ids = [record.trace_id async for record in ToolCallRecord.objects.all()]
    assert len(set(trace_ids)) == 5
    assert all(trace_ids)


def test_a_spool_line_round_trips_a_row_and_a_torn_last_line_is_skipped() -> None:
    from datetime import UTC, datetime

    row = {"tool": "echo", "arguments": {"text": "é"}, "created": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)}
    data = dump_row(row) + dump_row({**row, "tool": "second"})[:-9]
    assert load_rows(data) == [row]


def test_a_spool_file_is_replayed_by_another_process_only_once_its_owner_let_go(tmp_path: Path) -> None:
    owner, other = Spool(tmp_path), Spool(tmp_path)
    owner.append([dump_row({"trace_id": "a"})])
    with other.orphans() as orphans:
        assert orphans == []  # the owner still holds its file
    owner.close()
    with other.orphans() as orphans:
        assert orphans == [(owner_path := next(tmp_path.glob("*.jsonl")), [{"trace_id": "a"}])]
    assert not owner_path.exists()


def test_an_orphan_stays_when_its_replay_fails(tmp_path: Path) -> None:
    path = tmp_path / "audit-1-dead.jsonl"
    path.write_bytes(dump_row({"trace_id": "a"}))
    seen = []

    def replay_fails() -> None:
        with Spool(tmp_path).orphans() as orphans:
            seen.extend(orphans)
            raise RuntimeError("the database went away again")

    with pytest.raises(RuntimeError):
        replay_fails()
    assert len(seen) == 1
    assert load_rows(path.read_bytes()) == [{"trace_id": "a"}]
    fd = os.open(path, os.O_RDONLY)  # and nobody holds it any more
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_clearing_the_own_file_empties_it_and_keeps_it_held(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append([dump_row({"trace_id": "a"}), dump_row({"trace_id": "b"})])
    assert [row["trace_id"] for row in spool.read_own()] == ["a", "b"]
    spool.clear_own()
    assert (spool.size, spool.read_own()) == (0, [])
    with Spool(tmp_path).orphans() as orphans:
        assert orphans == []


@pytest.mark.django_db(transaction=True)
async def test_a_row_is_stored_with_every_column_as_the_model_would_store_it() -> None:
    from django.contrib.auth import get_user_model

    from mcp_django.interceptors.audit import audit_writer

    user = await get_user_model().objects.acreate(username="auditor")
    created = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    row = {
        "user_id": user.pk,
        "endpoint": "audited",
        "tool": "echo",
        "arguments": {"text": "é ✓", "nested": [1, None, {"deep": True}]},
        "outcome": "ok",
        "duration_ms": 1.25,
        "trace_id": "t-columns",
        "created": created,
    }  # no "origin": the column's default
    assert await audit_writer().submit_async(row) == "committed"
    record = await ToolCallRecord.objects.aget(trace_id="t-columns")
    assert (record.user_id, record.endpoint, record.tool, record.outcome) == (user.pk, "audited", "echo", "ok")
    assert record.arguments == row["arguments"]
    assert (record.duration_ms, record.origin, record.created) == (1.25, "agent", created)


@pytest.mark.django_db
def test_the_values_of_a_batch_are_what_get_db_prep_save_gives_for_every_column() -> None:
    from django.db import connection

    from mcp_django.interceptors.audit_store import _insert_statement, _values

    fields, _ = _insert_statement(ToolCallRecord, connection)
    base = {"endpoint": "e", "tool": "t", "arguments": {"a": [1, "é"]}, "outcome": "ok", "duration_ms": 0.5}
    rows = [
        {**base, "user_id": 7, "trace_id": "a", "origin": "app", "created": datetime(2026, 1, 2, tzinfo=UTC)},
        {**base, "user_id": None, "trace_id": "b", "created": datetime.now(UTC)},  # no origin: the default
        {**base, "outcome": ToolCallRecord.Outcome.ERROR, "duration_ms": 3, "trace_id": "c", "created": None},
    ]
    expected = [
        [field.get_db_prep_save(row.get(field.attname, field.get_default()), connection) for field in fields]
        for row in rows
    ]
    assert _values(fields, rows, connection) == expected
    assert [type(value) for row in _values(fields, rows, connection) for value in row] == [
        type(value) for row in expected for value in row
    ]


@pytest.mark.django_db(transaction=True)
async def test_a_batch_the_database_refuses_at_commit_keeps_every_row_and_leaves_no_transaction_open() -> None:
    from django.db import connection

    from mcp_django.interceptors.audit import audit_writer
    from mcp_django.interceptors.audit_store import write_rows

    # A user that does not exist: the foreign key fails when the batch's own COMMIT checks it.
    rows = [{**_row("t-kept"), "user_id": 10**9}, _row("t-kept-too")]
    assert [await audit_writer().submit_async(row) for row in rows] == ["committed", "committed"]
    stored = {trace: user async for trace, user in ToolCallRecord.objects.values_list("trace_id", "user_id")}
    assert stored == {"t-kept": None, "t-kept-too": None}

    def outside_a_transaction() -> tuple[bool, bool]:
        write_rows([_row("t-after")], dedupe=False)
        return connection.get_autocommit(), connection.connection.in_transaction

    assert await asyncio.to_thread(outside_a_transaction) == (True, False)


@pytest.mark.django_db(transaction=True)
async def test_a_cancelled_caller_leaves_its_row_stored_and_the_others_of_its_batch_answered() -> None:
    from mcp_django.interceptors.audit import audit_writer, flush_audit_log

    writer = audit_writer()
    gone = asyncio.ensure_future(writer.submit_async(_row("t-gone")))
    kept = [writer.submit_async(_row(f"t-kept-{n}")) for n in range(3)]
    gone.cancel()
    assert await asyncio.gather(*kept) == ["committed"] * 3
    assert await asyncio.to_thread(flush_audit_log)
    stored = {record.trace_id async for record in ToolCallRecord.objects.all()}
    assert stored == {"t-gone", "t-kept-0", "t-kept-1", "t-kept-2"}


@pytest.mark.django_db(transaction=True)
def test_rows_waited_on_from_two_event_loops_and_a_thread_are_each_answered() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from mcp_django.interceptors.audit import audit_writer

    async def on_a_loop(prefix: str) -> list[str]:
        return list(await asyncio.gather(*(audit_writer().submit_async(_row(f"{prefix}{n}")) for n in range(5))))

    with ThreadPoolExecutor(2) as pool:
        loops = [pool.submit(asyncio.run, on_a_loop(prefix)) for prefix in ("a", "b")]
        plain = audit_writer().submit(_row("c0"))
        assert [loop.result(timeout=10) for loop in loops] == [["committed"] * 5] * 2
    assert plain.result(timeout=10) == "committed"
    assert ToolCallRecord.objects.count() == 11


@pytest.mark.django_db(transaction=True)
def test_the_busy_timeout_is_set_again_on_a_new_writer_connection(settings: object) -> None:
    from django.db import connection

    from mcp_django.interceptors import audit_store

    if connection.vendor != "sqlite":
        pytest.skip("a SQLite pragma")

    def busy_timeout() -> int:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout")
            return int(cursor.fetchone()[0])

    row = {"tool": "echo", "outcome": "ok", "duration_ms": 0.0, "trace_id": "t", "created": datetime.now(UTC)}
    settings.MCP_DJANGO = {"AUDIT_DB_TIMEOUT": 1.5}  # type: ignore[attr-defined]
    audit_store.write_rows([row], dedupe=False)
    assert busy_timeout() == 1500
    connection.close()
    audit_store.write_rows([{**row, "trace_id": "u"}], dedupe=False)
    assert busy_timeout() == 1500  # a fresh connection, set again
    settings.MCP_DJANGO = {"AUDIT_DB_TIMEOUT": 2.5}  # type: ignore[attr-defined]
    audit_store.write_rows([{**row, "trace_id": "v"}], dedupe=False)
    assert busy_timeout() == 2500


@pytest.mark.django_db(transaction=True)
async def test_the_rows_a_loop_submits_in_one_pass_reach_the_writer_together() -> None:
    from mcp_django.interceptors.audit import audit_writer

    writer, before = audit_writer(), audit_status()
    waiting = [writer.submit_async(_row(f"t-{n}")) for n in range(30)]  # one pass: no await in between
    assert await asyncio.gather(*waiting) == ["committed"] * 30
    after = audit_status()
    assert (after.commits - before.commits, after.committed - before.committed) == (1, 30)


@pytest.mark.django_db(transaction=True)
async def test_a_hand_over_larger_than_a_batch_is_committed_in_batches_and_every_row_answered() -> None:
    from mcp_django.interceptors.audit import AuditWriter

    writer = AuditWriter(batch_size=3)
    waiting = [writer.submit_async(_row(f"t-{n}")) for n in range(7)]
    assert await asyncio.gather(*waiting) == ["committed"] * 7
    assert (writer.status().commits, writer.status().committed) == (3, 7)
    assert sorted([record.trace_id async for record in ToolCallRecord.objects.all()]) == [f"t-{n}" for n in range(7)]
