"""The audit writer in process: a reply waits for its row, concurrent rows share commits, and the spool file.

The faults themselves (kill -9, a locked or read-only database, a full spool) are performed against
a real daphne in `tests/live/test_audit_faults.py`.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
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
