"""The 2026-07-28 stateless era over HTTP: no sessions, and headers that must mirror the body."""

from __future__ import annotations

import base64
import json

import pytest
from django.test import Client

from tests.http_support import STATELESS_VERSION, error_of, post, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.http_urls"), pytest.mark.django_db]

CALL_ECHO = stateless("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=7)


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def test_a_well_formed_stateless_call_is_served(client: Client) -> None:
    response = post(client, CALL_ECHO, stateless_headers("tools/call", "echo"))

    assert response.status_code == 200
    result = json.loads(response.content)["result"]
    assert result["resultType"] == "complete"
    assert result["content"] == [{"type": "text", "text": "hi"}]


def test_a_stateless_request_never_gets_a_session_and_ignores_one_sent(client: Client) -> None:
    response = post(client, CALL_ECHO, stateless_headers("tools/call", "echo", **{"Mcp-Session-Id": "made-up"}))

    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response


def test_a_missing_mcp_method_header_is_a_header_mismatch(client: Client) -> None:
    response = post(client, stateless("tools/list", id=3), {"MCP-Protocol-Version": STATELESS_VERSION})

    assert response.status_code == 400
    assert json.loads(response.content)["id"] == 3
    assert error_of(response) == {"code": -32020, "message": "Header mismatch: the Mcp-Method header is required"}


def test_a_mismatched_mcp_method_header_is_a_header_mismatch(client: Client) -> None:
    response = post(client, stateless("tools/list"), stateless_headers("prompts/list"))

    assert response.status_code == 400
    assert error_of(response) == {
        "code": -32020,
        "message": "Header mismatch: Mcp-Method does not match the method 'tools/list'",
    }


def test_header_values_are_case_sensitive(client: Client) -> None:
    response = post(client, stateless("tools/list"), stateless_headers("TOOLS/LIST"))

    assert error_of(response)["code"] == -32020


@pytest.mark.parametrize("name", ["mcp-method", "MCP-METHOD"])
def test_header_names_are_case_insensitive(client: Client, name: str) -> None:
    headers = {"MCP-Protocol-Version": STATELESS_VERSION, name: "tools/list"}

    assert post(client, stateless("tools/list"), headers).status_code == 200


def test_a_missing_mcp_name_header_is_a_header_mismatch(client: Client) -> None:
    response = post(client, CALL_ECHO, stateless_headers("tools/call"))

    assert response.status_code == 400
    assert error_of(response) == {
        "code": -32020,
        "message": "Header mismatch: the Mcp-Name header is required for tools/call",
    }


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tools/call", {"name": "echo", "arguments": {"text": "x"}}, "count"),
        ("prompts/get", {"name": "review", "arguments": {"code": "x"}}, "other"),
        ("resources/read", {"uri": "test://greeting"}, "test://elsewhere"),
    ],
)
def test_a_mismatched_mcp_name_header_is_a_header_mismatch(
    client: Client, method: str, params: dict[str, object], name: str
) -> None:
    response = post(client, stateless(method, params), stateless_headers(method, name))

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_whitespace_around_header_values_is_ignored(client: Client) -> None:
    response = post(client, CALL_ECHO, stateless_headers("  tools/call ", "  echo  "))

    assert response.status_code == 200


def test_a_base64_header_value_is_decoded_before_comparing(client: Client) -> None:
    call = stateless("prompts/get", {"name": "review", "arguments": {"code": "x"}})

    assert post(client, call, stateless_headers("prompts/get", b64("review"))).status_code == 200


@pytest.mark.parametrize("value", ["=?base64?SGVsbG8?=", "=?base64?SGVs!!bG8=?="], ids=["bad-padding", "bad-chars"])
def test_a_malformed_base64_header_value_is_a_header_mismatch(client: Client, value: str) -> None:
    call = stateless("prompts/get", {"name": "review", "arguments": {"code": "x"}})

    response = post(client, call, stateless_headers("prompts/get", value))

    assert response.status_code == 400
    assert error_of(response) == {"code": -32020, "message": "Header mismatch: invalid base64 header value"}


