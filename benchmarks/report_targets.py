"""The section of `docs/performance.md` on issue 40's ASGI targets: the audited call on SQLite and PostgreSQL,
the async echo over the bare floor, ten no-op interceptors (`BENCH_SECTION=targets` rewrites only it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchmarks.report import KEPT_TARGETS, Results, section_figures, update_section

TARGETS_BEGIN, TARGETS_END = KEPT_TARGETS

FAST, POSTGRES = "fast-uvicorn", "fast-uvicorn-pg"
SECTION_SERVERS = ("floor-uvicorn", "sdk-stateless", FAST, POSTGRES)
SECTION_WORKLOADS = ("floor", "call-2026", "call-2026-sync", "ten-2026", "audit-2026", "audit-2026-sync")


def _verdict(values: Sequence[tuple[str, float | None]], ok: float, fmt: str, at_least: bool = True) -> tuple[str, str]:
    measured = [(name, value) for name, value in values if value is not None]
    text = ", ".join(f"{name} {fmt.format(value)}" for name, value in measured) or "—"
    if len(measured) < len(values):
        return text, "not measured"
    met = all(value >= ok if at_least else value <= ok for _, value in measured)
    return text, "met" if met else "missed"


def _audit_values(results: Results, server: str) -> list[tuple[str, float | None]]:
    """How many times less CPU per call the token + audit call takes than the SDK's anonymous one, async and sync."""
    values: list[tuple[str, float | None]] = []
    for name, suffix in (("async", ""), ("sync", "-sync")):
        sdk, row = results.find("sdk-stateless", "call-2026" + suffix), results.find(server, "audit-2026" + suffix)
        ratio = sdk.cpu / row.cpu if sdk and row and row.cpu else None
        values.append((f"{name} ({sdk.cpu:,.0f} ÷ {row.cpu:,.0f})" if sdk and row else name, ratio))
    return values


def postgres_verdicts(results: Results) -> list[tuple[str, str, str]]:
    """The token + audit target on PostgreSQL, when the run has those rows (printed by every run that has them)."""
    if not any(row.server_key == POSTGRES for row in results.rows):
        return []
    return [(AUDIT_TARGET + " on PostgreSQL", *_verdict(_audit_values(results, POSTGRES), 1.5, "{:.2f}×"))]


AUDIT_TARGET = "token + audit: ≥ 1.5× less CPU per call than the SDK's anonymous call (uvicorn, 2026-07-28)"


def targets_verdicts(results: Results) -> list[tuple[str, str, str]]:
    """(target, measured, met|missed|not measured) for issue 40's ASGI targets."""
    floor, plain = results.find("floor-uvicorn", "floor"), results.find(FAST, "call-2026")
    ten = results.find(FAST, "ten-2026")
    echo: list[tuple[str, float | None]] = [("async", None)]
    if plain and floor and floor.cpu:
        echo = [(f"async ({plain.cpu:,.0f} ÷ {floor.cpu:,.0f})", plain.cpu / floor.cpu)]
    no_ops: list[tuple[str, float | None]] = [("cost", None)]
    if ten and plain and plain.cpu:
        no_ops = [(f"cost ({ten.cpu:,.0f} ÷ {plain.cpu:,.0f})", ten.cpu / plain.cpu - 1)]
    return [
        (AUDIT_TARGET + ", SQLite in WAL", *_verdict(_audit_values(results, FAST), 1.5, "{:.2f}×")),
        *(postgres_verdicts(results) or [(AUDIT_TARGET + " on PostgreSQL", "—", "not measured")]),
        ("async echo, 2026-07-28: ≤ 3× the bare floor's CPU per call", *_verdict(echo, 3.0, "{:.1f}×", False)),
        ("ten no-op interceptors: ≤ 15% more CPU per call than none", *_verdict(no_ops, 0.15, "{:+.0%}", False)),
    ]


CAUSES = """\
The measured causes of what the run misses (in process, `benchmarks/README.md` has each measurement):

- **Token + audit.** With 16 callers the audit sink costs about 100 µs a call over a sink that stores
  nothing on SQLite: 50–60 µs in the writer thread's batch (the INSERT into the table and its five indexes
  about half, the values' JSON and timestamp the rest) and about 30 µs on the serving loop (the row, its
  hand-over, one wake-up per batch); the chain with that one sink adds about 45 µs over none. The DRF
  token is a cache hit (2–9 µs). On PostgreSQL the writer's own CPU per batch is the driver's: a batch is
  one query string, one round trip (a one-row batch 578 → 269 µs of the process's CPU, 16 rows 108 → 83 µs
  a row, against the four round trips before: `BEGIN`, the bounds, the INSERT, `COMMIT`); the database
  server's CPU is not the row's. Decision 16 keeps the row committed before the reply leaves, so one
  INSERT per call stays; the hand-over to the writer thread stays too (doing the INSERT and COMMIT on the
  event loop would stall every request of the process while the database is locked).
- **Async echo over the floor.** The fast path's application alone costs about 3.4× the floor's whole
  request in process: `respond()`, the core's shared work (admission, the header checks, JSON, the tool's
  argument model, the result), is about 60% of it, the ASGI layer about 35 µs. Reaching 3× needs the whole
  application in about two fifths of its CPU.
- **Ten no-ops.** Twenty invocations a call (both phases): each costs the interceptor's own coroutine
  (about 1 µs; a no-op mutation's, with its `MutationResult`, about 2 µs) and the chain's bookkeeping
  around it (0.6 µs for a validation or sink, 2.6 µs for a mutation), and per phase the result, the run
  and the invocation; per call the two contexts and the trace id.
"""


def targets_section(results: Results) -> str:
    """The Markdown of the section, between its markers, with the run it comes from."""
    rows = [
        row
        for server in SECTION_SERVERS
        for workload in SECTION_WORKLOADS
        if (row := results.find(server, workload)) is not None
    ]
    rows += [row for row in results.rows if row.server_key == POSTGRES and not row.samples]  # why a row has none
    lines = [
        TARGETS_BEGIN,
        "## Issue 40: the audited call on SQLite and PostgreSQL, the echo over the floor, ten no-ops",
        "",
        "The rows issue 40's ASGI targets are judged on, all under uvicorn in the same interleaved rounds: the bare",
        "ASGI floor, the SDK's anonymous 2026-07-28 calls, and mcp_django's fast path anonymous, with ten no-op",
        "interceptors, and with a DRF token and the audit sink — on the startproject settings' SQLite (WAL,",
        "`synchronous=NORMAL`) and on PostgreSQL: a throwaway cluster the harness starts for the run",
        "(`benchmarks/postgres.py`, durability off as in the production tests, persistent connections). The",
        "PostgreSQL server's own CPU is another process's, as in a deployment, and is not in the row's CPU per call",
        "(SQLite's INSERT runs inside the server process, so its rows carry it).",
        "",
        *section_figures(results, rows, targets_verdicts(results)),
        "",
        CAUSES,
        TARGETS_END,
    ]
    return "\n".join(lines)


def update_targets_section(results: Results, output: Path) -> None:
    """Rewrite only this section of `output`, keep the rest."""
    update_section(output, targets_section(results), TARGETS_BEGIN, TARGETS_END)
