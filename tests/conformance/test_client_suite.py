"""The official conformance suite's client scenarios against `MCPClient`, the code the gateway connects with.

`conformance client --command` starts a test server per scenario and runs `client_runner.py` against it,
which drives a real `SyncMCPClient` (no interceptors) through what the scenario asks. Each scenario runs
on its own at each revision it applies to, with the baseline `expected-failures-client.yml`: a listed
scenario may fail (each entry says why), and one that starts passing fails the run until its entry goes.
The OAuth scenarios (`auth/*`) of 2025-11-25 and 2026-07-28 run too, with the client's own OAuth flow
(`mcp_django.client.auth.oauth`), and three extension scenarios: client credentials with
`client_secret_basic` and `private_key_jwt`, and enterprise-managed authorization. Left out: `auth/dpop`
and `auth/dpop-nonce` (DPoP proofs, RFC 9449: the client has no DPoP), `auth/wif-jwt-bearer` (workload
identity federation: no workload token source), and the two `auth/2025-03-26-*` scenarios (that
revision's metadata fallbacks, from before protected resource metadata; the client negotiates 2025-06-18
and later when it authenticates).
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

AUTH_BOTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
AUTH_2026 = [
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
AUTH_EXTENSIONS = [
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
]
AUTH_RUNS = [
    *((name, version) for name in AUTH_BOTH for version in ("2025-11-25", "2026-07-28")),
    *((name, "2026-07-28") for name in AUTH_2026),
    *((name, None) for name in AUTH_EXTENSIONS),
]
"""The OAuth scenarios: those of 2025-11-25 and 2026-07-28 at each, and the extensions' (no revision of their own)."""


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


@pytest.mark.parametrize(
    ("scenario", "spec_version"),
    [pytest.param(*run, id=f"{run[0]}@{run[1] or 'extension'}") for run in [*RUNS, *AUTH_RUNS]],
)
def test_client_scenario_passes_with_only_the_expected_failures(
    scenario: str, spec_version: str | None, tmp_path: Path
) -> None:
    node_bin, binary = _suite()
    command = [
        str(binary),
        "client",
        "--command",
        f"{sys.executable} -m tests.conformance.client_runner",
        "--scenario",
        scenario,
        *(["--spec-version", spec_version] if spec_version else []),
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
            f"conformance client --scenario {scenario} --spec-version {spec_version or '-'} "
            f"exited {result.returncode}\n"
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


def test_every_oauth_scenario_of_2025_11_25_and_2026_07_28_is_run() -> None:
    node_bin, binary = _suite()
    listed = subprocess.run(
        [str(binary), "list", "--client"], env=_env(node_bin), capture_output=True, text=True, timeout=60, check=True
    ).stdout
    expected = set()
    for line in ANSI_COLOUR.sub("", listed).splitlines():
        name, _, versions = line.strip().removeprefix("- ").partition(" [")
        for version in versions.rstrip("]").split(","):
            if name.startswith("auth/") and version in ("2025-11-25", "2026-07-28"):
                expected.add((name, version))
    assert {(name, version) for name, version in AUTH_RUNS if version} == expected
    assert {name for name, _ in AUTH_RUNS} <= set(SCENARIOS), "client_runner.py has no handler for a scenario"
