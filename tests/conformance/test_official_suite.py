"""The official MCP conformance suite against the example project's fixture server at ``/conformance/mcp``.

``/conformance/mcp`` is served by the ASGI fast path; the 2025-11-25 and 2026-07-28 runs also go to
``/conformance/view/mcp``, the same fixture mounted with ``fast_path=False``, so the Django view (and the
project's middleware) keeps a leg of its own.

Each run passes ``--expected-failures`` with a baseline file beside this module: a scenario listed there
may fail (each entry says which later issue it waits for), and one that starts passing makes the run fail
until its entry is removed. The suite needs Node 22; ``make test`` installs it and the two suite versions
into ``.cache/`` and points ``MCP_TEST_NODE_BIN`` / ``MCP_TEST_CONFORMANCE_DIR`` at them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, LiveServer

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT_S = 600
RUN_TIME_LIMIT = pytest.mark.timeout(RUN_TIMEOUT_S + 60)
"""A suite run's test may take as long as the run is given, and the setup of the server it talks to."""

pytestmark = [pytest.mark.live, pytest.mark.conformance, RUN_TIME_LIMIT]
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
RESULTS_DIR_NAME = re.compile(r"^server-(?P<scenario>.+?)-\d{4}-\d{2}-\d{2}T")


@dataclass(frozen=True)
class SuiteRun:
    """One invocation of ``conformance server``: which suite version, which flags, which baseline."""

    version: str
    args: tuple[str, ...]
    baseline: str


RUNS = {
    # The handshake era (2025-06-18 / 2025-11-25 wire), default active suite.
    "0.1.16": SuiteRun("0.1.16", (), "expected-failures-0.1.16.yml"),
    "2025-11-25": SuiteRun("0.2.0-alpha.12", ("--requirements", "2025-11-25"), "expected-failures-2025-11-25.yml"),
    "2026-07-28": SuiteRun("0.2.0-alpha.12", ("--requirements", "2026-07-28"), "expected-failures-2026-07-28.yml"),
    # Scenarios not yet scored by any revision; the design asks for them to pass too.
    "0.1.16-pending": SuiteRun("0.1.16", ("--suite", "pending"), "expected-failures-0.1.16-pending.yml"),
    "2026-07-28-pending": SuiteRun(
        "0.2.0-alpha.12",
        ("--suite", "pending", "--spec-version", "2026-07-28"),
        "expected-failures-2026-07-28-pending.yml",
    ),
}


def _node_bin() -> Path:
    configured = os.environ.get("MCP_TEST_NODE_BIN")
    return Path(configured) if configured else ROOT / ".cache" / "node22" / "node_modules" / ".bin"


def _suite_binary(version: str) -> Path:
    configured = os.environ.get("MCP_TEST_CONFORMANCE_DIR")
    cache = Path(configured) if configured else ROOT / ".cache"
    return cache / f"conformance-{version}" / "node_modules" / ".bin" / "conformance"


def _node_major(node_bin: Path) -> int | None:
    node = shutil.which("node", path=str(node_bin))
    if node is None:
        return None
    output = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    try:
        return int(output.lstrip("v").split(".")[0])
    except ValueError:
        return None


def _failed_checks(results_dir: Path) -> list[str]:
    """Every check that did not pass, as ``scenario: check-id STATUS: errorMessage`` lines."""
    lines = []
    for checks_file in sorted(results_dir.rglob("checks.json")):
        named = RESULTS_DIR_NAME.match(checks_file.parent.name)
        scenario = named["scenario"] if named else checks_file.parent.name
        try:
            checks = json.loads(checks_file.read_text())
        except (OSError, ValueError):
            continue
        for check in checks if isinstance(checks, list) else []:
            if check.get("status") in {"FAILURE", "WARNING"}:
                message = check.get("errorMessage") or check.get("description", "")
                lines.append(f"{scenario}: {check.get('id')} {check['status']}: {message}")
    return lines