def test_a_protocol_version_header_that_differs_from_meta_is_a_header_mismatch(client: Client) -> None:
    body = stateless("server/discover", meta={"io.modelcontextprotocol/protocolVersion": "v999.0.0"})

    response = post(client, body, stateless_headers("server/discover"))

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_an_unsupported_version_in_header_and_meta_is_32022(client: Client) -> None:
    body = stateless("server/discover", id=301, meta={"io.modelcontextprotocol/protocolVersion": "v999.0.0"})

    response = post(client, body, {"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"})

    assert response.status_code == 400
    reply = json.loads(response.content)
    assert reply["id"] == 301
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"]["requested"] == "v999.0.0"


def test_missing_meta_is_invalid_params_with_400(client: Client) -> None:
    body = {"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}

    response = post(client, body, stateless_headers("server/discover"))

    assert response.status_code == 400
    assert error_of(response)["code"] == -32602


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel"])
def test_handshake_only_methods_are_404(client: Client, method: str) -> None:
    response = post(client, stateless(method), stateless_headers(method))

    assert response.status_code == 404
    assert error_of(response)["code"] == -32601


@pytest.mark.parametrize("method", ["get", "delete"])
def test_get_and_delete_are_405_in_the_stateless_era(client: Client, method: str) -> None:
    response = getattr(client, method)("/mcp", headers={"MCP-Protocol-Version": STATELESS_VERSION})

    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_a_stateless_notification_is_accepted_with_202(client: Client) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}

    assert post(client, body, stateless_headers("notifications/cancelled")).status_code == 202


def test_non_ascii_header_values_are_a_header_mismatch(client: Client) -> None:
    response = post(client, CALL_ECHO, stateless_headers("tools/call", "échø"))

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


# -- Mcp-Param-* headers (x-mcp-header) ------------------------------------------------------------


def locate(arguments: dict[str, object]) -> dict[str, object]:
    return stateless("tools/call", {"name": "locate", "arguments": arguments})


LOCATE = stateless_headers("tools/call", "locate")


def test_mirrored_arguments_with_matching_headers_are_served(client: Client) -> None:
    headers = {**LOCATE, "Mcp-Param-Region": "eu-west", "Mcp-Param-Zone": "3", "Mcp-Param-Verbose": "true"}

    response = post(client, locate({"region": "eu-west", "zone": 3, "verbose": True}), headers)

    assert response.status_code == 200
    assert json.loads(response.content)["result"]["content"][0]["text"] == "eu-west/3/True"


def test_a_base64_param_header_is_decoded(client: Client) -> None:
    headers = {**LOCATE, "Mcp-Param-Region": b64("Zürich"), "Mcp-Param-Zone": "0", "Mcp-Param-Verbose": "false"}

    assert post(client, locate({"region": "Zürich", "zone": 0, "verbose": False}), headers).status_code == 200


def test_a_value_without_the_base64_wrapper_is_taken_literally(client: Client) -> None:
    value = base64.b64encode(b"Hello").decode()
    headers = {**LOCATE, "Mcp-Param-Region": value}

    assert post(client, locate({"region": value}), headers).status_code == 200


def test_a_missing_param_header_is_a_header_mismatch(client: Client) -> None:
    response = post(client, locate({"region": "eu-west"}), LOCATE)

    assert response.status_code == 400
    assert error_of(response) == {"code": -32020, "message": "Header mismatch: the Mcp-Param-Region header is required"}


def test_a_param_header_that_differs_is_a_header_mismatch(client: Client) -> None:
    response = post(client, locate({"zone": 3}), {**LOCATE, "Mcp-Param-Zone": "4"})

    assert response.status_code == 400
    assert error_of(response) == {
        "code": -32020,
        "message": "Header mismatch: Mcp-Param-Zone does not match the argument 'zone'",
    }


def test_a_param_header_without_its_argument_is_a_header_mismatch(client: Client) -> None:
    response = post(client, locate({}), {**LOCATE, "Mcp-Param-Region": "eu-west"})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_a_malformed_base64_param_header_is_a_header_mismatch(client: Client) -> None:
    response = post(client, locate({"region": "Hello"}), {**LOCATE, "Mcp-Param-Region": "=?base64?SGVsbG8?="})

    assert response.status_code == 400
    assert error_of(response) == {"code": -32020, "message": "Header mismatch: invalid base64 header value"}
