"""`make bench`: mcp_django beside the official SDK, FastMCP and a bare ASGI app, in one run.

Every server is started once, side by side on loopback; then each round loads every row in turn
(interleaved: A B C, C B A), so drift on a shared machine hits all rows alike. Afterwards a fresh
process of each measured kind opens idle handshake sessions over HTTP to measure memory per session.
The table and the target verdicts are printed and written to `docs/performance.md` (+ an SVG chart).

Environment: ``BENCH_QUICK=1`` (1 round of 2 s, 500 sessions: a smoke test of the harness),
``BENCH_ROUNDS``, ``BENCH_SECONDS``, ``BENCH_SESSIONS``, ``BENCH_DRIVER=python`` (skip wrk),
``BENCH_OUTPUT`` (where the Markdown goes; quick runs default to `.cache/bench/`), ``BENCH_SECTION=telemetry``
(run only the telemetry rows, or the `BENCH_ROWS` given, and rewrite only that section of the Markdown),
``BENCH_SECTION=wsgi`` (the same for the WSGI rows: gunicorn's sync worker, the WSGI fast path, django-mcpz),
``BENCH_SECTION=targets`` (the same for the rows issue 40's ASGI targets name: the floor, the SDK's anonymous
calls, the plain, ten no-op and token + audit calls, the latter on SQLite and on PostgreSQL).
The PostgreSQL rows run on a throwaway cluster the harness starts (`benchmarks/postgres.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks import client, postgres, report, report_targets, report_wsgi
from benchmarks.load import Sample, measure, wrk_available
from benchmarks.workloads import Prepared, ProbeFailed, Workload, initialize, message, prepare

ROOT = Path(__file__).resolve().parent.parent
QUICK = os.environ.get("BENCH_QUICK") == "1"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 1 if QUICK else 3))
SECONDS = float(os.environ.get("BENCH_SECONDS", 2 if QUICK else 4))
WARMUP = 0 if QUICK else 1
SESSIONS = int(os.environ.get("BENCH_SESSIONS", 500 if QUICK else 10_000))
CONNECTIONS = 16


@dataclass(frozen=True)
class Server:
    """A server process: which ASGI app, under which server, with how many workers."""

    key: str
    label: str
    family: str  # floor | anchor | fast | view
    server: str  # uvicorn | daphne
    app: str
    workers: int = 1
    database: str = "sqlite"  # sqlite | postgres (the run's throwaway cluster)

    def argv(self, port: int) -> list[str]:
        if self.server == "gunicorn":  # the sync worker: one request at a time per worker, as most Django sites run
            argv = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--worker-class", "sync"]
            return [*argv, "--workers", str(self.workers), "--log-level", "warning", self.app]
        if self.server == "daphne":
            return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), self.app]
        argv = [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--no-access-log", "--log-level", "warning", "--workers", str(self.workers), self.app]
        return argv


FAST_PATH = importlib.util.find_spec("mcp_django.asgi") is not None
FAST_LABEL = "mcp_django fast path" if FAST_PATH else "mcp_django (fast path not built: Django view)"

SERVERS = {
    server.key: server
    for server in [
        Server("floor-uvicorn", "bare ASGI · uvicorn", "floor", "uvicorn", "benchmarks.bare:app"),
        Server("floor-daphne", "bare ASGI · daphne", "floor", "daphne", "benchmarks.bare:app"),
        Server("sdk-session", "SDK mcp 2.3 session · uvicorn", "anchor", "uvicorn", "benchmarks.anchors:sdk_session"),
        Server(
            "sdk-stateless", "SDK mcp 2.3 stateless · uvicorn", "anchor", "uvicorn", "benchmarks.anchors:sdk_stateless"
        ),
        Server("fastmcp", "FastMCP · uvicorn", "anchor", "uvicorn", "benchmarks.anchors:fastmcp_session"),
        Server("fast-uvicorn", f"{FAST_LABEL} · uvicorn", "fast", "uvicorn", "benchmarks.asgi:fast_path"),
        Server("fast-daphne", f"{FAST_LABEL} · daphne", "fast", "daphne", "benchmarks.asgi:fast_path"),
        Server(
            "fast-uvicorn-pg",
            f"{FAST_LABEL} · uvicorn, PostgreSQL",
            "fast",
            "uvicorn",
            "benchmarks.asgi:fast_path",
            database="postgres",
        ),
        Server("view-uvicorn", "mcp_django Django view · uvicorn", "view", "uvicorn", "benchmarks.asgi:django_view"),
        Server("view-daphne", "mcp_django Django view · daphne", "view", "daphne", "benchmarks.asgi:django_view"),
        Server("floor-gunicorn", "bare WSGI · gunicorn sync", "floor", "gunicorn", "benchmarks.bare:wsgi_app"),
        Server(
            "fast-gunicorn",
            "mcp_django WSGI fast path · gunicorn sync",
            "fast",
            "gunicorn",
            "benchmarks.wsgi:fast_path",
        ),
        Server(
            "view-gunicorn", "mcp_django Django view · gunicorn sync", "view", "gunicorn", "benchmarks.wsgi:django_view"
        ),
        Server(
            "mcpz-gunicorn", "django-mcpz 1.2 view · gunicorn sync", "peer", "gunicorn", "benchmarks.wsgi:django_view"
        ),
        Server(
            "otel-sdk-uvicorn",
            f"{FAST_LABEL} · uvicorn, telemetry, SDK",
            "fast",
            "uvicorn",
            "benchmarks.asgi_otel:fast_path",
        ),
        Server(
            "fast-uvicorn-1w", f"{FAST_LABEL} · uvicorn, 1 worker alone", "fast", "uvicorn", "benchmarks.asgi:fast_path"
        ),
        Server(
            "fast-uvicorn-2w", f"{FAST_LABEL} · uvicorn, 2 workers", "fast", "uvicorn", "benchmarks.asgi:fast_path", 2
        ),
    ]
}

FLOOR = Workload("floor", "fixed JSON body", "none", kind="floor")
CALL_SESSION = Workload("call-session", "tools/call, handshake + session", "handshake")
CALL_SESSION_SYNC = Workload(
    "call-session-sync", "tools/call, handshake + session, sync tool", "handshake", tool="echo_sync"
)
CALL_STATELESS = Workload("call-stateless", "tools/call, handshake era stateless", "stateless")
CALL_STATELESS_SYNC = Workload(
    "call-stateless-sync", "tools/call, handshake era stateless, sync tool", "stateless", tool="echo_sync"
)
CALL_2026 = Workload("call-2026", "tools/call, 2026-07-28", "2026")
CALL_2026_SYNC = Workload("call-2026-sync", "tools/call, 2026-07-28, sync tool", "2026", tool="echo_sync")
ORM_2026 = Workload("orm-2026", "tools/call, 2026-07-28, sync tool, one ORM count()", "2026", tool="count_users")
AUDIT_SESSION = Workload("audit-session", "tools/call, session, token + audit", "handshake", token=True)
AUDIT_2026 = Workload("audit-2026", "tools/call, 2026-07-28, token + audit", "2026", token=True)
AUDIT_2026_SYNC = Workload(
    "audit-2026-sync", "tools/call, 2026-07-28, token + audit, sync tool", "2026", token=True, tool="echo_sync"
)
TEN_2026 = Workload("ten-2026", "tools/call, 2026-07-28, ten no-op interceptors", "2026")
LIST_PAGE = Workload("list-page", "tools/list page of 10,000 tools, one connection", "2026", kind="list", connections=1)


@dataclass(frozen=True)
class Row:
    server: str
    workload: Workload
    path: str


TELEMETRY_WORKLOADS = (CALL_SESSION, CALL_2026, CALL_2026_SYNC)


def api_only(workload: Workload) -> Workload:
    """`workload` on the telemetry endpoint of the plain row's own process, where no SDK is configured."""
    return replace(workload, key=workload.key + report.API_ONLY, label=workload.label + ", telemetry on the API only")


