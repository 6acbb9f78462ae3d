"""The benchmark's results: the table, the target verdicts, `docs/performance.md` and its SVG chart."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from benchmarks.load import Sample


@dataclass
class RowResult:
    label: str
    family: str  # floor | anchor | fast | view
    server: str  # uvicorn | daphne
    server_key: str
    workload: str
    workload_label: str
    era: str
    samples: list[Sample]
    error: str | None = None
    tool: str = "echo"

    @property
    def sync(self) -> bool:
        """True for a row whose tool is a plain `def` (run on a thread)."""
        return self.tool != "echo"

    @property
    def cpu(self) -> float:
        """The server's CPU µs per call, median over the rounds."""
        return statistics.median(s.server_us_per_call for s in self.samples)

    @property
    def generator_share(self) -> float:
        return statistics.median(s.generator_share for s in self.samples)

    @property
    def others_share(self) -> float:
        return statistics.median(s.others_share for s in self.samples)

    @property
    def rate(self) -> float:
        return statistics.median(s.calls_per_second for s in self.samples)

    @property
    def low(self) -> float:
        return min(s.calls_per_second for s in self.samples)

    @property
    def high(self) -> float:
        return max(s.calls_per_second for s in self.samples)

    @property
    def p50(self) -> float:
        return statistics.median(s.p50_ms for s in self.samples)

    @property
    def p99(self) -> float:
        return statistics.median(s.p99_ms for s in self.samples)

    @property
    def failures(self) -> int:
        return sum(s.failures for s in self.samples)


@dataclass(frozen=True)
class Memory:
    server_key: str
    label: str
    sessions: int
    before_kib: int
    after_kib: int

    @property
    def per_session_bytes(self) -> float:
        return (self.after_kib - self.before_kib) * 1024 / max(1, self.sessions)


@dataclass
class Results:
    rows: list[RowResult]
    memory: list[Memory]
    machine: dict[str, str]
    settings: str
    group_commit: str | None = None
    hot_path: str | None = None
    fast_path: bool = True
    verdicts: list[tuple[str, str, str]] = field(default_factory=list)

    def find(self, server_key: str, workload: str) -> RowResult | None:
        for row in self.rows:
            if row.server_key == server_key and row.workload == workload and row.samples:
                return row
        return None

    def sdk(self, era: str, sync: bool = False) -> RowResult | None:
        """The SDK row a row of `era` is compared with: the session row for the handshake era, same kind of tool."""
        suffix = "-sync" if sync else ""
        if era == "2026":
            return self.find("sdk-stateless", "call-2026" + suffix)
        if era in ("handshake", "stateless"):
            return self.find("sdk-session", "call-session" + suffix)
        return None

    def floor(self, server: str) -> RowResult | None:
        return self.find(f"floor-{server}", "floor")


def ratio_to_sdk(results: Results, row: RowResult) -> float | None:
    """The SDK's CPU per call for the same era and kind of tool, over this row's: how many times cheaper it is."""
    if row.workload == "list-page" or row.tool not in ("echo", "echo_sync") or row.server == "gunicorn":
        return None  # the SDK's rows are ASGI (uvicorn): no reference for a WSGI row
    reference = results.sdk(row.era, row.sync)
    return reference.cpu / row.cpu if reference and row.samples and row.cpu else None


def times_floor(results: Results, row: RowResult) -> float | None:
    """This row's CPU per call over the bare ASGI app's under the same server."""
    floor = results.floor(row.server)  # floor-uvicorn, floor-daphne, floor-gunicorn
    if row.family == "floor" or row.workload == "list-page" or not floor or not row.samples or not floor.cpu:
        return None
    return row.cpu / floor.cpu


def table_rows(results: Results) -> list[list[str]]:
    lines = []
    for row in results.rows:
        if not row.samples:
            lines.append([row.label, row.workload_label, row.error or "no samples", *[""] * (len(HEADER) - 3)])
            continue
        ratio, floor = ratio_to_sdk(results, row), times_floor(results, row)
        rate = f"{row.rate:,.0f} ({row.low:,.0f}–{row.high:,.0f})"
        if row.failures:
            rate += f" ⚠ {row.failures} failed"
        lines.append(
            [
                row.label,
                row.workload_label,
                f"{row.cpu:,.0f}",
                f"{ratio:.2f}×" if ratio is not None else "—",
                f"{floor:.1f}×" if floor is not None else "—",
                rate,
                f"{row.p50:.2f}",
                f"{row.p99:.2f}",
                f"{row.generator_share:.0%} / {row.others_share:.0%}",
            ]
        )
    return lines


