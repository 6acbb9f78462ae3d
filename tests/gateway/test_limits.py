"""The bounds on what a remote server may send a gateway (issue 25: G-2, G-3, G-4, G-5, G-7, G-9, G-12).

Each test performs the attack for real: a hostile MCP server (tests/gateway/hostile_backend.py, raw
asyncio HTTP in a subprocess, or a stdio subprocess) in front of which the real gateway runs. The gzip
bomb and the endless SSE event go through the example project's `/gateway/mcp` served by daphne, whose
peak resident memory (`VmHWM` in /proc/<pid>/status) is measured; the others through gateway endpoints
served in process (tests/gateway/hostile_urls.py), or the connection itself where that is the level.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.test import AsyncClient

from mcp_django.client.connection import connect, pool
from mcp_django.endpoints import Endpoint, get_endpoint
from mcp_django.exceptions import BackendUnavailable
from mcp_django.gateway.extension import remote_sources
from mcp_django.gateway.models import RemoteDefinition
from tests.conftest import ROOT, LiveServer, serve_example
from tests.gateway.conftest import serve_module
from tests.gateway.hostile_backend import MODES
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = [
    pytest.mark.live,
    pytest.mark.urls("tests.gateway.hostile_urls"),
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("_hostile_gateways", "_close_the_pool"),
]

WAIT = 60.0
MiB = 1024 * 1024
RSS_CEILING_KB = 300 * 1024
GATEWAY_ADDRESS_SPACE = 3 * 1024 * MiB
"""The daphne gateway's address space cap: on a gateway without bounds the attacks end in a MemoryError
there, not in the machine's swap."""
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The hostile backend on a free loopback port; its base URL (`<base>/<mode>/mcp`, `<base>/stats`)."""
    with serve_module("tests.gateway.hostile_backend", tmp_path_factory.mktemp("hostile"), "/stats") as base:
        yield base


def stats(base: str) -> dict[str, Any]:
    """What the hostile backend did so far."""
    answer: dict[str, Any] = httpx2.get(f"{base}/stats", timeout=10).json()
    return answer


def stateless_call(method: str, params: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """The body and headers of one 2026-07-28 request."""
    field = NAME_FIELDS.get(method)
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    headers |= stateless_headers(method, params.get(field) if field else None)
    return json.dumps(stateless(method, params)).encode(), headers


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GATEWAY_ADDRESS_SPACE, GATEWAY_ADDRESS_SPACE))


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident memory (`VmHWM`), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")  # pragma: no cover


@pytest.fixture
def gateway_in_front_of(hostile: str, live_server_env: dict[str, str], tmp_path: Path) -> Any:
    """Serve the example project under daphne with its `/gateway/mcp` in front of one hostile mode."""

    def serve(mode: str) -> Any:
        env = {**live_server_env, "MCP_EXAMPLE_GATEWAY_BACKEND_URL": f"{hostile}/{mode}/mcp"}
        return serve_example(env, tmp_path, preexec_fn=_cap_address_space)

    return serve


def post(server: LiveServer, method: str, params: dict[str, Any]) -> httpx2.Response:
    body, headers = stateless_call(method, params)
    return httpx2.post(server.url("/gateway/mcp"), content=body, headers=headers, timeout=WAIT)


# -- through daphne: the process's memory is measured ---------------------------------------------


def test_g4_a_gzip_bomb_through_the_gateway_is_refused_as_it_inflates(gateway_in_front_of: Any) -> None:
    with gateway_in_front_of("bomb") as server:
        response = post(server, "tools/call", {"name": "bomb", "arguments": {}})
        peak = peak_rss_kb(server.process.pid)

    assert response.status_code == 200
    assert len(response.content) < 4096  # the caller gets an error, never the bomb
    error = response.json()["error"]
    assert error["code"] == -32603
    assert error["data"] == {"backend": "conformance", "reason": "limit"}
    assert "REMOTE_MAX_MESSAGE_BYTES" in error["message"]
    assert peak < RSS_CEILING_KB, f"the gateway's peak RSS was {peak // 1024} MB"


def test_g5_an_endless_event_on_the_listen_stream_is_cut_off_and_memory_stays_bounded(
    hostile: str, gateway_in_front_of: Any
) -> None:
    already = len([s for s in stats(hostile)["streams"] if s["start"].startswith("data:")])
    with gateway_in_front_of("endless-event") as server:
        # The first admitted caller makes the gateway listen to its remote, on the stream the attack uses.
        first = post(server, "tools/call", {"name": "echo", "arguments": {}})
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            listened = [s for s in stats(hostile)["streams"] if s["start"].startswith("data:")][already:]
            if sum(1 for s in listened if s["hung_up"] or s["done"]) >= 2:
                break
            time.sleep(0.2)
        after = post(server, "tools/call", {"name": "echo", "arguments": {}})
        peak = peak_rss_kb(server.process.pid)

    assert first.json()["result"]["content"] == [{"type": "text", "text": "called echo"}]
    ended = [s for s in listened if s["hung_up"] or s["done"]]
    assert len(ended) >= 2, listened  # cut off, and the gateway listens again afterwards
    assert all(s["hung_up"] for s in ended), ended
    assert all(s["written"] < 64 * MiB for s in ended), ended
    assert after.json()["result"]["content"] == [{"type": "text", "text": "called echo"}]
    assert peak < RSS_CEILING_KB, f"the gateway's peak RSS was {peak // 1024} MB"


# -- in process ------------------------------------------------------------------------------------


@pytest.fixture
def _hostile_gateways(settings: Any, hostile: str) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {f"hostile-{mode}": {"URL": f"{hostile}/{mode}/mcp", "READ_TIMEOUT": 20} for mode in MODES},
    }


@pytest.fixture
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def ended_stream(base: str, start: str, skip: int = 0) -> dict[str, Any]:
    """The first big stream of the hostile backend starting with `start` (after `skip` of them), once it ended."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = [s for s in stats(base)["streams"] if s["start"].startswith(start)][skip:]
        if found and (found[0]["hung_up"] or found[0]["done"]):
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no stream {start!r} ended within {WAIT:g}s")


