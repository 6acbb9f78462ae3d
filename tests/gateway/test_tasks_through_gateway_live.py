"""A remote server's tasks through the example project's gateway, as each caller sees them (gateway.tasks).

The remote (`back`'s `/conformance/mcp`) knows one caller, the gateway; the gateway tells its own callers
apart. A task's handle works for the caller who started it, on the endpoint that gave it out, and for
nobody else: another user, an anonymous caller, and a forged or altered handle all get "unknown task".
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import pytest

from tests.gateway.conftest import GatewayServers
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = pytest.mark.live

TASKS = "io.modelcontextprotocol/tasks"
DECLARES_TASKS: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


def send(
    servers: GatewayServers, method: str, params: dict[str, Any], *, user: str | None, name: str | None = None
) -> dict[str, Any]:
    """One 2026-07-28 request to the front's /gateway/mcp declaring the tasks extension; the JSON-RPC answer."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", **stateless_headers(method, name)}
    if user is not None:
        headers["Authorization"] = f"Bearer {servers.front.tokens[user]}"
    body = json.dumps(stateless(method, params, meta=DECLARES_TASKS))
    response = httpx2.post(servers.front.url("/gateway/mcp"), content=body, headers=headers, timeout=30)
    assert response.status_code in (200, 400), response.text
    answer: dict[str, Any] = response.json()
    return answer


def start_task(servers: GatewayServers, user: str | None) -> str:
    answer = send(
        servers,
        "tools/call",
        {"name": "slow_compute", "arguments": {"seconds": 30, "label": "through the gateway"}},
        user=user,
        name="slow_compute",
    )
    assert answer["result"]["resultType"] == "task", answer
    handle: str = answer["result"]["taskId"]
    return handle


def get_task(servers: GatewayServers, handle: str, user: str | None) -> dict[str, Any]:
    return send(servers, "tasks/get", {"taskId": handle}, user=user, name=handle)


def test_the_caller_who_started_a_remote_task_polls_and_cancels_it_through_the_gateway(
    gateway_servers: GatewayServers,
) -> None:
    handle = start_task(gateway_servers, "alice")

    first, again = get_task(gateway_servers, handle, "alice"), get_task(gateway_servers, handle, "alice")
    cancelled = send(gateway_servers, "tasks/cancel", {"taskId": handle}, user="alice", name=handle)

    assert first["result"]["taskId"] == again["result"]["taskId"] == handle  # one task keeps one handle
    assert first["result"]["status"] in ("working", "completed")
    assert cancelled["result"]["resultType"] == "complete"
    assert not {"taskId", "status", "result", "error"} & set(cancelled["result"])  # an ack, no envelope
    deadline = time.monotonic() + 20
    while get_task(gateway_servers, handle, "alice")["result"]["status"] != "cancelled":
        assert time.monotonic() < deadline, "the remote task never settled to cancelled"
        time.sleep(0.2)


@pytest.mark.parametrize("intruder", ["bob", None], ids=["another-user", "anonymous"])
def test_another_caller_cannot_read_or_cancel_a_task_started_through_the_gateway(
    gateway_servers: GatewayServers, intruder: str | None
) -> None:
    handle = start_task(gateway_servers, "alice")

    read = get_task(gateway_servers, handle, intruder)
    cancel = send(gateway_servers, "tasks/cancel", {"taskId": handle}, user=intruder, name=handle)

    for answer in (read, cancel):
        assert answer["error"]["code"] == -32602
        assert answer["error"]["message"] == f"Unknown task: {handle}"
    assert get_task(gateway_servers, handle, "alice")["result"]["status"] == "working"  # untouched
    send(gateway_servers, "tasks/cancel", {"taskId": handle}, user="alice", name=handle)


def test_a_forged_or_altered_task_handle_is_an_unknown_task(gateway_servers: GatewayServers) -> None:
    handle = start_task(gateway_servers, "alice")
    value, _, signature = handle.rpartition(":")
    altered = f"{value}:{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"

    answers = {forged: get_task(gateway_servers, forged, "alice") for forged in (altered, "not-a-handle")}

    for forged, answer in answers.items():
        assert answer["error"]["code"] == -32602, answer
        assert answer["error"]["message"] == f"Unknown task: {forged}"
    send(gateway_servers, "tasks/cancel", {"taskId": handle}, user="alice", name=handle)