HEADER = [
    "server",
    "workload",
    "CPU µs/call",
    "SDK's CPU ÷ this",
    "× floor CPU",
    "calls/s median (min–max)",
    "p50 ms",
    "p99 ms",
    "load gen / others",
]


def text_table(results: Results) -> str:
    lines = [HEADER, *table_rows(results)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    out = []
    for number, line in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip())
        if number == 0:
            out.append("  ".join("-" * width for width in widths))
    return "\n".join(out)


def markdown_table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in lines]
    return "\n".join(out)


# ---------------------------------------------------------------- verdicts


def _ratio(results: Results, a: tuple[str, str], b: tuple[str, str] | RowResult | None) -> float | None:
    top = results.find(*a)
    bottom = results.find(*b) if isinstance(b, tuple) else b
    return top.rate / bottom.rate if top and bottom and bottom.rate else None


def _cheaper(results: Results, reference: RowResult | None, row: tuple[str, str]) -> float | None:
    """How many times less CPU per call `row` takes than `reference`."""
    found = results.find(*row)
    return reference.cpu / found.cpu if reference and found and found.cpu else None


def verdicts(results: Results) -> list[tuple[str, str, str]]:
    """(target, measured, met|missed|not measured) for each target of issues 9 and 26 (CPU per call ratios)."""
    out: list[tuple[str, str, str]] = []

    def judge(target: str, values: Sequence[tuple[str, float | None]], ok: Callable[[float], bool], fmt: str) -> None:
        measured = [(name, value) for name, value in values if value is not None]
        if len(measured) < len(values) or not measured:
            out.append((target, ", ".join(f"{n} {fmt.format(v)}" for n, v in measured) or "—", "not measured"))
            return
        verdict = "met" if all(ok(value) for _, value in measured) else "missed"
        out.append((target, ", ".join(f"{name} {fmt.format(value)}" for name, value in measured), verdict))

    fast = "fast-uvicorn"
    judge(
        "tools/call anonymous, uvicorn: ≥ 2× less CPU per call than the SDK's same tool",
        [
            ("session async", _cheaper(results, results.sdk("handshake"), (fast, "call-session"))),
            ("session sync", _cheaper(results, results.sdk("handshake", sync=True), (fast, "call-session-sync"))),
            ("2026 async", _cheaper(results, results.sdk("2026"), (fast, "call-2026"))),
            ("2026 sync", _cheaper(results, results.sdk("2026", sync=True), (fast, "call-2026-sync"))),
        ],
        lambda v: v >= 2.0,
        "{:.2f}×",
    )
    sdk_session, sdk_2026 = results.sdk("handshake"), results.sdk("2026")
    fast_session, fast_2026 = results.find(fast, "call-session"), results.find(fast, "call-2026")
    judge(
        "… p99 no worse than the SDK's (ratio of p99s ≤ 1)",
        [
            ("session", fast_session.p99 / sdk_session.p99 if fast_session and sdk_session else None),
            ("2026", fast_2026.p99 / sdk_2026.p99 if fast_2026 and sdk_2026 else None),
        ],
        lambda v: v <= 1.0,
        "{:.2f}",
    )
    judge(
        "DRF token + audit sink: ≥ 1.5× less CPU per call than the SDK's anonymous call",
        [
            ("session async", _cheaper(results, sdk_session, (fast, "audit-session"))),
            ("2026 async", _cheaper(results, sdk_2026, (fast, "audit-2026"))),
            ("2026 sync", _cheaper(results, results.sdk("2026", sync=True), (fast, "audit-2026-sync"))),
        ],
        lambda v: v >= 1.5,
        "{:.2f}×",
    )
    floor = results.floor("uvicorn")
    judge(
        "async echo, 2026-07-28: ≤ 3× the bare floor's CPU per call (uvicorn)",
        [("async", 1 / value if (value := _cheaper(results, floor, (fast, "call-2026"))) else None)],
        lambda v: v <= 3.0,
        "{:.1f}×",
    )
    ten, none = results.find(fast, "ten-2026"), results.find(fast, "call-2026")
    judge(
        "ten no-op interceptors: ≤ 15% more CPU per call than none (fast path)",
        [("cost", ten.cpu / none.cpu - 1 if ten and none and none.cpu else None)],
        lambda v: v <= 0.15,
        "{:+.0%}",
    )
    daphne_floor = results.floor("daphne")
    judge(
        "tools/call anonymous, daphne: ≥ 50% of daphne's floor (calls/s)",
        [
            ("session", _ratio(results, ("fast-daphne", "call-session"), daphne_floor)),
            ("2026", _ratio(results, ("fast-daphne", "call-2026"), daphne_floor)),
        ],
        lambda v: v >= 0.5,
        "{:.0%}",
    )
    page = results.find(fast, "list-page")
    judge(
        "a tools/list page of 10,000 tools: ≤ 5 ms p50",
        [("p50", page.p50 if page else None)],
        lambda v: v <= 5.0,
        "{:.2f} ms",
    )
    fast_memory = [m for m in results.memory if m.server_key == fast]
    judge(
        "≤ 2 KB of process memory per idle handshake session",
        [("per session", fast_memory[0].per_session_bytes / 1024 if fast_memory else None)],
        lambda v: v <= 2.0,
        "{:.2f} KB",
    )
    judge(
        "two worker processes serve ≥ 1.7× one (fast path, uvicorn, 2026, calls/s)",
        [("ratio", _ratio(results, ("fast-uvicorn-2w", "call-2026"), ("fast-uvicorn-1w", "call-2026")))],
        lambda v: v >= 1.7,
        "{:.2f}×",
    )
    return out


