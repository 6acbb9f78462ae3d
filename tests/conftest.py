"""Shared fixtures: the example project served by daphne on a free loopback port.

The server is started once per test session, on a fresh temporary SQLite database (migrated and seeded
with the demo data), and stopped when the session ends. Only the live and conformance tests ask for it,
so the in-memory tests never pay for it.
"""

from __future__ import annotations

import contextlib
import gc
import http.client
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from django.core.signals import request_started

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 60.0
SHUTDOWN_TIMEOUT_S = 10.0
TASK_WORKERS = 3
"""Task workers beside the live server: the tasks scenarios keep a few tasks running or parked at once."""
TASK_WORKER_OPTIONS = ("--interval", "0.2", "--no-startup-delay", "--no-reload")
"""`manage.py db_worker`'s options in the live tiers: a queued task is picked up within 0.2 s, and no autoreloader
(under the live servers' `DEBUG` it would run each worker in a child process that stats every loaded module's
file each second: 4% of a core per worker, 18 workers at once in a live run)."""


@dataclass(frozen=True)
class LiveServer:
    """The example project running under daphne: where it listens, where it logs, and the demo users' tokens."""

    base_url: str
    log_path: Path
    process: subprocess.Popen[bytes]
    tokens: dict[str, str] = field(default_factory=dict)

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server (``"/mcp"`` -> ``http://127.0.0.1:<port>/mcp``)."""
        return self.base_url + "/" + path.lstrip("/")

    def log_tail(self, lines: int = 60) -> str:
        """The last lines daphne and Django wrote, for failure messages."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_http(host: str, port: int, timeout: float, path: str = "/admin/login/") -> bool:
    """True once the server completes an HTTP exchange (any status) within ``timeout`` seconds."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("GET", path)
        connection.getresponse().read()
    except OSError:
        return False
    finally:
        connection.close()
    return True


def _wait_until_serving(process: subprocess.Popen[bytes], host: str, port: int, log_path: Path) -> None:
    _wait_until_answering(process, host, port, log_path)


def _wait_until_answering(
    process: subprocess.Popen[bytes], host: str, port: int, log_path: Path, path: str = "/admin/login/"
) -> None:
    """Wait until the server `process` answers HTTP on `path`; fail with its log when it dies or never does."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if _answers_http(host, port, timeout=2.0, path=path):
            return
        try:
            # Doubles as the pause between attempts and as the check that daphne has not died.
            returncode = process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"the server exited with {returncode} before serving:\n{_read(log_path)}")
    process.kill()
    raise RuntimeError(f"the server did not answer within {STARTUP_TIMEOUT_S:.0f}s:\n{_read(log_path)}")


DEMO_TOKENS_SQL = (
    "SELECT auth_user.username, authtoken_token.key FROM authtoken_token "
    "JOIN auth_user ON auth_user.id = authtoken_token.user_id"
)


def _demo_tokens(env: dict[str, str]) -> dict[str, str]:
    """username -> API token of the users `seed_demo` created (alice, bob, carol), from the server's database."""
    if env.get("MCP_EXAMPLE_DATABASE_URL"):
        import psycopg  # the production-shaped leg only (tests/production/)

        with psycopg.connect(env["MCP_EXAMPLE_DATABASE_URL"]) as pg:
            rows = pg.execute(DEMO_TOKENS_SQL).fetchall()
    else:
        with sqlite3.connect(env["MCP_EXAMPLE_DB"]) as connection:
            rows = connection.execute(DEMO_TOKENS_SQL).fetchall()
    return {str(username): str(key) for username, key in rows}


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else "(no output)"


def _manage(*args: str, env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")


def _database_env(database: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "example_project.settings"),
        "MCP_EXAMPLE_DB": str(database),
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture
def django_requests() -> Iterator[list[Any]]:
    """The `request_started` signals Django sends while the test runs (one per request it serves):
    the fast-path tests check that an MCP request sends none."""
    started: list[Any] = []

    def receiver(**kwargs: Any) -> None:
        started.append(kwargs)

    request_started.connect(receiver)
    try:
        yield started
    finally:
        request_started.disconnect(receiver)


@pytest.fixture(scope="session")
def seeded_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated and seeded SQLite database that no server uses: copy it for a database of one's own.

    Migrating and seeding takes Django's start and a hundred migrations; a copy takes a file's."""
    database = tmp_path_factory.mktemp("seeded-db") / "db.sqlite3"
    env = _database_env(database)
    _manage("migrate", "--noinput", env=env)
    _manage("seed_demo", env=env)
    return database


def fresh_database(seeded_database: Path, directory: Path) -> Path:
    """A copy of `seeded_database` in `directory`: the demo data and nothing any test did."""
    database = directory / "db.sqlite3"
    shutil.copyfile(seeded_database, database)
    return database


@pytest.fixture(scope="session")
def live_server_env(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment the live server runs in: its own migrated and seeded SQLite database."""
    return _database_env(fresh_database(seeded_database, tmp_path_factory.mktemp("live-db")))


@contextlib.contextmanager
def serve_example(
    env: dict[str, str],
    log_dir: Path,
    *,
    preexec_fn: Callable[[], None] | None = None,
    server: str = "daphne",
    wrapper: Sequence[str] = (),
) -> Iterator[LiveServer]:
    """Serve the example project with daphne (or `server="uvicorn"`, or `"gunicorn"`: WSGI) on a free loopback port
    until the block ends.

    Several can run at once on one database: that is how the multi-worker tests stand up their workers.
    `preexec_fn` runs in the child before the server starts (the fault tests drop privileges with it);
    `wrapper` is a command the server runs under (`opentelemetry-instrument`, for the telemetry tests).
    """
    host, port = "127.0.0.1", _free_port()
    env = {**env, "MCP_EXAMPLE_BASE_URL": f"http://{host}:{port}"}  # where the demo's gateways find it
    log_path = log_dir / f"{server}-{port}.log"
    command = {
        "daphne": ["-m", "daphne", "-b", host, "-p", str(port)],
        # A graceful-shutdown bound, as docs/deployment.md advises: without it uvicorn waits for every open
        # stream, such as one a demo gateway of the same worker holds on it, until it is killed.
        "uvicorn": [
            *("-m", "uvicorn", "--host", host, "--port", str(port), "--lifespan", "off", "--no-access-log"),
            *("--timeout-graceful-shutdown", "2"),
        ],
        # daphne with mcp_django's request limits applied as requests arrive (docs/deployment.md)
        "guarded-daphne": ["-m", "mcp_django.servers.daphne", "-b", host, "-p", str(port)],
        # WSGI: one sync worker, the deployment most Django sites run (the WSGI fast path, docs/fast-path.md)
        "gunicorn": [
            *("-m", "gunicorn", "--bind", f"{host}:{port}", "--worker-class", "sync", "--workers", "1"),
            *("--graceful-timeout", "2"),
        ],
    }[server]
    application = "example_project.wsgi:application" if server == "gunicorn" else "example_project.asgi:application"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*wrapper, sys.executable, *command, application],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=preexec_fn,
        )
    try:
        _wait_until_serving(process, host, port, log_path)
        tokens = _demo_tokens(env)
        yield LiveServer(base_url=f"http://{host}:{port}", log_path=log_path, process=process, tokens=tokens)
    finally:
        stop_process(process)


