"""What `MCPClient`'s connection does with what a server says, in memory: the fixes the official client
scenarios asked for (tests/conformance/test_client_suite.py runs the scenarios themselves)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_django.client.config import ServerConfig
from mcp_django.client.http import HTTPConnection
from mcp_django.client.remote import RemoteConnection
from mcp_django.exceptions import RemoteError
from mcp_django.protocol.jsonrpc import Message
from mcp_django.protocol.meta import param_header_error

Answer = Callable[[Message], dict[str, Any]]


class InProcessConnection(RemoteConnection):
    """A `RemoteConnection` whose transport is a function: each request goes to `answer`, which is the server."""

    def __init__(self, server: ServerConfig, answer: Answer) -> None:
        super().__init__(server)
        self.answer = answer
        self.sent: list[Message] = []

    async def _start(self) -> None:
        return None

    async def _stop(self) -> None:
        return None

    async def _round_trip(self, request: Message, on_notification: Any) -> Message:
        self.sent.append(request)
        return {"jsonrpc": "2.0", "id": request["id"], **self.answer(request)}

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        return None

    async def _listen(self) -> bool:
        return False


def refusing_the_first(supported: list[str]) -> Answer:
    """A stateless server that refuses the first request's version (-32022, listing `supported`), then answers."""
    refused: list[bool] = []

    def answer(request: Message) -> dict[str, Any]:
        if not refused:
            refused.append(True)
            data = {"supported": supported, "requested": "2026-07-28"}
            return {"error": {"code": -32022, "message": "Unsupported protocol version", "data": data}}
        if request["method"] == "server/discover":
            return {"result": {"supportedVersions": supported, "capabilities": {"tools": {}}}}
        return {"result": {"tools": []}}

    return answer


def versions_sent(connection: InProcessConnection) -> list[tuple[str, str]]:
    return [(m["method"], m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]) for m in connection.sent]


@pytest.mark.parametrize("pinned", [None, "2026-07-28"])
async def test_a_version_refused_with_32022_is_sent_again_in_the_newest_both_sides_list(pinned: str | None) -> None:
    server = ServerConfig(name="negotiating", url="http://negotiating.invalid/mcp", protocol_version=pinned)
    connection = InProcessConnection(server, refusing_the_first(["2026-07-28"]))

    listed = await connection.request("tools/list")

    assert listed == {"tools": []}
    assert versions_sent(connection) == [
        ("server/discover", "2026-07-28"),
        ("server/discover", "2026-07-28"),
        ("tools/list", "2026-07-28"),
    ]
    assert connection.sent[0]["id"] != connection.sent[1]["id"]


async def test_a_refusal_listing_no_version_we_speak_is_raised_not_retried() -> None:
    server = ServerConfig(name="too-new", url="http://too-new.invalid/mcp", protocol_version="2026-07-28")
    connection = InProcessConnection(server, refusing_the_first(["2099-01-01"]))

    with pytest.raises(RemoteError) as raised:
        await connection.request("tools/list")

    assert raised.value.code == -32022
    assert versions_sent(connection) == [("server/discover", "2026-07-28")]


async def test_a_request_refused_after_the_handshake_is_retried_once_in_the_version_agreed() -> None:
    answers: Iterator[dict[str, Any]] = iter(
        [
            {"result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}},
            {
                "error": {
                    "code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"]},
                }
            },
            {"result": {"tools": [{"name": "t"}]}},
        ]
    )
    server = ServerConfig(name="flaky", url="http://flaky.invalid/mcp", protocol_version="2026-07-28")
    connection = InProcessConnection(server, lambda request: next(answers))

    listed = await connection.request("tools/list")

    assert listed == {"tools": [{"name": "t"}]}
    assert [message["method"] for message in connection.sent] == ["server/discover", "tools/list", "tools/list"]
    assert len({message["id"] for message in connection.sent}) == 3


async def test_the_client_introduces_itself_as_mcp_django_in_both_eras() -> None:
    answers = {
        "server/discover": {"result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}},
        "initialize": {"result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}},
    }
    stateless, handshake = (
        InProcessConnection(
            ServerConfig(name="s", url="http://s.invalid/mcp", protocol_version=version),
            lambda request: answers.get(request["method"], {"result": {"tools": []}}),
        )
        for version in ("2026-07-28", "2025-11-25")
    )

    await stateless.request("tools/list")
    await handshake.request("tools/list")

    assert stateless.sent[0]["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-django"
    assert handshake.sent[0]["method"] == "initialize"
    assert handshake.sent[0]["params"]["clientInfo"]["name"] == "mcp-django"


def test_request_ids_are_never_reused_by_another_connection_to_the_same_server() -> None:
    # SyncMCPClient opens a connection per call: a retry on a fresh one must not reuse the first call's id.
    server = ServerConfig(name="stateless", url="http://stateless.invalid/mcp")
    first, second = InProcessConnection(server, dict), InProcessConnection(server, dict)

    ids = [first.next_id(), second.next_id(), first.next_id(), second.next_id()]

    assert len(set(ids)) == 4


def _tool(name: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


@pytest.mark.parametrize("suffix", ["", "My Region", "Region:A", "Région", "A\t1", 7])
def test_an_x_mcp_header_that_is_no_header_name_is_named(suffix: Any) -> None:
    schema = _tool("t", value={"type": "string", "x-mcp-header": suffix})["inputSchema"]

    assert param_header_error(schema) == f"x-mcp-header {suffix!r} of 'value' is not a header name"


def test_an_x_mcp_header_used_twice_whatever_the_case_is_named() -> None:
    schema = _tool(
        "t", a={"type": "string", "x-mcp-header": "MyField"}, b={"type": "string", "x-mcp-header": "myfield"}
    )["inputSchema"]

    assert param_header_error(schema) == "x-mcp-header 'myfield' of 'b' is used twice"


@pytest.mark.parametrize("kind", ["object", "array", "null", "number"])
def test_an_x_mcp_header_on_an_argument_not_string_integer_or_boolean_is_named(kind: str) -> None:
    schema = _tool("t", v={"type": kind, "x-mcp-header": "V"})["inputSchema"]

    assert param_header_error(schema) == "x-mcp-header on 'v', whose type is not string, integer or boolean"


def test_string_integer_and_boolean_arguments_may_be_mirrored_in_headers() -> None:
    schema = _tool(
        "t",
        region={"type": "string", "x-mcp-header": "Region"},
        priority={"type": "integer", "x-mcp-header": "Priority"},
        verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        query={"type": "string"},
    )["inputSchema"]

    assert param_header_error(schema) is None
    assert param_header_error({"type": "object"}) is None


def test_a_listing_leaves_out_the_tools_whose_header_annotations_are_invalid(caplog: pytest.LogCaptureFixture) -> None:
    connection = HTTPConnection(ServerConfig(name="listing", url="http://listing.invalid/mcp"))
    result = {
        "tools": [
            _tool("valid_tool", region={"type": "string", "x-mcp-header": "Region"}),
            _tool("invalid_empty_header", value={"type": "string", "x-mcp-header": ""}),
            _tool("plain", query={"type": "string"}),
        ]
    }

    connection._learn_param_headers(result)

    assert [tool["name"] for tool in result["tools"]] == ["valid_tool", "plain"]
    assert connection._param_headers == {"valid_tool": {"region": "Region"}}
    left_out = [record for record in caplog.records if "left out" in record.getMessage()]
    assert [record.getMessage().split(" left out:")[0] for record in left_out] == [
        "Remote MCP server 'listing' lists tool 'invalid_empty_header',"
    ]
    assert left_out[0].name == "mcp_django.client"  # the client's own logger, gateway or not