# ---------------------------------------------------------------- telemetry (issue 21)

API_ONLY = "-otel-api"
"""The key suffix of a workload served with the telemetry extension on the API alone, by the plain row's process."""

SDK_SERVER = "otel-sdk-uvicorn"
"""The process whose OpenTelemetry SDK records everything and drops the exports (benchmarks/asgi_otel.py)."""

TELEMETRY_HEADER = [
    "workload",
    "configuration",
    "CPU µs/call",
    "CPU vs plain",
    "calls/s median (min–max)",
    "calls/s vs plain",
    "p50 ms",
    "p99 ms",
]
CONFIGURATIONS = (
    "no telemetry (the plain row)",
    "TelemetryExtension, opentelemetry-api only (no SDK configured), same process",
    "TelemetryExtension, SDK: BatchSpanProcessor + MeterProvider, exports dropped",
)


def telemetry_pairs(results: Results) -> list[tuple[RowResult, RowResult | None, RowResult | None]]:
    """(plain, API only, SDK) per workload that has a telemetry row in this run, in the order measured."""
    workloads = [
        row.workload.removesuffix(API_ONLY)
        for row in results.rows
        if row.server_key == SDK_SERVER or row.workload.endswith(API_ONLY)
    ]
    out = []
    for workload in dict.fromkeys(workloads):
        plain = results.find("fast-uvicorn", workload)
        if plain is not None:
            out.append((plain, results.find("fast-uvicorn", workload + API_ONLY), results.find(SDK_SERVER, workload)))
    return out


def cpu_cost(plain: RowResult, row: RowResult) -> float:
    """How much more CPU per call `row` takes than `plain`: the median over the rounds of each round's ratio.

    The two rows of a round are loaded one after the other, so the machine's load, which swings from one
    minute to the next, weighs on both alike; with a round missing from either, the ratio of the medians.
    """
    if len(plain.samples) != len(row.samples):
        return row.cpu / plain.cpu - 1
    ratios = [b.server_us_per_call / a.server_us_per_call for a, b in zip(plain.samples, row.samples, strict=True)]
    return statistics.median(ratios) - 1


