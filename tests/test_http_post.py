"""POST on an MCP endpoint: bad input of every kind gets a JSON-RPC error with the right status."""

from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from mcp_django.protocol.errors import http_status
from tests.http_support import (
    HANDSHAKE_VERSION,
    error_of,
    initialize,
    open_session,
    post,
    request,
    sse_messages,
    stateless,
    stateless_headers,
)

pytestmark = [pytest.mark.urls("tests.http_urls"), pytest.mark.django_db]


@pytest.fixture
def session(client: Client) -> dict[str, str]:
    """Headers naming an open session."""
    return {"Mcp-Session-Id": open_session(client)}


# -- the happy paths -------------------------------------------------------------------------------


def test_a_request_that_emits_nothing_is_answered_with_json(client: Client, session: dict[str, str]) -> None:
    response = post(client, request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}), session)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content)["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_a_request_that_reports_progress_is_answered_with_sse(client: Client, session: dict[str, str]) -> None:
    call = request("tools/call", {"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": "t"}})

    response = post(client, call, session)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    assert response["X-Accel-Buffering"] == "no"
    messages = sse_messages(response.content)
    assert [m.get("method") for m in messages] == [
        "notifications/progress",
        "notifications/progress",
        "notifications/message",
        None,
    ]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "counted to 2"}]


def test_every_sse_event_is_a_message_event_with_a_distinct_id(client: Client, session: dict[str, str]) -> None:
    call = request("tools/call", {"name": "count", "arguments": {"steps": 1}, "_meta": {"progressToken": 1}})

    events = post(client, call, session).content.decode().strip().split("\n\n")

    ids = [event.splitlines()[0] for event in events]
    assert all(event.splitlines()[1] == "event: message" for event in events)
    assert all(line.startswith("id: ") for line in ids)
    assert len(set(ids)) == len(ids) == 3


def test_a_notification_is_accepted_with_202_and_no_body(client: Client, session: dict[str, str]) -> None:
    response = post(
        client, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}, session
    )

    assert response.status_code == 202
    assert response.content == b""
    assert "Content-Type" not in response


def test_a_client_response_is_accepted_with_202(client: Client, session: dict[str, str]) -> None:
    response = post(client, {"jsonrpc": "2.0", "id": 5, "result": {}}, session)

    assert response.status_code == 202


def test_the_endpoint_answers_with_and_without_trailing_slash_without_redirecting(client: Client) -> None:
    assert post(client, initialize(), path="/mcp").status_code == 200
    assert post(client, initialize(), path="/mcp/").status_code == 200


# -- bad input -------------------------------------------------------------------------------------


def test_invalid_json_is_a_parse_error(client: Client) -> None:
    response = post(client, b'{"jsonrpc": "2.0", "id": 1,')

    assert response.status_code == 400
    assert error_of(response) == {"code": -32700, "message": "Parse error: the body is not valid JSON"}


def test_a_blank_body_is_a_parse_error(client: Client) -> None:
    response = post(client, b"  \n")

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


def test_non_utf8_bytes_are_a_parse_error(client: Client) -> None:
    response = post(client, b'{"jsonrpc": "2.0", "id": 1, "method": "ping\xff\xfe"}')

    assert response.status_code == 400
    assert error_of(response) == {"code": -32700, "message": "Parse error: the body is not valid UTF-8"}


def test_non_standard_json_constants_are_a_parse_error(client: Client) -> None:
    response = post(client, b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}')

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


def test_deeply_nested_json_is_a_clean_parse_error(client: Client) -> None:
    response = post(client, b"[" * 200_000 + b"]" * 200_000)

    assert response.status_code == 400
    assert error_of(response) == {"code": -32700, "message": "Parse error: the JSON is nested too deeply"}


def test_nested_params_within_reason_are_served(client: Client, session: dict[str, str]) -> None:
    nested: object = "x"
    for _ in range(200):
        nested = {"a": nested}

    response = post(
        client, request("tools/call", {"name": "echo", "arguments": {"text": "ok", "extra": nested}}), session
    )

    assert response.status_code == 200
    assert "error" not in json.loads(response.content)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_batch_is_refused_outside_2025_03_26(client: Client, version: str) -> None:
    response = post(client, [request("ping")], {"MCP-Protocol-Version": version})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


