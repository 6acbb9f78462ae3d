"""K-5/K-6 with real task workers (issue 36): one caller's backlog of long tasks cannot starve another caller.

Three `manage.py db_worker` processes beside daphne, the package's default `TASK_MAX_RUNNING_PER_USER` (2):
alice starts six 10-minute reports, then bob a report of no seconds. Two of alice's run, four wait their
turn outside the workers' queue, and a worker is free for bob's, which completes in seconds. Before, the
three workers took alice's first three and bob's waited ten minutes behind them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_django.tasks.conf import tasks_settings
from tests.conftest import LiveServer, fresh_database, serve_example, task_workers
from tests.tasks.test_worker_process import call

pytestmark = pytest.mark.live

WORKERS = 3
BACKLOG = 6
WAIT_S = 60.0


@pytest.fixture(scope="module")
def server(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    database = fresh_database(seeded_database, tmp_path_factory.mktemp("fair-db"))
    env = {**os.environ, "MCP_EXAMPLE_DB": str(database), "PYTHONUNBUFFERED": "1"}
    logs = tmp_path_factory.mktemp("fair-log")
    with task_workers(env, logs, count=WORKERS), serve_example(env, logs) as live:
        yield live


def start_report(server: LiveServer, user: str, seconds: int) -> str:
    answer = call(
        server,
        "tools/call",
        {"name": "catalogue_report", "arguments": {"seconds": seconds}},
        name="catalogue_report",
        token=server.tokens[user],
    )
    assert answer["result"]["resultType"] == "task", answer
    return str(answer["result"]["taskId"])


def test_k5_one_users_backlog_of_long_tasks_leaves_a_worker_for_another_user(server: LiveServer) -> None:
    assert tasks_settings.TASK_MAX_RUNNING_PER_USER < WORKERS  # the default this test holds
    backlog = [start_report(server, "alice", 600) for _ in range(BACKLOG)]
    bobs = start_report(server, "bob", 0)

    deadline = time.monotonic() + WAIT_S
    status = ""
    while time.monotonic() < deadline:
        got = call(server, "tasks/get", {"taskId": bobs}, name=bobs, token=server.tokens["bob"])
        status = got.get("result", {}).get("status") or str(got)
        if status == "completed":
            break
        time.sleep(0.2)  # the task runs in another process: poll its row, bounded by the deadline
    answers = [call(server, "tasks/get", {"taskId": task}, name=task, token=server.tokens["alice"]) for task in backlog]
    statuses = [answer.get("result", answer).get("status") for answer in answers]
    for task in backlog:  # the workers stop alice's reports within a poll
        call(server, "tasks/cancel", {"taskId": task}, name=task, token=server.tokens["alice"])

    assert status == "completed", server.log_tail()
    assert statuses == ["working"] * BACKLOG, answers