TELEMETRY_ROWS: Sequence[Row] = [
    row
    for workload in TELEMETRY_WORKLOADS
    for row in (Row("fast-uvicorn", api_only(workload), "/otel/mcp"), Row(report.SDK_SERVER, workload, "/otel/mcp"))
]
"""The telemetry extension's rows (issue 21), each compared with the plain `fast-uvicorn` row of its workload.

The API-only row is served by the plain row's own process (same code, same hash seed and memory layout:
two processes of one app differ by several percent), the SDK row by a process with the SDK configured.
"""

WSGI_ROWS: Sequence[Row] = [
    Row("floor-gunicorn", FLOOR, "/mcp"),
    Row("mcpz-gunicorn", CALL_2026_SYNC, "/mcpz/mcp"),
    Row("mcpz-gunicorn", CALL_STATELESS_SYNC, "/mcpz/mcp"),
    Row("fast-gunicorn", CALL_2026_SYNC, "/anon/mcp"),
    Row("fast-gunicorn", CALL_STATELESS_SYNC, "/stateless/mcp"),
    Row("fast-gunicorn", CALL_2026, "/anon/mcp"),
    Row("fast-gunicorn", CALL_SESSION_SYNC, "/anon/mcp"),
    Row("fast-gunicorn", AUDIT_2026_SYNC, "/audit/mcp"),
    Row("view-gunicorn", CALL_2026_SYNC, "/anon/mcp"),
    Row("view-gunicorn", CALL_STATELESS_SYNC, "/stateless/mcp"),
]
"""The WSGI rows (issue 40): gunicorn's sync worker, one worker each, the fast path beside Django's handler serving
mcp_django's view and django-mcpz's (a Django peer; its own process, the same WSGI application as the view rows)."""