def test_a_batch_is_served_in_2025_03_26(client: Client) -> None:
    session_id = post(client, initialize("2025-03-26")).headers["Mcp-Session-Id"]

    response = post(client, [request("ping", id=1), request("ping", id=2)], {"Mcp-Session-Id": session_id})

    assert response.status_code == 200
    assert sorted(reply["id"] for reply in json.loads(response.content)) == [1, 2]


def test_a_stateless_batch_is_refused(client: Client) -> None:
    response = post(client, [stateless("tools/list")], stateless_headers("tools/list"))

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


@pytest.mark.parametrize(
    "body",
    [
        "just a string",
        42,
        None,
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": [1], "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1},
    ],
    ids=["string", "number", "null", "jsonrpc-1.0", "list-id", "bool-id", "numeric-method", "no-method"],
)
def test_a_malformed_envelope_is_an_invalid_request(client: Client, session: dict[str, str], body: object) -> None:
    response = post(client, body, session)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


def test_params_that_are_not_an_object_are_invalid_params(client: Client, session: dict[str, str]) -> None:
    response = post(client, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1, 2]}, session)

    assert response.status_code == 200
    assert json.loads(response.content)["id"] == 3
    assert error_of(response)["code"] == -32602


def test_arguments_of_the_wrong_type_are_invalid_params(client: Client, session: dict[str, str]) -> None:
    response = post(client, request("tools/call", {"name": "echo", "arguments": "not an object"}), session)

    assert response.status_code == 200
    assert error_of(response)["code"] == -32602


def test_an_unknown_method_is_method_not_found_with_200_in_the_handshake_era(
    client: Client, session: dict[str, str]
) -> None:
    response = post(client, request("tools/explode"), session)

    assert response.status_code == 200
    assert error_of(response)["code"] == -32601


def test_an_unknown_method_is_404_in_the_stateless_era(client: Client) -> None:
    response = post(client, stateless("tools/explode"), stateless_headers("tools/explode"))

    assert response.status_code == 404
    assert error_of(response)["code"] == -32601
    assert json.loads(response.content)["id"] == 1


def test_a_lone_surrogate_echoed_back_does_not_break_the_response(client: Client, session: dict[str, str]) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\ud800","arguments":{}}}'

    response = post(client, body, session)

    assert response.status_code == 200
    assert error_of(response)["code"] == -32602


# -- HTTP-level checks -----------------------------------------------------------------------------


@override_settings(MCP_DJANGO={"MAX_REQUEST_BYTES": 100})
def test_a_body_over_the_limit_is_413(client: Client) -> None:
    response = post(client, request("ping", {"padding": "x" * 200}))

    assert response.status_code == 413
    assert error_of(response) == {"code": -32600, "message": "Payload Too Large: the body exceeds 100 bytes"}


@override_settings(MCP_DJANGO={"MAX_REQUEST_BYTES": 100})
def test_a_declared_length_over_the_limit_is_413_without_reading(client: Client) -> None:
    response = post(client, request("ping"), {"Content-Length": "1000000"})

    assert response.status_code == 413


@pytest.mark.parametrize(
    "accept",
    [None, "application/json", "text/event-stream", "text/html"],
    ids=["missing", "json-only", "sse-only", "html"],
)
def test_an_accept_header_without_both_types_is_406(client: Client, accept: str | None) -> None:
    response = post(client, initialize(), accept=accept)

    assert response.status_code == 406
    assert error_of(response) == {
        "code": -32600,
        "message": "Not Acceptable: Client must accept both application/json and text/event-stream",
    }


@pytest.mark.parametrize("accept", ["*/*", "application/*, text/*", "application/json;q=0.9, text/event-stream;q=1"])
def test_wildcards_and_parameters_in_accept_are_understood(client: Client, accept: str) -> None:
    assert post(client, initialize(), accept=accept).status_code == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/jsonx"])