def telemetry_table(results: Results) -> list[list[str]]:
    lines = []
    for plain, *traced in telemetry_pairs(results):
        for configuration, row in zip(CONFIGURATIONS, (plain, *traced), strict=True):
            if row is None:
                continue
            rate = f"{row.rate:,.0f} ({row.low:,.0f}–{row.high:,.0f})" + (
                f" ⚠ {row.failures} failed" if row.failures else ""
            )
            same = row is plain
            lines.append(
                [
                    plain.workload_label,
                    configuration,
                    f"{row.cpu:,.0f}",
                    "—" if same else f"{cpu_cost(plain, row):+.1%}",
                    rate,
                    "—" if same else f"{row.rate / plain.rate - 1:+.1%}",
                    f"{row.p50:.2f}",
                    f"{row.p99:.2f}",
                ]
            )
    return lines


def telemetry_verdicts(results: Results) -> list[tuple[str, str, str]]:
    """The API-only target (≤ 3%, judged on CPU per call) and the SDK's cost, which is reported, not judged."""
    pairs = telemetry_pairs(results)
    api = [(plain, row) for plain, row, _ in pairs if row is not None]
    sdk = [(plain, row) for plain, _, row in pairs if row is not None]

    def costs(found: list[tuple[RowResult, RowResult]]) -> str:
        return ", ".join(
            f"{plain.workload_label.removeprefix('tools/call, ')} CPU {cpu_cost(plain, row):+.1%}"
            f" (calls/s {row.rate / plain.rate - 1:+.1%})"
            for plain, row in found
        )

    target = "telemetry on the API only: ≤ 3% more CPU per call than none (judged on CPU per call, not calls/s)"
    if not api:
        out = [(target, "—", "not measured")]
    else:
        verdict = "met" if all(cpu_cost(plain, row) <= 0.03 for plain, row in api) else "missed"
        out = [(target, costs(api), verdict)]
    out.append(("telemetry with an SDK (batch processor, exports dropped): reported", costs(sdk) or "—", "reported"))
    return out


TELEMETRY_BEGIN = "<!-- make bench: the telemetry section (BENCH_SECTION=telemetry rewrites only this) -->"
TELEMETRY_END = "<!-- end of the telemetry section -->"
STARTUP_BEGIN = "<!-- benchmarks/startup.py: the start-up section (make bench keeps it as it is) -->"
STARTUP_END = "<!-- end of the start-up section -->"
CATALOGUES_BEGIN = "<!-- benchmarks/tokens.py: the large catalogues section (make bench keeps it as it is) -->"
CATALOGUES_END = "<!-- end of the large catalogues section -->"
KEPT_WSGI = (
    "<!-- make bench: the WSGI section (BENCH_SECTION=wsgi rewrites only this) -->",
    "<!-- end of the WSGI section -->",
)
"""The markers of the WSGI section (`benchmarks/report_wsgi.py` writes it)."""
KEPT_TARGETS = (
    "<!-- make bench: the issue 40 targets section (BENCH_SECTION=targets rewrites only this) -->",
    "<!-- end of the issue 40 targets section -->",
)
"""The markers of the section on issue 40's ASGI targets (`benchmarks/report_targets.py` writes it)."""


def kept_section(output: Path, begin: str = STARTUP_BEGIN, end: str = STARTUP_END) -> list[str]:
    """A section `output` has between `begin` and `end` (written by hand: the start-up section from
    `benchmarks/startup.py`, the large catalogues one from `benchmarks/tokens.py`), to keep on a rewrite."""
    text = output.read_text() if output.exists() else ""
    if begin not in text or end not in text:
        return []
    section = text.split(begin, 1)[1].split(end, 1)[0]
    return [begin + section + end, ""]


def run_line(results: Results, settings: str) -> str:
    """The line a section of the page opens its figures with: the run they come from, and the machine's load."""
    info = results.machine
    return (
        f"Run: {info.get('date', '?')}, commit {info.get('commit', '?')} — {settings};"
        f" load from {info.get('load', '?')}; load average before {info.get('load average before', '?')},"
        f" after {info.get('load average after', '?')}."
    )


def section_figures(results: Results, rows: list[RowResult], verdicts: Sequence[Sequence[str]]) -> list[str]:
    """A section's figures: the run they come from (its settings without the session count), the table of the
    section's own rows, and its targets' verdicts."""
    section = Results(rows=rows, memory=[], machine=results.machine, settings=results.settings)
    return [
        run_line(results, results.settings.rsplit(", ", 1)[0]),
        "",
        markdown_table(HEADER, table_rows(section)),
        "",
        markdown_table(["target", "measured", "verdict"], verdicts),
    ]