POSTGRES_ROWS: Sequence[Row] = [
    Row("fast-uvicorn-pg", AUDIT_2026, "/audit/mcp"),
    Row("fast-uvicorn-pg", AUDIT_2026_SYNC, "/audit/mcp"),
]
"""The token + audit rows on PostgreSQL (issue 40): the same endpoint, its sessions, tokens and audit rows in the
run's throwaway cluster."""

TARGET_ROWS: Sequence[Row] = [
    Row("floor-uvicorn", FLOOR, "/mcp"),
    Row("sdk-stateless", CALL_2026, "/mcp"),
    Row("sdk-stateless", CALL_2026_SYNC, "/mcp"),
    Row("fast-uvicorn", CALL_2026, "/anon/mcp"),
    Row("fast-uvicorn", CALL_2026_SYNC, "/anon/mcp"),
    Row("fast-uvicorn", TEN_2026, "/ten/mcp"),
    Row("fast-uvicorn", AUDIT_2026, "/audit/mcp"),
    Row("fast-uvicorn", AUDIT_2026_SYNC, "/audit/mcp"),
    *POSTGRES_ROWS,
]
"""The rows issue 40's ASGI targets are judged on (`BENCH_SECTION=targets`)."""

ALL_ROWS: Sequence[Row] = [
    Row("floor-uvicorn", FLOOR, "/mcp"),
    Row("floor-daphne", FLOOR, "/mcp"),
    Row("sdk-session", CALL_SESSION, "/mcp"),
    Row("sdk-session", CALL_SESSION_SYNC, "/mcp"),
    Row("sdk-stateless", CALL_STATELESS, "/mcp"),
    Row("sdk-stateless", CALL_2026, "/mcp"),
    Row("sdk-stateless", CALL_2026_SYNC, "/mcp"),
    Row("fastmcp", CALL_SESSION, "/mcp"),
    Row("fastmcp", CALL_2026, "/mcp"),
    Row("fastmcp", CALL_2026_SYNC, "/mcp"),
    Row("fast-uvicorn", CALL_SESSION, "/anon/mcp"),
    Row("fast-uvicorn", CALL_SESSION_SYNC, "/anon/mcp"),
    Row("fast-uvicorn", CALL_2026, "/anon/mcp"),
    Row("fast-uvicorn", CALL_2026_SYNC, "/anon/mcp"),
    Row("fast-uvicorn", ORM_2026, "/anon/mcp"),
    Row("fast-uvicorn", AUDIT_SESSION, "/audit/mcp"),
    Row("fast-uvicorn", AUDIT_2026, "/audit/mcp"),
    Row("fast-uvicorn", AUDIT_2026_SYNC, "/audit/mcp"),
    *POSTGRES_ROWS,
    Row("fast-uvicorn", TEN_2026, "/ten/mcp"),
    Row("fast-uvicorn", LIST_PAGE, "/many/mcp"),
    *TELEMETRY_ROWS,
    Row("fast-uvicorn-1w", CALL_2026, "/anon/mcp"),
    Row("fast-uvicorn-2w", CALL_2026, "/anon/mcp"),
    Row("fast-daphne", CALL_SESSION, "/anon/mcp"),
    Row("fast-daphne", CALL_2026, "/anon/mcp"),
    Row("fast-daphne", AUDIT_2026, "/audit/mcp"),
    Row("view-uvicorn", CALL_SESSION, "/anon/mcp"),
    Row("view-uvicorn", CALL_2026, "/anon/mcp"),
    Row("view-uvicorn", CALL_2026_SYNC, "/anon/mcp"),
    Row("view-uvicorn", ORM_2026, "/anon/mcp"),
    Row("view-uvicorn", AUDIT_2026, "/audit/mcp"),
    Row("view-daphne", CALL_SESSION, "/anon/mcp"),
    Row("view-daphne", CALL_2026, "/anon/mcp"),
    Row("view-daphne", AUDIT_2026, "/audit/mcp"),
    *WSGI_ROWS,
]


