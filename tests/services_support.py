"""Throwaway servers the multi-worker tests run for real: Redis, a PostgreSQL cluster, an HAProxy round-robin.

Each comes from its Debian package (the Makefile's DEBIAN_PACKAGES installs them), listens on a free
loopback port, keeps its files in a temporary directory and is stopped when its block ends. No system
service or cluster is touched. Waits are bounded.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def _free_port() -> int:
    """A loopback port free now (this module imports only the standard library: `make bench` uses it too)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServiceUnavailable(RuntimeError):
    """A service's binary is missing or it did not come up; the message says which and what to run."""


def _wait_for(ready: Callable[[], bool], process: subprocess.Popen[bytes], what: str, log: Path | None) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if ready():
            return
        try:
            code = process.wait(timeout=0.05)  # the pause between attempts, and the check that it is alive
        except subprocess.TimeoutExpired:
            continue
        raise ServiceUnavailable(f"{what} exited with {code} at start-up:\n{_tail(log)}")
    raise ServiceUnavailable(f"{what} did not answer within {START_TIMEOUT_S:.0f}s:\n{_tail(log)}")


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return "(no log)"
    return "\n".join(log.read_text(errors="replace").splitlines()[-40:])


def _stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


# -- Redis ----------------------------------------------------------------------------------------------


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A Redis server without persistence on a free loopback port; yields its URL (database 0)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServiceUnavailable("redis-server is not installed: run `make test`, which installs it")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: _redis_answers(port), process, "redis-server", None)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(process)


# -- PostgreSQL -----------------------------------------------------------------------------------------


def postgres_bin() -> Path:
    """The directory of the newest installed PostgreSQL server's binaries (Debian keeps them off PATH)."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    if not found:
        raise ServiceUnavailable("PostgreSQL is not installed: run `make test`, which installs it")
    return Path(found[-1]).parent


def _as_user(name: str) -> Callable[[], None]:
    entry = pwd.getpwnam(name)

    def switch() -> None:
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)

    return switch


@dataclass(frozen=True)
class PostgresCluster:
    """A running throwaway cluster: trust authentication for `user` over TCP on the loopback interface."""

    port: int
    user: str
    log: Path

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str) -> None:
        """Run one statement outside a transaction (CREATE DATABASE ...) in the `postgres` database."""
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(sql.encode())

    def copy(self, template: str, name: str) -> str:
        """A new database `name` copied from `template` (which nobody may be connected to); its URL."""
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return self.url(name)


def _postgres_answers(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=1):
            return True
    except psycopg.OperationalError:
        return False


@contextlib.contextmanager
def postgres_cluster(user: str = "mcp") -> Iterator[PostgresCluster]:
    """`initdb` a cluster in a temporary directory and run it on a free port until the block ends.

    PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` system user the Debian
    package creates (or `nobody`), in a directory of its own under the system's temporary directory.
    Durability is off (fsync, synchronous_commit): the cluster lives as long as the tests.
    """
    binaries = postgres_bin()
    owner = None
    if os.geteuid() == 0:
        owner = "postgres" if _user_exists("postgres") else "nobody"
    directory = Path(tempfile.mkdtemp(prefix="mcp-django-pg-"))
    data, log = directory / "data", directory / "postgres.log"
    preexec = None
    if owner is not None:
        entry = pwd.getpwnam(owner)
        os.chown(directory, entry.pw_uid, entry.pw_gid)
        preexec = _as_user(owner)
    process: subprocess.Popen[bytes] | None = None
    try:
        initdb = subprocess.run(
            [str(binaries / "initdb"), "-D", str(data), "-U", user, "--auth=trust", "-E", "UTF8", "--locale=C"],
            capture_output=True,
            preexec_fn=preexec,
            check=False,
            timeout=120,
        )
        if initdb.returncode != 0:
            raise ServiceUnavailable(f"initdb failed:\n{initdb.stdout.decode()}\n{initdb.stderr.decode()}")
        port = _free_port()
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(port),
            "unix_socket_directories": "",
            "max_connections": "300",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
        }
        options = [item for key, value in settings.items() for item in ("-c", f"{key}={value}")]
        with open(log, "wb") as output:
            process = subprocess.Popen(
                [str(binaries / "postgres"), "-D", str(data), *options],
                stdout=output,
                stderr=subprocess.STDOUT,
                preexec_fn=preexec,
            )
        cluster = PostgresCluster(port=port, user=user, log=log)
        _wait_for(lambda: _postgres_answers(cluster.url("postgres")), process, "postgres", log)
        yield cluster
    finally:
        if process is not None:
            _stop(process, signal.SIGINT)  # "fast" shutdown: roll back open transactions, close connections
        shutil.rmtree(directory, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


# -- HAProxy --------------------------------------------------------------------------------------------

HAPROXY_CONFIG = """\
global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 300s
    timeout server 300s
    timeout tunnel 300s
    # A worker that refuses the connection (killed) costs a retry on the next one, never the request.
    retries 3
    option redispatch 1
    # A client that goes away ends its request on the worker too: without it HAProxy holds a half-closed
    # stream (a GET of notifications) open to the worker until a timeout, and the worker's memory grows.
    option abortonclose

frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers

backend workers
    # Every request to the next worker, keep-alive or not: no stickiness of any kind.
    balance roundrobin
    # Which worker answered, for the tests that check the requests did alternate.
    http-response set-header X-Worker %s
{servers}
"""


@contextlib.contextmanager
def round_robin(backends: Sequence[str], directory: Path) -> Iterator[str]:
    """HAProxy sending each HTTP request to the next of `backends` (``host:port``); yields its base URL."""
    binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
    if binary is None:
        raise ServiceUnavailable("haproxy is not installed: run `make test`, which installs it")
    port = _free_port()
    servers = "\n".join(
        f"    server worker{index} {backend} check inter 250ms fall 1 rise 2"
        for index, backend in enumerate(backends, start=1)
    )
    config, log = directory / f"haproxy-{port}.cfg", directory / f"haproxy-{port}.log"
    config.write_text(HAPROXY_CONFIG.format(port=port, servers=servers))
    with open(log, "wb") as output:
        process = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=output, stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: _accepts(port), process, "haproxy", log)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False
