"""The WSGI section of `docs/performance.md` (issue 40): gunicorn's sync worker, the fast path beside django-mcpz."""

from __future__ import annotations

from pathlib import Path

from benchmarks.report import KEPT_WSGI, Results, section_figures, update_section

WSGI_BEGIN, WSGI_END = KEPT_WSGI

FAST, VIEW, PEER = "fast-gunicorn", "view-gunicorn", "mcpz-gunicorn"


def _cheaper(results: Results, reference: tuple[str, str], row: tuple[str, str]) -> float | None:
    top, found = results.find(*reference), results.find(*row)
    return top.cpu / found.cpu if top and found and found.cpu else None


def wsgi_verdicts(results: Results) -> list[tuple[str, str, str]]:
    """(target, measured, met|missed|not measured) for the WSGI target of issue 40."""
    values = [
        ("2026 sync", _cheaper(results, (PEER, "call-2026-sync"), (FAST, "call-2026-sync"))),
        ("handshake era sync", _cheaper(results, (PEER, "call-stateless-sync"), (FAST, "call-stateless-sync"))),
    ]
    measured = [(name, value) for name, value in values if value is not None]
    text = ", ".join(f"{name} {value:.2f}×" for name, value in measured) or "—"
    if len(measured) < len(values):
        verdict = "not measured"
    else:
        verdict = "met" if all(value >= 2.0 for _, value in measured) else "missed"
    target = "WSGI, gunicorn sync worker: ≥ 2× less CPU per call than django-mcpz's view (sync echo)"
    view = [
        ("2026 sync", _cheaper(results, (VIEW, "call-2026-sync"), (FAST, "call-2026-sync"))),
        ("handshake era sync", _cheaper(results, (VIEW, "call-stateless-sync"), (FAST, "call-stateless-sync"))),
    ]
    beside = ", ".join(f"{name} {value:.2f}×" for name, value in view if value is not None) or "—"
    return [
        (target, text, verdict),
        ("… and than mcp_django's own Django view under WSGI (for the record)", beside, "—"),
    ]


def over_the_floor(results: Results) -> list[str]:
    """What the run says of the target: each application's part over gunicorn's own, and what 2× would need."""
    floor, fast, peer = (
        results.find(key, workload)
        for key, workload in (("floor-gunicorn", "floor"), (FAST, "call-2026-sync"), (PEER, "call-2026-sync"))
    )
    if not (floor and fast and peer):
        return []
    ours, theirs = fast.cpu - floor.cpu, peer.cpu - floor.cpu
    return [
        f"Over gunicorn's own work per request (the floor, {floor.cpu:,.0f} µs: parsing, the connection, the"
        f" worker loop), the fast path's 2026-07-28 sync echo costs {ours:,.0f} µs and django-mcpz's"
        f" {theirs:,.0f} µs (its view, Django's handler and startproject's middleware). 2× less CPU per call"
        f" than django-mcpz needs the fast path's part under {max(theirs - floor.cpu, 0) / 2:,.0f} µs"
        f" (an application costing nothing would be {peer.cpu / floor.cpu:.1f}× cheaper).",
        "",
        "Where the fast path's part goes (cProfile in process and under gunicorn, 2026-12-06): about 70% is",
        "`StreamableHTTP.respond()`, the work the ASGI fast path does too (admission, the header checks, JSON,",
        "the tool's argument model, the result's shape, the hooks); running it on the thread's event loop (one",
        "`run_until_complete`, about 25 µs: a task, two passes of the loop, their `epoll` calls) and the two",
        "`close_old_connections()` (about 10 µs each, as Django's signals pay) most of the rest; the headers",
        "from the environ now cost 3.7 µs (10.5 before), the route 3, `set_script_prefix` 3.4. The lever left is",
        "that shared core, not the WSGI layer.",
        "",
        "The audited call under the sync worker (one request at a time per process, so every call is a batch",
        "of one): in process, +526 µs over the anonymous call on SQLite, of which about 105 on the request's own",
        "path (the cached token, the chain with the sink, the row), about 210 the writer's one-row `BEGIN`,",
        "INSERT and `COMMIT`, and the rest the hand-over to the writer thread and the wake-up back (two thread",
        "switches and the loop's self-pipe), which a batch of one cannot share with anyone.",
        "",
    ]


def wsgi_section(results: Results) -> str:
    """The Markdown of the WSGI section, between its markers, with the run it comes from."""
    rows = [row for row in results.rows if row.server == "gunicorn"]
    lines = [
        WSGI_BEGIN,
        "## WSGI: gunicorn's sync worker (issue 40)",
        "",
        "Four gunicorn processes, `--worker-class sync --workers 1` each, loaded in the same interleaved rounds:",
        "a bare WSGI app answering a fixed body (the floor: gunicorn's own cost per request), mcp_django's WSGI fast",
        "path (`mcp_django.wsgi.get_wsgi_application()`), Django's WSGI handler serving mcp_django's Django view,",
        "and Django's WSGI handler serving django-mcpz 1.2.0's view (a sync Django view; `benchmarks/mcpz.py`),",
        "both views through startproject's middleware. Each calls a plain `def` echo (one row the `async def`",
        "one). django-mcpz serves the handshake era statelessly (no session), so its handshake-era row is",
        "compared with mcp_django's endpoint without sessions (`sessions=False`). The sync worker closes the",
        "connection after every answer, so every call pays a TCP connection, alike for every row. The SDK column",
        "does not apply (its rows are ASGI); `× floor CPU` is over the bare WSGI app's.",
        "",
        *section_figures(results, rows, wsgi_verdicts(results)),
        "",
        *over_the_floor(results),
        WSGI_END,
    ]
    return "\n".join(lines)


def update_wsgi_section(results: Results, output: Path) -> None:
    """Rewrite only the WSGI section of `output`, keep the rest."""
    update_section(output, wsgi_section(results), WSGI_BEGIN, WSGI_END)