def selected_rows(all_rows: Sequence[Row], spec: str | None) -> Sequence[Row]:
    """The rows `BENCH_ROWS` names (comma-separated `server` or `server/workload` keys); all when unset."""
    if not spec:
        return all_rows
    wanted = {name.strip() for name in spec.split(",") if name.strip()}
    return [row for row in all_rows if row.server in wanted or f"{row.server}/{row.workload.key}" in wanted]


SECTION = os.environ.get("BENCH_SECTION") or None
if SECTION not in (None, "telemetry", "wsgi", "targets"):
    raise SystemExit(f"BENCH_SECTION={SECTION}: the sections written alone are `telemetry`, `wsgi` and `targets`")
SECTION_ROWS: Sequence[Row] = [
    row
    for workload in TELEMETRY_WORKLOADS
    for row in (
        next(row for row in ALL_ROWS if row.server == "fast-uvicorn" and row.workload == workload),
        *(row for row in TELEMETRY_ROWS if row.workload.key.removesuffix(report.API_ONLY) == workload.key),
    )
]
"""The telemetry section's rows, each workload's plain, API-only and SDK rows loaded back to back in a round."""
ROWS: Sequence[Row] = selected_rows(
    {None: ALL_ROWS, "telemetry": SECTION_ROWS, "wsgi": WSGI_ROWS, "targets": TARGET_ROWS}[SECTION],
    os.environ.get("BENCH_ROWS"),
)

MEMORY_SERVERS = ("fast-uvicorn", "sdk-session")
"""Measured for memory per idle session, each in a fresh process: mcp_django and the SDK's stateful server."""


@dataclass
class Running:
    server: Server
    port: int
    process: subprocess.Popen[bytes]
    log: Path


@dataclass
class Measured:
    """A row's rounds, or why it has none."""

    row: Row
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(server: Server, env: dict[str, str], folder: Path) -> Running:
    port = free_port()
    log = folder / f"{server.key}-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            server.argv(port), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return Running(server, port, process, log)