async def send(mode: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One stateless request to the in-process gateway in front of `mode`; the JSON-RPC response."""
    body, headers = stateless_call(method, params or {})
    del headers["Content-Type"]
    response: Any = await asyncio.wait_for(
        AsyncClient().post(f"/{mode}/mcp", data=body, content_type="application/json", headers=headers), WAIT
    )
    assert response.status_code == 200, response.content[:500]
    answer: dict[str, Any] = json.loads(response.content)
    return answer


def limit_error(answer: dict[str, Any], mode: str, reason: str = "limit") -> str:
    """The message of `answer`'s -32603 error, asserting its data."""
    error = answer["error"]
    assert error["code"] == -32603, error
    assert error["data"] == {"backend": f"hostile-{mode}", "reason": reason}, error
    message: str = error["message"]
    return message


async def test_g3_a_300_mb_list_is_refused_after_the_first_megabytes(hostile: str) -> None:
    answer = await send("huge-list", "tools/list")

    assert "the answer to tools/list is over 4194304 bytes" in limit_error(answer, "huge-list")
    stream = ended_stream(hostile, '{"jsonrpc"')
    assert stream["hung_up"], stream
    assert stream["written"] < 64 * MiB, stream


async def test_g3_a_listing_of_endless_pages_is_held_to_the_same_bound(hostile: str) -> None:
    answer = await send("many-pages", "tools/list")

    message = limit_error(answer, "many-pages")
    assert message.endswith("tools/list has more than 4194304 bytes (REMOTE_MAX_MESSAGE_BYTES)")
    assert stats(hostile)["requests"]["many-pages tools/list"] <= 6


async def test_g2_tool_names_a_remote_makes_up_are_remembered_up_to_the_bound(settings: Any, hostile: str) -> None:
    # trusted: pinned, every listing's new names would be withheld as new (tests/gateway/test_pinning.py), and
    # what is bounded here is what the gateway remembers of the names it serves
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_MAX_LIST_ITEMS": 500, "REMOTE_DEFINITIONS": "trust"}
    for _round in range(10):  # 400 new names each time, every one with an x-mcp-header argument
        listed = await send("rotating-names", "tools/list")
        assert len(listed["result"]["tools"]) == 100  # the gateway's first page of the remote's 400
    called = await send("rotating-names", "tools/call", {"name": listed["result"]["tools"][0]["name"], "arguments": {}})

    endpoint = get_endpoint("gw-rotating-names")
    assert isinstance(endpoint, Endpoint)
    connection: Any = remote_sources(endpoint)[0].connection
    assert len(remote_sources(endpoint)[0].param_headers) <= 500
    assert len(connection._param_headers) <= 500
    assert called["result"]["content"][0]["text"].startswith("called t")


async def test_g2_new_names_a_pinned_remote_makes_up_are_kept_for_approval_up_to_the_bound(
    settings: Any, hostile: str
) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_MAX_LIST_ITEMS": 500, "REMOTE_DEFINITIONS": "pin"}
    first = await send("rotating-names", "tools/list")
    for _round in range(5):  # 400 new names each time: withheld, each waiting in a row for an admin
        listed = await send("rotating-names", "tools/list")
        assert listed["result"]["tools"] == []

    rows = RemoteDefinition.objects.filter(server="hostile-rotating-names", kind="tool")
    assert await rows.filter(state="pinned").acount() == 400  # the first listing, as the admin saw it
    assert await rows.filter(state="new").acount() == 500  # of 2,000 new names: the newest 500
    assert len(first["result"]["tools"]) == 100  # the gateway's first page of the pinned 400


async def test_g12_endless_input_required_without_questions_ends_after_the_rounds_allowed(hostile: str) -> None:
    before = stats(hostile)["requests"].get("endless-input tools/call", 0)

    answer = await send("endless-input", "tools/call", {"name": "ask", "arguments": {}})

    message = limit_error(answer, "endless-input")
    assert message.endswith("tools/call still asks for input after 10 rounds (REMOTE_MAX_INPUT_ROUNDS)")
    assert stats(hostile)["requests"]["endless-input tools/call"] - before == 10


async def test_g12_a_forwarded_call_ends_at_remote_call_timeout(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_MAX_INPUT_ROUNDS": 10**9, "REMOTE_CALL_TIMEOUT": 1}
    started = time.monotonic()

    answer = await send("endless-input", "tools/call", {"name": "ask", "arguments": {}})

    assert limit_error(answer, "endless-input", "timeout").endswith(
        "tools/call did not finish within 1s (REMOTE_CALL_TIMEOUT)"
    )
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("mode", ["broken-json", "broken-json-sse"])
async def test_g7_broken_json_from_the_remote_is_a_protocol_error_not_the_callers_parse_error(mode: str) -> None:
    answer = await send(mode, "tools/call", {"name": "echo", "arguments": {}})

    message = limit_error(answer, mode, "protocol")
    assert message.startswith(f"Backend 'hostile-{mode}' unavailable: ")


async def test_g9_hostile_tool_names_and_descriptions_do_not_pass_unchanged() -> None:
    answer = await send("hostile-names", "tools/list")

    tools = {tool["name"]: tool for tool in answer["result"]["tools"]}
    assert sorted(tools) == ["good", "long", "painted"]
    assert tools["good"]["description"] == "Fine.\nOn two lines."  # the first of the duplicates
    assert tools["painted"]["description"] == "red evil tag nul bell"
    assert len(tools["long"]["description"]) == 8192
    assert tools["long"]["description"].endswith("y…")
    assert tools["long"]["title"] == "A title"


# -- stdio: the connection itself ----------------------------------------------------------------------


def _stdio(mode: str) -> dict[str, Any]:
    return {
        "COMMAND": [sys.executable, "-m", "tests.gateway.hostile_backend", "stdio", mode],
        "CWD": str(ROOT),
        "READ_TIMEOUT": 30,
        "CONNECT_TIMEOUT": 30,
    }


async def test_g3_a_stdio_line_past_the_bound_fails_the_call_at_once() -> None:
    connection = connect(_stdio("huge-line"))
    await connection.request("tools/list")
    started = time.monotonic()

    with pytest.raises(BackendUnavailable) as refused:
        await asyncio.wait_for(connection.request("tools/call", {"name": "echo", "arguments": {}}), WAIT)

    assert refused.value.reason == "limit"
    assert str(refused.value).endswith("a message over 4194304 bytes (REMOTE_MAX_MESSAGE_BYTES)")
    assert time.monotonic() - started < 25  # not the read timeout


async def test_g7_a_stdio_server_printing_a_line_that_is_not_json_still_answers() -> None:
    connection = connect(_stdio("stray-print"))

    called = await asyncio.wait_for(connection.request("tools/call", {"name": "echo", "arguments": {}}), WAIT)
    again = await asyncio.wait_for(connection.request("tools/call", {"name": "echo", "arguments": {}}), WAIT)

    assert called["content"] == again["content"] == [{"type": "text", "text": "called"}]
