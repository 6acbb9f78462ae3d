"""The official conformance suite's client scenarios against `MCPClient`, the code the gateway connects with.

`conformance client --command` starts a test server per scenario and runs `client_runner.py` against it,
which drives a real `SyncMCPClient` (no interceptors) through what the scenario asks. Each scenario runs
on its own at each revision it applies to, with the baseline `expected-failures-client.yml`: a listed
scenario may fail (each entry says why), and one that starts passing fails the run until its entry goes.
The OAuth scenarios (`auth/*`) and the extensions' are not run here yet (docs/client.md, Conformance).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.client_runner import SCENARIOS
from tests.conformance.test_official_suite import (
    ANSI_COLOUR,
    RUN_TIME_LIMIT,
    RUN_TIMEOUT_S,
    _failed_checks,
    _node_bin,
    _node_major,
    _suite_binary,
)
from tests.conftest import ROOT

pytestmark = [pytest.mark.live, pytest.mark.conformance, RUN_TIME_LIMIT]

HERE = Path(__file__).resolve().parent
SUITE_VERSION = "0.2.0-alpha.12"
BASELINE = HERE / "expected-failures-client.yml"

RUNS = [
    ("initialize", "2025-11-25"),
    ("tools_call", "2025-11-25"),
    ("tools_call", "2026-07-28"),
    ("sse-retry", "2025-11-25"),
    ("elicitation-sep1034-client-defaults", "2025-11-25"),
    ("json-schema-2020-12-preservation", "2025-11-25"),
    ("json-schema-2020-12-preservation", "2026-07-28"),
    ("json-schema-ref-no-deref", "2026-07-28"),
    ("request-metadata", "2026-07-28"),
    ("http-standard-headers", "2026-07-28"),
    ("http-custom-headers", "2026-07-28"),
    ("http-invalid-tool-headers", "2026-07-28"),
    ("sep-2322-client-request-state", "2026-07-28"),
]
"""Each non-OAuth client scenario of the suite (`conformance list --client`) at each revision it lists."""


def _suite() -> tuple[Path, Path]:
    node_bin, binary = _node_bin(), _suite_binary(SUITE_VERSION)
    major = _node_major(node_bin)
    if major is None or major < 22:
        pytest.skip(f"Node >= 22 not found in {node_bin} (found {major}); run `make test`, which installs it")
    if not binary.exists():
        pytest.skip(f"conformance suite {SUITE_VERSION} not installed at {binary}; run `make test`, which installs it")
    return node_bin, binary


def _env(node_bin: Path) -> dict[str, str]:
    path = f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": path, "PYTHONPATH": python_path, "NO_COLOR": "1"}


@pytest.mark.parametrize(("scenario", "spec_version"), [pytest.param(*run, id=f"{run[0]}@{run[1]}") for run in RUNS])
def test_client_scenario_passes_with_only_the_expected_failures(
    scenario: str, spec_version: str, tmp_path: Path
) -> None:
    node_bin, binary = _suite()
    command = [
        str(binary),
        "client",
        "--command",
        f"{sys.executable} -m tests.conformance.client_runner",
        "--scenario",
        scenario,
        "--spec-version",
        spec_version,
        "--expected-failures",
        str(BASELINE),
        "-o",
        str(tmp_path),
    ]
    result = subprocess.run(
        command, cwd=ROOT, env=_env(node_bin), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )
    output = ANSI_COLOUR.sub("", result.stdout)
    print(output[-4000:])
    if result.returncode != 0:
        failed = "\n".join(_failed_checks(tmp_path)) or "(no failing checks recorded)"
        pytest.fail(
            f"conformance client --scenario {scenario} --spec-version {spec_version} exited {result.returncode}\n"
            f"--- output ---\n{output[-6000:]}\n--- stderr (the runner's too) ---\n{result.stderr[-4000:]}\n"
            f"--- checks that did not pass ---\n{failed}",
            pytrace=False,
        )
    assert list(tmp_path.rglob("checks.json")), f"no checks recorded under {tmp_path}"


def test_every_client_scenario_of_the_suite_but_oauth_and_extensions_is_run() -> None:
    node_bin, binary = _suite()
    listed = subprocess.run(
        [str(binary), "list", "--client"], env=_env(node_bin), capture_output=True, text=True, timeout=60, check=True
    ).stdout
    expected = {}
    for line in ANSI_COLOUR.sub("", listed).splitlines():
        name, _, versions = line.strip().removeprefix("- ").partition(" [")
        if line.strip().startswith("- ") and not name.startswith("auth/") and "extension" not in versions:
            expected[name] = {version for version in versions.rstrip("]").split(",") if version >= "2025-11-25"}
    run = {scenario: {version for other, version in RUNS if other == scenario} for scenario, _ in RUNS}
    assert run == expected
    assert set(run) <= set(SCENARIOS), "client_runner.py has no handler for a scenario the test runs"