def telemetry_section(results: Results) -> str:
    """The Markdown of the telemetry section, between its markers, with the run it comes from."""
    lines = [
        TELEMETRY_BEGIN,
        "## Telemetry (issue 21)",
        "",
        "The fast path under uvicorn with mcp_django's `TelemetryExtension` on the endpoint, beside the plain",
        "row of the same workload in the same run: once with only the OpenTelemetry API (no SDK configured, so",
        "every span is the API's non-recording one; an installed but unconfigured SDK is the same), once with",
        "the SDK set in the server process before Django loads (`benchmarks/otel.py`): a `TracerProvider` that",
        "samples every span into a `BatchSpanProcessor` whose exporter drops the batch, and a `MeterProvider`",
        "whose periodic reader aggregates every measurement and drops the export. The CPU includes the batch",
        "processor's thread. The target is judged on CPU per call (`CPU vs plain`: the median over the rounds",
        "of each round's ratio to the plain row, loaded next to it); calls/s stand beside it. Under load",
        "(the load averages below) those ratios move by several percent from run to run;",
        "`benchmarks/bench_telemetry.py` measures the same configurations in process, with no HTTP.",
        "",
        run_line(results, results.settings),
        "",
        markdown_table(TELEMETRY_HEADER, telemetry_table(results)),
        "",
        markdown_table(["target", "measured", "verdict"], telemetry_verdicts(results)),
        "",
        TELEMETRY_END,
    ]
    return "\n".join(lines)


def update_telemetry_section(results: Results, output: Path) -> None:
    """Rewrite only the telemetry section of `output` (before "## Machine" when it has none yet), keep the rest."""
    update_section(output, telemetry_section(results), TELEMETRY_BEGIN, TELEMETRY_END)


def update_section(output: Path, section: str, begin: str, end: str) -> None:
    """Put `section` (its markers `begin` and `end` included) in place of the one `output` has, or before
    "## Machine" when it has none yet; keep the rest."""
    text = output.read_text() if output.exists() else "# Performance\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    elif "\n## Machine\n" in text:
        head, rest = text.split("\n## Machine\n", 1)
        text = head + "\n" + section + "\n\n## Machine\n" + rest
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    output.write_text(text)


def text_verdicts(results: Results) -> str:
    lines = verdicts(results) + (telemetry_verdicts(results) if telemetry_pairs(results) else [])
    width = max(len(target) for target, _, _ in lines)
    return "targets:\n" + "\n".join(
        f"  {verdict.upper():12} {target.ljust(width)}  {measured}" for target, measured, verdict in lines
    )


# ---------------------------------------------------------------- the chart

COLOURS = {"floor": "#9e9e9e", "anchor": "#4a78c2", "fast": "#2e9d57", "view": "#e08a2c"}
LEGEND = {
    "floor": "bare ASGI floor",
    "anchor": "official SDK / FastMCP",
    "fast": "mcp_django fast path",
    "view": "mcp_django Django view",
}