def test_a_body_that_is_not_json_is_415(client: Client, content_type: str) -> None:
    response = post(client, initialize(), content_type=content_type)

    assert response.status_code == 415
    assert error_of(response) == {
        "code": -32600,
        "message": "Unsupported Media Type: Content-Type must be application/json",
    }


def test_a_json_content_type_with_a_charset_is_accepted(client: Client) -> None:
    assert post(client, initialize(), content_type="application/json; charset=utf-8").status_code == 200


@pytest.mark.parametrize(
    "origin", ["https://evil.example.com", "null", "http://localhost.evil.com", "http://[::1", "file:///etc"]
)
def test_a_foreign_origin_is_403(client: Client, origin: str) -> None:
    response = post(client, initialize(), {"Origin": origin})

    assert response.status_code == 403
    assert error_of(response) == {"code": -32600, "message": "Forbidden: invalid Origin header"}


@pytest.mark.parametrize(
    "origin", ["http://localhost", "http://localhost:6274", "https://127.0.0.1:8443", "http://[::1]:3000"]
)
def test_a_localhost_origin_on_any_port_is_allowed(client: Client, origin: str) -> None:
    assert post(client, initialize(), {"Origin": origin}).status_code == 200


@override_settings(MCP_DJANGO={"ALLOWED_ORIGINS": ["https://app.example.com"]})
def test_origins_listed_in_the_settings_are_allowed(client: Client) -> None:
    assert post(client, initialize(), {"Origin": "https://app.example.com:443"}).status_code == 200
    assert post(client, initialize(), {"Origin": "https://other.example.com"}).status_code == 403


def test_a_request_without_origin_is_allowed(client: Client) -> None:
    assert post(client, initialize()).status_code == 200


@pytest.mark.parametrize("method", ["put", "patch"])
def test_other_http_methods_are_405_with_allow(client: Client, method: str) -> None:
    response = getattr(client, method)("/mcp", headers={"Accept": "application/json, text/event-stream"})

    assert response.status_code == 405
    assert response["Allow"] == "POST, DELETE"
    assert error_of(response)["code"] == -32600


def test_get_is_405_for_now(client: Client) -> None:
    response = client.get("/mcp", headers={"Accept": "text/event-stream"})

    assert response.status_code == 405
    assert response["Allow"] == "POST, DELETE"


def test_the_csrf_check_does_not_apply() -> None:
    csrf_client = Client(enforce_csrf_checks=True)

    assert post(csrf_client, initialize()).status_code == 200


# -- the status table ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("era", "code", "status"),
    [
        ("stateless", -32700, 400),
        ("stateless", -32600, 400),
        ("stateless", -32602, 400),
        ("stateless", -32020, 400),
        ("stateless", -32021, 400),
        ("stateless", -32022, 400),
        ("stateless", -32601, 404),
        ("stateless", -32603, 200),
        ("stateless", -32002, 200),
        ("handshake", -32700, 400),
        ("handshake", -32600, 400),
        ("handshake", -32601, 200),
        ("handshake", -32602, 200),
        ("handshake", -32603, 200),
    ],
)
def test_the_http_status_of_each_error_code(era: str, code: int, status: int) -> None:
    from mcp_django.protocol import Era

    assert http_status(Era(era), code) == status


def test_a_handshake_request_without_version_header_is_served(client: Client, session: dict[str, str]) -> None:
    response = post(client, request("ping"), session)

    assert json.loads(response.content) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_known_handshake_version_header_keeps_the_handshake_era(client: Client, session: dict[str, str]) -> None:
    response = post(client, request("ping"), {**session, "MCP-Protocol-Version": HANDSHAKE_VERSION})

    assert response.status_code == 200
    assert json.loads(response.content)["result"] == {}


def test_an_unexpected_failure_is_an_internal_error_not_a_500(
    client: Client, session: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_django.transports.http import StreamableHTTP

    async def explode(*args: object) -> None:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(StreamableHTTP, "_post", explode)

    response = post(client, request("ping"), session)

    assert response.status_code == 200
    assert error_of(response) == {"code": -32603, "message": "Internal error"}
    assert b"secret" not in response.content