def wait_serving(running: Running, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            raise RuntimeError(f"{running.server.key} exited: {running.log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", running.port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{running.server.key} did not listen within {timeout} s: {running.log.read_text()[-2000:]}")


def stop(running: Running) -> None:
    """Stop a server this harness started (its own process group: uvicorn's workers go with it)."""
    if running.process.poll() is None:
        os.killpg(running.process.pid, signal.SIGTERM)
        try:
            running.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(running.process.pid, signal.SIGKILL)
            running.process.wait()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def open_idle_sessions(port: int, path: str, count: int) -> int:
    """Open `count` handshake sessions over HTTP (initialize + initialized); how many got a session id."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    answers = await client.many(port, path, [(initialize(), headers)] * count, CONNECTIONS)
    sessions = [answer.headers["mcp-session-id"] for answer in answers if "mcp-session-id" in answer.headers]
    initialized = message("notifications/initialized", id=None)
    follow = [
        (initialized, {**headers, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}) for sid in sessions
    ]
    await client.many(port, path, follow, CONNECTIONS)
    return len(sessions)


def measure_memory(server: Server, path: str, env: dict[str, str], folder: Path) -> report.Memory:
    running = start(server, env, folder)
    try:
        wait_serving(running)
        asyncio.run(open_idle_sessions(running.port, path, 50))  # load every code path once
        time.sleep(1)
        before = rss_kib(running.process.pid)
        opened = asyncio.run(open_idle_sessions(running.port, path, SESSIONS))
        time.sleep(1)
        after = rss_kib(running.process.pid)
        return report.Memory(server.key, server.label, opened, before, after)
    finally:
        stop(running)


def machine() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        "unknown",
    )
    packages = []
    for name in (
        "django-mcp-host",
        "django",
        "mcp",
        "fastmcp",
        "uvicorn",
        "uvloop",
        "httptools",
        "daphne",
        "twisted",
        "opentelemetry-api",
        "opentelemetry-sdk",
    ):
        try:
            packages.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            packages.append(f"{name} (not installed)")
    wrk = "wrk " + (
        subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split()[1]
        if wrk_available()
        else "missing"
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": f"{cpu}, {os.cpu_count()} cores",
        "python": sys.version.split()[0],
        "packages": ", ".join(packages),
        "load": wrk if os.environ.get("BENCH_DRIVER") != "python" and wrk_available() else "the built-in Python driver",
        "commit": commit or "unknown",
        "load average before": load_average(),
    }


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as `uptime` shows them."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def run_rows(envs: dict[str, dict[str, str] | str], folder: Path, use_wrk: bool) -> list[Measured]:
    """Load every row in interleaved rounds; `envs` gives each database's server environment, or why it has none."""
    needed = {row.server for row in ROWS}
    servers = {
        key: start(SERVERS[key], env, folder)
        for key in SERVERS
        if key in needed and isinstance(env := envs[SERVERS[key].database], dict)
    }
    measured = [Measured(row) for row in ROWS]
    prepared: dict[int, Prepared] = {}
    try:
        for running in servers.values():
            wait_serving(running)
        for index, entry in enumerate(measured):
            if entry.row.server not in servers:
                entry.error = str(envs[SERVERS[entry.row.server].database])
                print(f"  {SERVERS[entry.row.server].label} / {entry.row.workload.label}: {entry.error}", flush=True)
                continue
            running = servers[entry.row.server]
            try:
                prepared[index] = asyncio.run(prepare(entry.row.workload, running.port, entry.row.path))
            except (ProbeFailed, OSError, KeyError, ValueError) as failure:
                entry.error = f"probe failed: {failure}"
                print(f"  {running.server.label} / {entry.row.workload.label}: {entry.error}", flush=True)
        if WARMUP:
            print(f"warm-up: {WARMUP} s per row", flush=True)
            for index in prepared:
                row = measured[index].row
                connections = row.workload.connections or CONNECTIONS
                measure(servers[row.server].port, row.path, prepared[index], WARMUP, connections, folder, use_wrk)
        for round_number in range(1, ROUNDS + 1):
            print(f"round {round_number} of {ROUNDS}: {SECONDS:g} s per row, {CONNECTIONS} connections", flush=True)
            # A B C, then C B A: a row loaded first every round would meet whatever drifts (a warming
            # cache, the previous row's leftover threads) alone, and a ratio of neighbours would carry it.
            order = list(enumerate(measured))
            for index, entry in order if round_number % 2 else reversed(order):
                if index not in prepared:
                    continue
                running = servers[entry.row.server]
                connections = entry.row.workload.connections or CONNECTIONS
                try:
                    sample = measure(
                        running.port,
                        entry.row.path,
                        prepared[index],
                        SECONDS,
                        connections,
                        folder,
                        use_wrk,
                        group=running.process.pid,  # start_new_session: the server leads its own group
                    )
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as failure:
                    print(f"  {running.server.label} / {entry.row.workload.label}: {failure}", flush=True)
                    continue
                entry.samples.append(sample)
                print(
                    f"  {running.server.label:55} {entry.row.workload.label:48} {sample.calls_per_second:9.0f}/s"
                    f"  p50 {sample.p50_ms:6.2f} ms  p99 {sample.p99_ms:7.2f} ms"
                    f"  {sample.server_us_per_call:6.0f} µs CPU/call  load {sample.generator_share:4.0%}"
                    f"  others {sample.others_share:4.0%}" + (f"  {sample.failures} FAILED" if sample.failures else ""),
                    flush=True,
                )
    finally:
        for running in servers.values():
            stop(running)
    return measured


def result_of(row: Row, samples: list[Sample], error: str | None = None) -> report.RowResult:
    """A row's measurements as the report shows them."""
    server, workload = SERVERS[row.server], row.workload
    return report.RowResult(
        server.label,
        server.family,
        server.server,
        row.server,
        workload.key,
        workload.label,
        workload.era,
        samples,
        error,
        workload.tool,
    )


def group_commit_report() -> str | None:
    """The audit group commit's in-process micro benchmark (`benchmarks/bench_audit.py`), when it exists."""
    script = ROOT / "benchmarks" / "bench_audit.py"
    if not script.exists():
        return None
    print("audit group commit: benchmarks/bench_audit.py", flush=True)
    argv = [sys.executable, str(script), *(["--calls", "200", "--rounds", "1"] if QUICK else [])]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    return (done.stdout + (done.stderr[-2000:] if done.returncode else "")).strip()


def hot_path_report() -> str | None:
    """CPU time per call of the hot path in process (`benchmarks/bench_inprocess.py --cpu`)."""
    print("hot path in process: benchmarks/bench_inprocess.py --cpu", flush=True)
    argv = [sys.executable, str(ROOT / "benchmarks" / "bench_inprocess.py"), "--cpu"]
    if QUICK:
        argv += ["--calls", "300", "--rounds", "3"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    return (done.stdout + (done.stderr[-2000:] if done.returncode else "")).strip()


def main() -> None:
    use_wrk = os.environ.get("BENCH_DRIVER") != "python" and wrk_available()
    if not use_wrk:
        print("wrk not found (or BENCH_DRIVER=python): the built-in Python driver sends the load", flush=True)
    output = Path(
        os.environ.get("BENCH_OUTPUT") or (ROOT / (".cache/bench/performance.md" if QUICK else "docs/performance.md"))
    )
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as name, contextlib.ExitStack() as stack:
        folder = Path(name)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
            "BENCH_DB": str(folder / "bench.sqlite3"),
            "PYTHONPATH": str(ROOT),
        }
        subprocess.run([sys.executable, "-m", "benchmarks.prepare"], cwd=ROOT, env=env, check=True)
        envs: dict[str, dict[str, str] | str] = {"sqlite": env}
        if any(SERVERS[row.server].database == "postgres" for row in ROWS):
            envs["postgres"] = postgres.database_env(env, stack)
        info = machine()
        measured = run_rows(envs, folder, use_wrk)
        memory = []
        for key in () if SECTION else MEMORY_SERVERS:
            print(f"memory: {SESSIONS} idle handshake sessions on a fresh {SERVERS[key].label}", flush=True)
            try:
                memory.append(
                    measure_memory(SERVERS[key], "/anon/mcp" if key.startswith("fast") else "/mcp", env, folder)
                )
            except (RuntimeError, OSError) as failure:
                print(f"  failed: {failure}", flush=True)
        info["load average after"] = load_average()
        commit_report = None if SECTION else group_commit_report()
        hot_path = None if SECTION else hot_path_report()
    results = report.Results(
        rows=[result_of(m.row, m.samples, m.error) for m in measured],
        memory=memory,
        machine=info,
        settings=f"{ROUNDS} round(s) of {SECONDS:g} s per row, {CONNECTIONS} connections, {SESSIONS} sessions",
        group_commit=commit_report,
        hot_path=hot_path,
        fast_path=FAST_PATH,
    )
    print()
    print(report.text_table(results))
    print()
    print(report.text_verdicts(results))
    for target, value, verdict in report_wsgi.wsgi_verdicts(results) + report_targets.postgres_verdicts(results):
        print(f"  {verdict.upper():12} {target}  {value}")
    output.parent.mkdir(parents=True, exist_ok=True)
    if SECTION == "telemetry":
        report.update_telemetry_section(results, output)
    elif SECTION == "targets":
        report_targets.update_targets_section(results, output)
    elif SECTION != "wsgi":
        report.write(results, output)
    if any(row.server == "gunicorn" for row in results.rows):
        report_wsgi.update_wsgi_section(results, output)
    if SECTION is None and any(row.server_key == "fast-uvicorn-pg" for row in results.rows):
        report_targets.update_targets_section(results, output)
    print(f"\nwrote {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}")


if __name__ == "__main__":
    main()
