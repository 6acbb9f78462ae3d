"""A change saved in the admin of one worker process applies on another within a second (one shared database)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, serve_example
from tests.live.admin_support import AdminUser, open_session, ping_status, private_env, tool_names

pytestmark = pytest.mark.live

BOOK_TOOL = "about_dune"
DEADLINE_S = 1.0
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def two_workers(
    live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer]]:
    directory = tmp_path_factory.mktemp("two-workers")
    env = private_env(live_server_env, directory)
    with serve_example(env, directory) as first, serve_example(env, directory) as second:
        yield first, second


def seconds_until(server: LiveServer, visible: bool) -> float:
    """Poll `server` until the book tool is (in)visible; fail past the deadline. Returns the time it took."""
    started = time.monotonic()
    while (BOOK_TOOL in tool_names(server)) != visible:
        elapsed = time.monotonic() - started
        assert elapsed < DEADLINE_S, f"still {'hidden' if visible else 'listed'} after {elapsed:.2f}s"
    return time.monotonic() - started


def test_a_provider_switched_in_one_workers_admin_changes_the_other_worker_within_a_second(
    two_workers: tuple[LiveServer, LiveServer],
) -> None:
    first, second = two_workers
    admin = AdminUser(first)
    assert BOOK_TOOL in tool_names(second)  # the second worker has read the state and is warm

    admin.switch_provider("demo.books", enabled=False)
    off = seconds_until(second, visible=False)
    admin.switch_provider("demo.books", enabled=True)
    on = seconds_until(second, visible=True)

    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "propagation.txt").write_text(
        f"disable seen by the other worker after {off:.3f}s\nenable seen by the other worker after {on:.3f}s\n"
    )
    print(f"propagation to the other worker: off {off:.3f}s, on {on:.3f}s")


def test_a_session_revoked_in_one_workers_admin_is_answered_404_by_the_other_within_a_second(
    two_workers: tuple[LiveServer, LiveServer],
) -> None:
    first, second = two_workers
    session = open_session(second)
    assert ping_status(second, session) == 200  # the second worker now has the session in its cache

    AdminUser(first).revoke_session(session["Mcp-Session-Id"])
    started = time.monotonic()
    while (status := ping_status(second, session)) != 404:
        assert time.monotonic() - started < DEADLINE_S, f"still {status} after {time.monotonic() - started:.2f}s"