def svg_chart(results: Results) -> str:
    """Horizontal bars of calls/s (median, with the min–max range), one per measured row."""
    rows = [row for row in results.rows if row.samples and row.workload != "list-page"]
    label_width, bar_width, row_height, top = 520, 420, 22, 46
    width, height = label_width + bar_width + 90, top + row_height * len(rows) + 20
    scale = bar_width / max((row.high for row in rows), default=1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        ' font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="8" y="18" font-size="14" font-weight="bold">'
        f"calls per second, median over rounds ({escape(results.settings)})</text>",
    ]
    x = 8
    for family, text in LEGEND.items():
        parts.append(f'<rect x="{x}" y="28" width="10" height="10" fill="{COLOURS[family]}"/>')
        parts.append(f'<text x="{x + 14}" y="37">{escape(text)}</text>')
        x += 24 + 7 * len(text)
    for index, row in enumerate(rows):
        y = top + index * row_height
        colour = COLOURS.get(row.family, "#666")
        label = f"{row.label} — {row.workload_label}"
        parts.append(f'<text x="{label_width - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
        parts.append(
            f'<rect x="{label_width}" y="{y + 3}" width="{row.rate * scale:.1f}"'
            f' height="{row_height - 6}" fill="{colour}"/>'
        )
        low, high = label_width + row.low * scale, label_width + row.high * scale
        mid = y + row_height / 2
        parts.append(f'<line x1="{low:.1f}" y1="{mid}" x2="{high:.1f}" y2="{mid}" stroke="black" stroke-width="1"/>')
        parts.append(f'<text x="{label_width + row.high * scale + 6:.1f}" y="{y + 14}">{row.rate:,.0f}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------- docs/performance.md

READING = """\
## How to read the numbers

Every row was served side by side in one run, on the same machine, with the load generator on the same
two cores, and the rows were loaded in interleaved rounds (A B C, C B A), so a burst of noise from the
rest of the machine lands on every row alike. The figure to judge by is **CPU µs/call**: the user +
system CPU time the server's processes spent during a round (from `/proc/<pid>/stat`, read before and
after), divided by the calls it answered, median over the rounds. A load generator or another busy
process on the same cores slows the calls down, so calls/s move with the machine (the same harness gave
1.6× on a busy machine and 2.5× on a quiet one), but it does not make each call cost more CPU. Every
ratio and verdict below is a ratio of CPU per call within this run; calls/s and latency stand beside
them. `calls/s` is the median over the rounds, with the slowest and fastest round in brackets.
`p50`/`p99` are the median over the rounds of each round's latency percentiles, with 16 connections
kept busy (so latency includes the queueing of 16 concurrent callers) — except the `tools/list` row,
which walks the 100 pages of a 10,000-tool provider over one connection.

- **SDK's CPU ÷ this** divides the official SDK's CPU per call for the same era and the same kind of tool
  (an `async def` echo, or a plain `def` one, which the SDK runs on a worker thread as mcp_django does)
  by the row's: 2.00× means the row costs half the SDK's CPU. The handshake-era rows compare with the
  SDK's stateful server with a session, the 2026-07-28 rows with the SDK's 2026-07-28 answer; a token +
  audit row compares with the SDK's *anonymous* call. All run under the same uvicorn build.
- **× floor CPU** divides the row's CPU per call by the bare ASGI app's (a fixed JSON body, no MCP at
  all) under the same server: what the server itself costs per request.
- **load gen / others** are the shares of the machine (both cores, for the round's wall time) that the
  load generator and every other process took during the row's rounds (median): the load the numbers
  were taken under. The load average before and after the run is under "Machine".
- Every server answers JSON, not SSE (the SDK and FastMCP with `json_response=True`). `sync tool` rows
  call a plain `def` echo — how Django tools are mostly written — and `one ORM count()` a `def` tool that
  counts the rows of a one-row table; every other row calls an `async def` echo. A handshake-era row
  opens one session before the rounds and all 16 connections call on it; every request carries a
  JSON-RPC id of its own.
- The **Django view** rows serve the same endpoints through Django's request cycle with startproject's
  middleware: what `fast_path=False`, or a project that keeps Django's ASGI application, gets.
- **1 worker alone** and **2 workers** are two more processes of the fast path under uvicorn that serve
  nothing but the anonymous 2026-07-28 call, so they differ only in `--workers`. wrk runs on the same two
  cores and takes about one of them at these rates, so on a 2-core machine a second worker finds no idle
  core; that ratio (calls/s) means something with the load sent from another machine.
- The benchmark project's database is SQLite in WAL mode with `synchronous=NORMAL` (a deployment on
  SQLite would run that; production belongs on PostgreSQL): sessions and audit rows are written to it.
  Its connections persist (`CONN_MAX_AGE = 60`, `CONN_HEALTH_CHECKS = True`), as
  [deployment](deployment.md) tells a production site to run: the fast path's database threads keep
  their connection from one sync tool call to the next. With Django's default of 0 every sync tool call
  opens and closes one; in process, the one-`count()` tool cost 1,000–1,750 µs CPU per call that way
  against 250–320 µs with persistent connections (`bench_inprocess.py --cpu`, 2026-12-02).
- The **token + audit** rows send `Authorization: Bearer <DRF token>` to an endpoint with the audit sink,
  so every call is authenticated and leaves a committed audit row. The **PostgreSQL** rows serve the same
  endpoint from a throwaway cluster the harness starts for the run (`benchmarks/postgres.py`: Debian's
  `initdb`, a temporary directory, a free loopback port; never the system's cluster); the database
  server's CPU is its own process's, not the row's.
- **Memory per idle session** opens that many handshake sessions over HTTP (`initialize` +
  `notifications/initialized`) on a fresh process and divides the growth of its resident set (RSS) by
  the number of sessions.
- **The hot path in process** runs each workload in a loop in one process, with no server or socket, and
  reports the median over interleaved rounds of the CPU time (`time.process_time`) per call: a change of a
  few percent shows there even on a busy machine (`perf stat` cannot count instructions on this virtual
  machine; `bench_inprocess.py --once` serves callgrind where an exact count is wanted).
- The **ten no-op interceptors** row calls the 2026-07-28 echo through `TEN_NO_OPS` (4 validations,
  3 mutations, 3 sinks, each on both phases: 20 invocations a call) against the plain row;
  `benchmarks/bench_interceptors.py` measures the chain in process, kind by kind, and
  `benchmarks/README.md` gives its instruction counts.

Run it yourself with `make bench`; `BENCH_QUICK=1 make bench` runs one short round to check the harness
and writes to `.cache/bench/`; `BENCH_ROWS=fast-uvicorn,sdk-stateless/call-2026` runs only those rows;
`BENCH_SECTION=wsgi make bench` runs only the WSGI rows (gunicorn) and rewrites only their section;
`BENCH_SECTION=targets make bench` runs only the rows issue 40's ASGI targets name (the token + audit
calls on SQLite and PostgreSQL among them) and rewrites only their section;
`BENCH_SECTION=telemetry make bench` runs the telemetry rows and their plain rows and rewrites only the
telemetry section of this page (it says which run it comes from).
"""


def write(results: Results, output: Path) -> None:
    """Write the Markdown report to `output`, and the chart beside it (same name, `.svg`)."""
    chart = output.with_suffix(".svg")
    chart.write_text(svg_chart(results))
    info = results.machine
    lines = [
        "# Performance",
        "",
        "`make bench` serves mcp_django beside the official MCP SDK (`mcp` 2.3), FastMCP and a bare ASGI app,",
        "side by side on loopback, and loads each with the same workloads. This page is written by the last run;",
        "`benchmarks/` holds the harness.",
        "",
        f"Last run: {info.get('date', '?')} — {results.settings}; load from {info.get('load', '?')}.",
    ]
    if not results.fast_path:
        lines += [
            "",
            "**The fast path (`mcp_django.asgi`) was not built in this checkout:"
            " the fast-path rows are the Django view.**",
        ]
    lines += [
        "",
        READING,
        "## Results",
        "",
        markdown_table(HEADER, table_rows(results)),
        "",
        f"![calls per second]({chart.name})",
        "",
    ]
    lines += [
        "## Targets (issues 9 and 26)",
        "",
        markdown_table(["target", "measured", "verdict"], verdicts(results)),
        "",
    ]
    lines += kept_section(output) + kept_section(output, CATALOGUES_BEGIN, CATALOGUES_END)
    lines += kept_section(output, *KEPT_WSGI)  # rewritten by `BENCH_SECTION=wsgi`, and by a run that has its rows
    lines += kept_section(output, *KEPT_TARGETS)  # the same for `BENCH_SECTION=targets`
    if telemetry_pairs(results):
        lines += [telemetry_section(results), ""]
    if results.hot_path:
        lines += ["## The hot path in process (CPU time per call)", "", "```", results.hot_path, "```", ""]
    if results.memory:
        lines += ["## Memory per idle handshake session", ""]
        lines.append(
            markdown_table(
                ["server", "sessions opened", "RSS before", "RSS after", "per session"],
                [
                    [
                        m.label,
                        f"{m.sessions:,}",
                        f"{m.before_kib / 1024:,.1f} MiB",
                        f"{m.after_kib / 1024:,.1f} MiB",
                        f"{m.per_session_bytes / 1024:.2f} KB",
                    ]
                    for m in results.memory
                ],
            )
        )
        lines.append("")
    if results.group_commit:
        lines += ["## Audit group commit (micro benchmark)", "", "```", results.group_commit, "```", ""]
    lines += ["## Machine", ""]
    lines += [f"- **{key}**: {value}" for key, value in info.items()]
    lines.append("")
    output.write_text("\n".join(lines))