def run_suite(run: SuiteRun, url: str, output_dir: Path) -> subprocess.CompletedProcess[str]:
    """Run the suite against ``url``; skip the test when Node 22 or the suite is not installed."""
    node_bin = _node_bin()
    binary = _suite_binary(run.version)
    major = _node_major(node_bin)
    if major is None or major < 22:
        pytest.skip(f"Node >= 22 not found in {node_bin} (found {major}); run `make test`, which installs it")
    if not binary.exists():
        pytest.skip(f"conformance suite {run.version} not installed at {binary}; run `make test`, which installs it")
    env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    command = [
        str(binary),
        "server",
        "--url",
        url,
        *run.args,
        "--expected-failures",
        str(HERE / run.baseline),
        "-o",
        str(output_dir),
    ]
    return subprocess.run(
        command, cwd=output_dir, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )


FAST_PATH = "/conformance/mcp"
VIEW = "/conformance/view/mcp"
TARGETS = [
    *(pytest.param(name, FAST_PATH, id=name) for name in RUNS),
    *(pytest.param(name, VIEW, id=f"{name}-view") for name in ("2025-11-25", "2026-07-28")),
]


@pytest.mark.parametrize(("run_name", "path"), TARGETS)
def test_official_conformance_suite_passes_with_only_the_expected_failures(
    run_name: str, path: str, example_server: LiveServer, tmp_path: Path
) -> None:
    run = RUNS[run_name]
    assert_suite_passes(run, example_server.url(path), tmp_path, f"--- server log ---\n{example_server.log_tail()}")


def assert_suite_passes(run: SuiteRun, url: str, output_dir: Path, logs: str) -> None:
    """Run the suite against `url`; fail with its summary, the checks that did not pass and `logs` unless it passes."""
    result = run_suite(run, url, output_dir)
    output = ANSI_COLOUR.sub("", result.stdout)
    summary = output[output.find("=== SUMMARY ===") :] if "=== SUMMARY ===" in output else ""
    print(summary or output[-4000:])
    if result.returncode != 0:
        failed = "\n".join(_failed_checks(output_dir)) or "(no failing checks recorded)"
        pytest.fail(
            f"conformance {run.version} {' '.join(run.args)} against {url} exited {result.returncode}\n"
            f"--- summary ---\n{summary or output[-6000:]}\n"
            f"--- stderr ---\n{result.stderr[-3000:]}\n"
            f"--- checks that did not pass ---\n{failed}\n"
            f"{logs}",
            pytrace=False,
        )


TASK_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
"""Every `tasks-*` scenario of 0.2.0-alpha.12 (`conformance list --server`); `--requirements 2026-07-28`
runs them unscored, so each runs here on its own, where a failing check fails the run."""


@pytest.mark.parametrize("path", [FAST_PATH, VIEW], ids=["fast-path", "view"])
@pytest.mark.parametrize("scenario", TASK_SCENARIOS)
def test_tasks_extension_scenario_passes(scenario: str, path: str, example_server: LiveServer, tmp_path: Path) -> None:
    run = SuiteRun("0.2.0-alpha.12", ("--scenario", scenario), "expected-failures-tasks.yml")
    assert_suite_passes(run, example_server.url(path), tmp_path, f"--- server log ---\n{example_server.log_tail()}")


SKILL_SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")
"""Every `sep-2640-skills-*` scenario of 0.2.0-alpha.12 (`conformance list --server`): extension scenarios,
run at 2026-07-28 (the revision the Skills extension is written against), each on its own like the tasks'."""


@pytest.mark.parametrize("path", [FAST_PATH, VIEW], ids=["fast-path", "view"])
@pytest.mark.parametrize("scenario", SKILL_SCENARIOS)
def test_skills_extension_scenario_passes(scenario: str, path: str, example_server: LiveServer, tmp_path: Path) -> None:
    run = SuiteRun("0.2.0-alpha.12", ("--scenario", scenario), "expected-failures-skills.yml")
    assert_suite_passes(run, example_server.url(path), tmp_path, f"--- server log ---\n{example_server.log_tail()}")
    checks = [check for found in sorted(tmp_path.rglob("checks.json")) for check in json.loads(found.read_text())]
    skipped = [f"{check['id']}: {check.get('errorMessage')}" for check in checks if check.get("status") == "SKIPPED"]
    assert checks, f"no checks recorded under {tmp_path}"
    assert skipped == [], "a skipped check proves nothing: the fixture must serve what each one needs"
