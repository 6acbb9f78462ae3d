"""The hot methods' plain-Python params checks (`protocol/shapes.py`) against mcp-types, on valid and mutated params.

`known_valid` may only say yes where mcp-types accepts, so that every answer a client sees is the one
mcp-types would have given: the params of `tools/call`, `tools/list`, `initialize`, `server/discover`,
`ping` and the client notifications, as clients send them and then mutated (a field removed, retyped, or
set to an arbitrary JSON value; a key added at any depth), are checked by both, and the handler's reply
to each message is compared byte for byte with the shortcut on and off.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Iterator
from typing import Any, get_args

import pydantic
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from mcp_types.methods import validate_client_notification, validate_client_request

from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.handler import _serialize_complete
from mcp_django.protocol.jsonrpc import dump_json
from mcp_django.protocol.result_shapes import _RESULT_WRITERS, known_result
from mcp_django.protocol.shapes import (
    _NOTIFICATIONS,
    _REQUESTS,
    _model,
    _never,
    _string,
    known_valid,
    known_valid_notification,
)
from tests.fuzz.strategies import json_values
from tests.protocol.backends import EchoBackend

STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
}
RICH_META = {
    **META,
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "sampling": {"context": {}},
        "elicitation": {"form": {}, "url": {}},
        "extensions": {"io.example/x": {"on": [1, 2.5, None, "a"]}},
        "experimental": {},
    },
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1", "title": "Fuzz", "description": None},
    "io.modelcontextprotocol/logLevel": "info",
    "progressToken": 7,
    "com.example/trace": {"anything": ["goes"]},
}
HANDSHAKE_CAPABILITIES = {
    "roots": {"listChanged": True},
    "sampling": {},
    "elicitation": {"form": {}},
    "experimental": {},
}


def templates(method: str, version: str) -> list[dict[str, Any]]:
    """What clients send as params of `method` at `version`: the bare minimum and a richer one."""
    if version == STATELESS:
        metas = [META, RICH_META]
        if method == "tools/call":
            return [{"name": "echo", "arguments": {"text": "hi"}, "_meta": meta} for meta in metas] + [
                {"name": "echo", "_meta": META, "requestState": "abc", "arguments": None}
            ]
        if method == "tools/list":
            return [{"_meta": META}, {"_meta": RICH_META, "cursor": "2"}]
        if method == "notifications/cancelled":
            return [{"requestId": 3}, {"requestId": "x", "reason": "gone", "_meta": {}}]
        return [{"_meta": meta} for meta in metas]
    meta = {"progressToken": "p", "io.example/x": 1}
    made: dict[str, list[dict[str, Any]]] = {
        "tools/call": [{"name": "echo", "arguments": {"text": "hi"}}, {"name": "echo", "_meta": meta, "task": None}],
        "tools/list": [{}, {"cursor": "2", "_meta": meta}],
        "ping": [{}, {"_meta": meta}],
        "initialize": [
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}},
            {
                "protocolVersion": version,
                "capabilities": HANDSHAKE_CAPABILITIES,
                "clientInfo": {"name": "fuzz", "version": "1", "websiteUrl": "https://example.com"},
                "_meta": meta,
            },
        ],
        "notifications/initialized": [{}, {"_meta": {"x": 1}}],
        "notifications/cancelled": [{"requestId": 3}, {"requestId": "x", "reason": "gone"}],
    }
    return made[method]


KEYS = [
    "name",
    "arguments",
    "_meta",
    "meta",
    "cursor",
    "task",
    "requestState",
    "request_state",
    "inputResponses",
    "protocolVersion",
    "protocol_version",
    "capabilities",
    "clientInfo",
    "client_info",
    "roots",
    "listChanged",
    "list_changed",
    "sampling",
    "elicitation",
    "experimental",
    "extensions",
    "tasks",
    "form",
    "url",
    "version",
    "title",
    "icons",
    "websiteUrl",
    "progressToken",
    "progress_token",
    "requestId",
    "reason",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/subscriptionId",
    "io_modelcontextprotocol_client_info",
    "content",
    "isError",
    "resultType",
    "structuredContent",
    "type",
    "text",
    "annotations",
    "io.modelcontextprotocol/serverInfo",
]
"""Keys a mutation sets: every field the checks know, by wire name and by Python name, and unknown ones."""

values = (
    json_values
    | st.sampled_from([True, False, 0, 1, 1.0, -1, "", "x", None, [], {}, [{}], {"name": "n", "version": "v"}])
    | st.sampled_from(["debug", "loud", "2026-07-28", "2025-11-25", float("nan"), float("inf"), b"bytes", ("t",)])
)
"""Arbitrary JSON, and the near misses: bool for int, float for int, bytes and tuples (in-process callers)."""


def _dicts(value: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(value, dict):
        found.append(value)
        for item in value.values():
            found += _dicts(item)
    elif isinstance(value, list):
        for item in value:
            found += _dicts(item)
    return found


SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "fuzz", "version": "1"}}


def result_templates(method: str, version: str) -> list[dict[str, Any]]:
    """What tools answer: text content, as the handler completes it for `version`."""
    text = {"type": "text", "text": "hello"}
    if version == STATELESS:
        return [
            {"content": [text], "isError": False, "resultType": "complete", "_meta": SERVER_INFO},
            {"content": [text, dict(text)], "resultType": "complete", "_meta": {**SERVER_INFO, "x": 1}},
            {
                "content": [text],
                "structuredContent": {"result": "hello"},
                "resultType": "complete",
                "_meta": SERVER_INFO,
            },
        ]
    return [
        {"content": [text], "isError": False},
        {"content": [], "isError": True, "_meta": {"a": "b"}},
        {"content": [text], "structuredContent": {"result": ["hello", 1, None, {"deep": 2.5}]}},
    ]


@st.composite
def mutated(draw: st.DrawFn, method: str, version: str, result: bool = False) -> Any:
    """A template's params with up to four mutations, each at any depth; or any JSON value at all."""
    if draw(st.integers(0, 19)) == 0:
        return copy.deepcopy(draw(values))
    made = result_templates(method, version) if result else templates(method, version)
    params = copy.deepcopy(draw(st.sampled_from(made)))
    for _ in range(draw(st.integers(0, 4))):
        target = draw(st.sampled_from(_dicts(params)))
        how = draw(st.sampled_from(["delete", "retype", "add"] if target else ["add"]))
        if how == "delete":
            del target[draw(st.sampled_from(list(target)))]
            continue
        if how == "retype":
            key = draw(st.sampled_from(list(target)))
        else:
            key = draw(st.sampled_from(KEYS) | st.text(max_size=8) | st.sampled_from([1, None]))
        target[key] = copy.deepcopy(draw(values))  # the strategies' own lists and dicts stay as they are
    return params


