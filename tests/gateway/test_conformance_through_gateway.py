"""The official conformance suite through the example project's gateways, in front of a second daphne.

`/gateway/mcp` of one server fronts `/conformance/mcp` of another; `/gateway/chain/mcp` fronts that
gateway in turn. Each run has a baseline of its own in tests/conformance (`expected-failures-gateway-*`),
which would list, with the reason, every scenario a gateway cannot forward.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.test_official_suite import (
    RUN_TIME_LIMIT,
    RUNS,
    TASK_SCENARIOS,
    SuiteRun,
    assert_suite_passes,
)
from tests.gateway.conftest import GatewayServers

pytestmark = [pytest.mark.live, pytest.mark.conformance, RUN_TIME_LIMIT]

GATEWAY = "/gateway/mcp"
CHAIN = "/gateway/chain/mcp"
TARGETS = [
    pytest.param("0.1.16", GATEWAY, id="0.1.16-gateway"),
    pytest.param("2025-11-25", GATEWAY, id="2025-11-25-gateway"),
    pytest.param("2026-07-28", GATEWAY, id="2026-07-28-gateway"),
    pytest.param("0.1.16", CHAIN, id="0.1.16-chain"),
    pytest.param("2026-07-28", CHAIN, id="2026-07-28-chain"),
    pytest.param("2026-07-28-pending", CHAIN, id="2026-07-28-pending-chain"),
]


@pytest.mark.parametrize(("run_name", "path"), TARGETS)
def test_the_conformance_suite_passes_through_the_gateway_with_only_the_expected_failures(
    run_name: str, path: str, gateway_servers: GatewayServers, tmp_path: Path
) -> None:
    direct = RUNS[run_name]
    run = SuiteRun(direct.version, direct.args, f"expected-failures-gateway-{run_name}.yml")
    logs = (
        f"--- gateway log ---\n{gateway_servers.front.log_tail()}\n"
        f"--- backend log ---\n{gateway_servers.back.log_tail()}"
    )
    assert_suite_passes(run, gateway_servers.front.url(path), tmp_path, logs)


@pytest.mark.parametrize("path", [GATEWAY, CHAIN], ids=["gateway", "chain"])
@pytest.mark.parametrize("scenario", TASK_SCENARIOS)
def test_every_tasks_scenario_passes_through_the_gateway(
    scenario: str, path: str, gateway_servers: GatewayServers, tmp_path: Path
) -> None:
    # The remote's tasks, under the gateway's handles: tasks/get, /update and /cancel reach the task's server.
    run = SuiteRun("0.2.0-alpha.12", ("--scenario", scenario), "expected-failures-gateway-tasks.yml")
    logs = (
        f"--- gateway log ---\n{gateway_servers.front.log_tail()}\n"
        f"--- backend log ---\n{gateway_servers.back.log_tail()}"
    )
    assert_suite_passes(run, gateway_servers.front.url(path), tmp_path, logs)
