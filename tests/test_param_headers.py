"""`Mcp-Param-*` headers (2026-07-28) are checked against the tool a call found, whatever source serves it.

The transport hands the headers to the call; the backend checks them against the `x-mcp-header`
arguments of the tool it found: a registry's, a provider's, a toolset's, an extension's source's (and a
remote server's: tests/gateway/test_hub.py). The handshake era has no such headers: they are ignored.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.http_support import error_of, open_session, post, request, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.param_header_urls"), pytest.mark.django_db]

SOURCES = ["registry", "provider", "toolset", "extension"]


def where(region: str) -> dict[str, object]:
    return stateless("tools/call", {"name": "where", "arguments": {"region": region}}, id=4)


def headers(**extra: str) -> dict[str, str]:
    return stateless_headers("tools/call", "where", **extra)


def text_of(response: object) -> str:
    return str(json.loads(response.content)["result"]["content"][0]["text"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("source", SOURCES)
def test_a_param_header_that_differs_from_the_argument_is_refused_whatever_serves_the_tool(
    client: Client, source: str
) -> None:
    response = post(client, where("eu-west"), headers(**{"Mcp-Param-Region": "us-east"}), path=f"/{source}/mcp")

    assert response.status_code == 400
    assert json.loads(response.content)["id"] == 4
    assert error_of(response) == {
        "code": -32020,
        "message": "Header mismatch: Mcp-Param-Region does not match the argument 'region'",
    }


@pytest.mark.parametrize("source", SOURCES)
def test_a_missing_param_header_is_refused_whatever_serves_the_tool(client: Client, source: str) -> None:
    response = post(client, where("eu-west"), headers(), path=f"/{source}/mcp")

    assert response.status_code == 400
    assert error_of(response) == {"code": -32020, "message": "Header mismatch: the Mcp-Param-Region header is required"}


@pytest.mark.parametrize("source", SOURCES)
def test_a_param_header_that_matches_is_served_whatever_serves_the_tool(client: Client, source: str) -> None:
    response = post(client, where("eu-west"), headers(**{"Mcp-Param-Region": "eu-west"}), path=f"/{source}/mcp")

    assert response.status_code == 200
    assert text_of(response) == "ran in eu-west"


@pytest.mark.parametrize("source", SOURCES)
def test_the_handshake_era_ignores_param_headers(client: Client, source: str) -> None:
    session = open_session(client, path=f"/{source}/mcp")
    call = request("tools/call", {"name": "where", "arguments": {"region": "eu-west"}})

    response = post(client, call, {"Mcp-Session-Id": session, "Mcp-Param-Region": "us-east"}, path=f"/{source}/mcp")

    assert response.status_code == 200
    assert text_of(response) == "ran in eu-west"


def test_the_headers_are_checked_against_the_arguments_the_client_sent_not_an_interceptors_rewrite(
    client: Client,
) -> None:
    response = post(client, where("eu-west"), headers(**{"Mcp-Param-Region": "eu-west"}), path="/rewritten/mcp")

    assert response.status_code == 200
    assert text_of(response) == "ran in moon"


def test_an_unknown_tool_is_answered_as_unknown_not_as_a_header_mismatch(client: Client) -> None:
    body = stateless("tools/call", {"name": "nowhere", "arguments": {"region": "eu-west"}})

    headers_sent = stateless_headers("tools/call", "nowhere", **{"Mcp-Param-Region": "x"})
    response = post(client, body, headers_sent, path="/provider/mcp")

    assert error_of(response)["message"] == "Unknown tool: nowhere"