request_cases = st.sampled_from(sorted(_REQUESTS)).flatmap(lambda row: st.tuples(st.just(row), mutated(row[0], row[1])))
result_cases = st.sampled_from(sorted(_RESULT_WRITERS)).flatmap(
    lambda row: st.tuples(st.just(row), mutated(row[0], row[1], result=True))
)
notification_cases = st.sampled_from(sorted(_NOTIFICATIONS)).flatmap(
    lambda row: st.tuples(st.just(row), mutated(row[0], row[1]))
)


def _accepted(validate: Any, method: str, version: str, params: Any) -> bool:
    try:
        validate(method, version, params)
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize("row", sorted(_REQUESTS) + sorted(_NOTIFICATIONS), ids="{0[0]}@{0[1]}".format)
def test_the_params_clients_send_are_known_valid_without_mcp_types(row: tuple[str, str]) -> None:
    method, version = row
    check = known_valid_notification if row in _NOTIFICATIONS else known_valid
    for params in templates(method, version):
        assert check(method, version, params), params


def test_a_model_mcp_types_changed_or_dropped_turns_its_check_off() -> None:
    from mcp_types.methods import CLIENT_REQUESTS

    params_model = get_args(CLIENT_REQUESTS[("ping", "2025-11-25")].model_fields["params"].annotation)[0]
    assert _model(params_model, {"_meta": (_string, "Meta | None")}) is not _never
    assert _model(params_model, {"_meta": (_string, "str | None")}) is _never  # retyped
    assert _model(params_model, {"_meta": (_string, "Meta | None"), "new": (_string, "str")}) is _never
    assert _model(None, {"_meta": (_string, "Meta | None")}) is _never  # gone


@given(case=request_cases)
def test_request_params_known_valid_are_params_mcp_types_accepts(case: tuple[tuple[str, str], Any]) -> None:
    (method, version), params = case
    fast = known_valid(method, version, params)
    event(f"known valid: {fast}")
    if fast:
        assert _accepted(validate_client_request, method, version, params), params


@given(case=notification_cases)
def test_notification_params_known_valid_are_params_mcp_types_accepts(case: tuple[tuple[str, str], Any]) -> None:
    (method, version), params = case
    fast = known_valid_notification(method, version, params)
    event(f"known valid: {fast}")
    if fast:
        assert _accepted(validate_client_notification, method, version, params), params


@given(case=result_cases)
def test_results_written_without_mcp_types_are_written_as_mcp_types_writes_them(
    case: tuple[tuple[str, str], Any],
) -> None:
    (method, version), result = case
    written = known_result(method, version, copy.deepcopy(result))
    event(f"known result: {written is not None}")
    if written is not None:
        assert dump_json(written) == dump_json(_serialize_complete(method, version, result)), result


handler = MessageHandler(EchoBackend(), server_info={"name": "fuzz", "version": "1"}, page_size=2)


@contextlib.contextmanager
def _without_shortcut() -> Iterator[None]:
    """Every hot method served as before `shapes.py`: its tables emptied, so mcp-types checks and writes all."""
    tables: list[dict[Any, Any]] = [_REQUESTS, _NOTIFICATIONS, _RESULT_WRITERS]
    saved = [dict(table) for table in tables]
    for table in tables:
        table.clear()
    try:
        yield
    finally:
        for table, rows in zip(tables, saved, strict=True):
            table.update(rows)


async def _reply(message: dict[str, Any], version: str) -> bytes:
    connection = Connection(sessions=False, version_header=version)
    async with asyncio.timeout(10):
        reply = await handler.handle(copy.deepcopy(message), connection)
    return dump_json(reply) if reply is not None else b""


@given(case=request_cases | notification_cases, with_id=st.booleans())
async def test_the_handler_answers_alike_with_and_without_the_shortcut(
    case: tuple[tuple[str, str], Any], with_id: bool
) -> None:
    (method, version), params = case
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if with_id and not method.startswith("notifications/"):
        message["id"] = 1
    fast = await _reply(message, version)
    with _without_shortcut():
        slow = await _reply(message, version)
    assert fast == slow, message