@contextlib.contextmanager
def task_workers(
    env: dict[str, str], log_dir: Path, count: int = TASK_WORKERS
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Run `count` task workers (`manage.py db_worker`, docs/tasks.md) on the example project's database until
    the block ends: they run the tools called as tasks."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for number in range(count):
            with (log_dir / f"db-worker-{number}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "manage.py", "db_worker", *TASK_WORKER_OPTIONS],
                        cwd=ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        yield processes
    finally:
        stop_process(*processes)


def stop_process(*processes: subprocess.Popen[bytes]) -> None:
    """Terminate child processes, killing each that has not ended within `SHUTDOWN_TIMEOUT_S`.

    All are told at once, so their shutdowns overlap instead of adding up."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=SHUTDOWN_TIMEOUT_S)


@pytest.fixture(scope="session")
def example_server(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The example project served by ``daphne -b 127.0.0.1 -p <free port> example_project.asgi:application``,
    with its task workers."""
    log_dir = tmp_path_factory.mktemp("live-log")
    with task_workers(live_server_env, log_dir), serve_example(live_server_env, log_dir) as server:
        yield server


# In-memory tests that `make quick` leaves to `make test`: each spawns processes or runs hundreds of generated
# cases (tests/README.md, "Markers").
SLOW = (
    "tests/fuzz/test_fuzz_",
    "tests/test_stdio.py",
    "tests/catalogues/test_stdio.py",
    "tests/catalogues/test_benchmark.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests under `SLOW` as `slow`."""
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The in-process tests' SQLite database is a file in WAL mode, never SQLite's shared-cache memory database.

    The package runs database work on threads of its own (the executor, the audit writer), so tests read
    while another thread writes. In a shared-cache memory database a lock held by another connection is an
    error at once ("database table is locked"), which no busy timeout waits out; in a WAL file a reader never
    waits for the writer and a second writer waits for the lock (the settings' `timeout`). Durability is not
    wanted: `synchronous=OFF` keeps commits as cheap as in memory.
    """
    from django.conf import settings

    for alias, database in settings.DATABASES.items():
        if database["ENGINE"] != "django.db.backends.sqlite3":
            continue
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / f"test-{alias}.sqlite3")
        options = database.setdefault("OPTIONS", {})
        options.setdefault("timeout", 20)
        options["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF"


@pytest.fixture(scope="session")
def audit_spool_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The audit spool of the in-process tests: this test session's own, never another run's."""
    return tmp_path_factory.mktemp("audit-spool")


@pytest.fixture(scope="session")
def refusing_url() -> Iterator[str]:
    """A loopback URL that refuses every connection, for the whole session: its port is bound and never
    listened on, so no other program on this machine can answer there (a fixed port such as 8000 or 9 may
    be anyone's)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture(scope="session", autouse=True)
def _without_the_demo_interceptors(audit_spool_dir: Path, refusing_url: str) -> Iterator[None]:
    """In-process tests run without the example project's interceptors (its audit trail would write rows
    behind every test's back); tests of interceptors configure their own. The live server keeps them.

    For the whole session, so the test database is migrated (and its admin rows synced) with the code the
    tests run."""
    from django.conf import settings
    from django.test import override_settings

    # The demo's gateways and its interceptor server are the project itself where `make demo` serves it
    # (MCP_EXAMPLE_BASE_URL): in process nothing is served, and a URL that refuses keeps them from reaching
    # whatever else this machine serves there, whatever the environment says.
    servers = cast(dict[str, Any], settings.MCP_DJANGO.get("SERVERS", {}))
    closed = {name: {"URL": f"{refusing_url}/mcp"} for name in servers}
    overrides = {"INTERCEPTORS": [], "AUDIT_SPOOL_DIR": str(audit_spool_dir), "SERVERS": closed}
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides}):
        yield


@pytest.fixture(scope="session", autouse=True)
def _quick_password_hashing() -> Iterator[None]:
    """In-process tests hash passwords and OAuth client secrets with a fast hasher: the default one is slow on
    purpose (0.3 s a password here), and what the tests check is who gets in, not the hash's cost. The live
    servers keep the project's hashers."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _broken_toolsets_forgotten() -> Iterator[None]:
    """The checks keep every toolset with a problem alive (`mcp_django.toolsets.base._failed`); after a test
    they are kept no longer (and collected: a toolset and its tools hold each other), so the next test's
    checks report its own toolsets only."""
    yield
    from mcp_django.toolsets import base

    if base._failed:
        base._failed.clear()
        gc.collect()


@pytest.fixture(autouse=True)
def _fresh_auth_cache() -> None:
    """Every test starts without cached credentials or scopes: they outlive a test's rolled-back rows, and the
    next test's users may get the same ids (docs/authentication.md, "Tests")."""
    from mcp_django.endpoints.auth_cache import auth_cache

    auth_cache.clear()
