"""A change saved in one process applies on the other worker processes within a second (one shared database).

The admin's changes (providers, sessions), and the changes that decide who a credential is and how
far a user reaches (tokens, group memberships, group scopes), which each worker caches in memory.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, LiveServer, serve_example
from tests.live.admin_support import AdminUser, open_session, ping_status, private_env, tool_names

pytestmark = pytest.mark.live

BOOK_TOOL = "about_dune"
DEADLINE_S = 1.0
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def workers_env(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the two workers: a private copy of the demo database."""
    return private_env(live_server_env, tmp_path_factory.mktemp("two-workers-db"))


@pytest.fixture(scope="module")
def two_workers(
    workers_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer]]:
    directory = tmp_path_factory.mktemp("two-workers")
    with serve_example(workers_env, directory) as first, serve_example(workers_env, directory) as second:
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


# -- cached credentials and scopes ---------------------------------------------------------------------


def change_in_a_third_process(env: dict[str, str], code: str) -> None:
    """Run ORM code in `manage.py shell` on the workers' database: a change neither worker made."""
    completed = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def listed_or_status(server: LiveServer, user: str) -> set[str] | int:
    """The tools `user` is shown, or the HTTP status that refused the request."""
    try:
        return tool_names(server, user)
    except urllib.error.HTTPError as error:
        return int(error.code)


def until_both_see(workers: tuple[LiveServer, LiveServer], user: str, expected: set[str] | int) -> None:
    started = time.monotonic()
    for server in workers:
        while (seen := listed_or_status(server, user)) != expected:
            elapsed = time.monotonic() - started
            assert elapsed < DEADLINE_S, f"{server.base_url} still answers {seen!r} after {elapsed:.2f}s"


def test_a_group_scope_changed_elsewhere_reaches_both_workers_cached_scopes_within_a_second(
    two_workers: tuple[LiveServer, LiveServer], workers_env: dict[str, str]
) -> None:
    user_tools = tool_names(two_workers[0], "alice")
    system_tools = [tool_names(server, "carol") for server in two_workers]  # both workers cache carol now
    assert all(tools > user_tools for tools in system_tools)

    change_in_a_third_process(
        workers_env, "from mcp_django.models import GroupScope; g = GroupScope.objects.get(); g.scope = 0; g.save()"
    )
    until_both_see(two_workers, "carol", user_tools)

    change_in_a_third_process(
        workers_env, "from mcp_django.models import GroupScope; g = GroupScope.objects.get(); g.scope = 2; g.save()"
    )
    until_both_see(two_workers, "carol", system_tools[0])


def test_a_user_removed_from_a_group_elsewhere_loses_the_scope_on_both_workers_within_a_second(
    two_workers: tuple[LiveServer, LiveServer], workers_env: dict[str, str]
) -> None:
    user_tools = tool_names(two_workers[0], "alice")
    team_tools = [tool_names(server, "bob") for server in two_workers]
    assert all(tools > user_tools for tools in team_tools)

    change_in_a_third_process(
        workers_env,
        "from django.contrib.auth.models import User; User.objects.get(username='bob').groups.clear()",
    )
    until_both_see(two_workers, "bob", user_tools)


def test_a_token_deleted_elsewhere_is_refused_by_both_workers_within_a_second(
    two_workers: tuple[LiveServer, LiveServer], workers_env: dict[str, str]
) -> None:
    assert all(tool_names(server, "alice") for server in two_workers)

    change_in_a_third_process(
        workers_env,
        "from rest_framework.authtoken.models import Token; Token.objects.filter(user__username='alice').delete()",
    )
    until_both_see(two_workers, "alice", 401)
