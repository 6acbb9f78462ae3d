"""What `make demo` prints about machine clients and enterprise sign-in, run as printed against the served demo.

The example project served as `make demo` serves it (with `MCP_EXAMPLE_DEMO_IDP_KEY` set: it trusts the demo
identity provider, example_project/demo/idp.py) on a database of its own. The test takes the `curl` lines
from the Makefile's printout (`make -n demo`, for this server's port), runs them in bash, and calls tools
with the tokens they get.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.conftest import ROOT, LiveServer, _database_env, fresh_database, serve_example
from tests.live.test_oauth_live import call_tool

pytestmark = pytest.mark.live

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.fixture(scope="module")
def demo_env(seeded_database: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment `make demo` serves in: a seeded database and a key file for the demo identity provider."""
    directory = tmp_path_factory.mktemp("demo-idp")
    env = _database_env(fresh_database(seeded_database, directory))
    return {**env, "MCP_EXAMPLE_DEMO_IDP_KEY": str(directory / "demo-idp-key.pem")}


@pytest.fixture(scope="module")
def demo(demo_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve_example(demo_env, tmp_path_factory.mktemp("demo-idp-log")) as server:
        yield server


def printout(server: LiveServer) -> list[str]:
    """The lines `make demo` prints for this server's host and port (the echo lines of `make -n`, run by bash)."""
    host, port = server.base_url.removeprefix("http://").split(":")
    env = {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    recipe = subprocess.run(
        ["make", "-n", "-s", "demo", f"DEMO_HOST={host}", f"DEMO_PORT={port}", f"VENV_PY={sys.executable}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    echoes = "\n".join(line for line in recipe.splitlines() if line.startswith("echo "))
    shown = subprocess.run(["bash", "-c", echoes], capture_output=True, text=True, check=True, timeout=60).stdout
    return [line.strip() for line in shown.splitlines()]


def run(env: dict[str, str], *lines: str) -> list[dict[str, Any]]:
    """The JSON documents `lines` print, run one after the other in bash in the repository."""
    result = subprocess.run(
        ["bash", "-e", "-c", "\n".join(lines)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    decoder, out, answers = json.JSONDecoder(), result.stdout.strip(), []
    while out:  # curl ends none of them with a newline
        answer, end = decoder.raw_decode(out)
        answers.append(answer)
        out = out[end:].strip()
    return answers


async def test_the_demos_authorization_server_metadata_lists_client_credentials_and_the_jwt_bearer_grant(
    demo: LiveServer,
) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        metadata = (await http.get(demo.url("/.well-known/oauth-authorization-server"))).json()

    assert {"client_credentials", JWT_BEARER} <= set(metadata["grant_types_supported"]), metadata


async def test_the_printed_client_credentials_curl_gets_a_token_that_calls_a_team_tool_as_ci_bot(
    demo: LiveServer, demo_env: dict[str, str]
) -> None:
    curl = [line for line in printout(demo) if line.startswith("curl ") and "client_credentials" in line]
    assert len(curl) == 1, printout(demo)

    [issued] = run(demo_env, *curl)

    assert issued["scope"] == "mcp:team", issued
    answer = await call_tool(demo, issued["access_token"], "reindex_catalogue", {"steps": 2})
    assert answer["result"]["content"][0]["text"] == "Reindexed the catalogue in 2 batches.", answer


async def test_the_printed_id_jag_flow_gets_a_token_that_calls_a_tool_only_alice_may_call(
    demo: LiveServer, demo_env: dict[str, str]
) -> None:
    shown = printout(demo)
    flow = [line for line in shown if line.startswith("ID_JAG=") or (line.startswith("curl ") and JWT_BEARER in line)]
    assert [line.split("=", 1)[0].split()[0] for line in flow] == ["ID_JAG", "curl"], shown

    issued, replayed = run(demo_env, *flow, flow[1])  # the same ID-JAG twice: its jti is accepted once

    assert issued["scope"] == "mcp:user", issued  # the IdP allows every scope; alice's own scope caps them
    assert replayed["error"] == "invalid_grant", replayed
    answer = await call_tool(demo, issued["access_token"], "curate_book", {"book_id": 1, "summary": "Spice."})
    assert answer["result"]["content"][0]["text"] == "The summary of book #1 is rewritten.", answer


async def test_an_id_jag_of_the_demo_provider_for_bob_reaches_the_team_tools_and_not_alices(
    demo: LiveServer, demo_env: dict[str, str]
) -> None:
    flow = [
        f"ID_JAG=$({sys.executable} manage.py demo_id_jag bob --base-url {demo.base_url})",
        f"curl -s -u demo-machine:demo-machine-secret -d grant_type={JWT_BEARER} -d assertion=$ID_JAG "
        f"{demo.url('/oauth/token/')}",
    ]

    [issued] = run(demo_env, *flow)

    assert issued["scope"] == "mcp:user mcp:team", issued
    team = await call_tool(demo, issued["access_token"], "reindex_catalogue", {"steps": 1})
    curate = await call_tool(demo, issued["access_token"], "curate_book", {"book_id": 1, "summary": "Spice."})
    assert team["result"]["content"][0]["text"] == "Reindexed the catalogue in 1 batches.", team
    assert curate["error"]["message"] == "Unknown tool: curate_book", curate  # bob is no curator
