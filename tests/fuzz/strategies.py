"""What the fuzz tests send: arbitrary JSON values, JSON-RPC-shaped messages with arbitrary parts, headers and bodies,
and the check every reply must pass."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from mcp_django.protocol.features import METHODS
from mcp_django.protocol.jsonrpc import request_id_of
from mcp_django.protocol.versions import SUPPORTED_VERSIONS

VERSIONS = sorted(SUPPORTED_VERSIONS)
STATELESS = "2026-07-28"

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=16,
)
"""Any JSON value (what `json.loads` can return)."""

ids = st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=12) | json_values
methods = st.sampled_from(sorted(METHODS)) | st.sampled_from(["notifications/initialized", "ping", "x/y"]) | json_values


def meta(tool_names: list[str]) -> st.SearchStrategy[Any]:
    """A `_meta` that is mostly a 2026-07-28 request's, with arbitrary members."""
    return (
        st.fixed_dictionaries(
            {},
            optional={
                "io.modelcontextprotocol/protocolVersion": st.sampled_from(VERSIONS) | json_values,
                "io.modelcontextprotocol/clientCapabilities": st.just({}) | json_values,
                "io.modelcontextprotocol/clientInfo": st.just({"name": "fuzz", "version": "1"}) | json_values,
                "progressToken": ids,
                "io.modelcontextprotocol/requestState": json_values,
            },
        )
        | json_values
    )


def params(tool_names: list[str]) -> st.SearchStrategy[Any]:
    """Params with the members MCP methods read, each arbitrary or plausible."""
    return (
        st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(tool_names) | json_values,
                "arguments": json_values,
                "uri": st.sampled_from(["test://greeting", "demo://x/{id}"]) | json_values,
                "cursor": json_values,
                "protocolVersion": st.sampled_from(VERSIONS) | json_values,
                "capabilities": st.just({}) | json_values,
                "clientInfo": st.just({"name": "fuzz", "version": "1"}) | json_values,
                "level": st.sampled_from(["debug", "info", "error"]) | json_values,
                "ref": json_values,
                "argument": json_values,
                "_meta": meta(tool_names),
            },
        )
        | json_values
    )


def messages(tool_names: list[str]) -> st.SearchStrategy[Any]:
    """JSON-RPC-shaped messages with arbitrary parts, batches of them, and any JSON value."""
    shaped = st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0") | json_values, "method": methods},
        optional={"id": ids, "params": params(tool_names), "result": json_values, "error": json_values},
    )
    return shaped | st.lists(shaped, max_size=3) | json_values


def is_request(message: Any) -> bool:
    """A message that must be answered, with its own id: an object with a method and a valid id."""
    return isinstance(message, dict) and "method" in message and request_id_of(message) is not None


def check_reply(reply: Any, message: Any) -> None:
    """Fail unless `reply` is a valid JSON-RPC response (or a batch) to `message`, with its id where it had one."""
    if isinstance(reply, list):
        assert isinstance(message, list), reply
        assert reply, "an empty batch answer"
        for item in reply:
            check_reply(item, None)
        return
    assert isinstance(reply, dict), reply
    json.dumps(reply, allow_nan=False)  # it goes on the wire as it is
    assert reply.get("jsonrpc") == "2.0", reply
    assert set(reply) <= {"jsonrpc", "id", "result", "error"}, reply
    assert ("result" in reply) != ("error" in reply), reply
    assert "id" in reply, reply
    request_id = reply["id"]
    assert request_id is None or (isinstance(request_id, (str, int)) and not isinstance(request_id, bool)), reply
    if "error" in reply:
        error = reply["error"]
        assert isinstance(error, dict), reply
        assert isinstance(error.get("code"), int), reply
        assert not isinstance(error["code"], bool), reply
        assert isinstance(error.get("message"), str), reply
    else:
        assert isinstance(reply["result"], dict), reply
    if is_request(message):
        assert request_id == message["id"], (message, reply)
    elif isinstance(message, dict) and message.get("id") is not None and request_id is not None:
        assert request_id == request_id_of(message), (message, reply)
