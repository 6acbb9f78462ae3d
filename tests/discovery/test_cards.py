"""Server Cards and the AI Catalog, through the real views of the example project's URLconf."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, override_settings

from mcp_django.discovery.wire import CARD_MEDIA_TYPE, CARD_SCHEMA, CATALOG_MEDIA_TYPE
from mcp_django.protocol.versions import SUPPORTED_VERSIONS
from tests.http_support import post, stateless, stateless_headers

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(settings: Any) -> Client:
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "mcp.example.com"]
    return Client(HTTP_HOST="mcp.example.com")


def _json(response: Any) -> dict[str, Any]:
    return json.loads(response.content)


def test_an_endpoint_serves_its_card_under_its_streamable_http_url(client: Client) -> None:
    response = client.get("/mcp/server-card", headers={"Accept": CARD_MEDIA_TYPE})

    assert response.status_code == 200
    assert response["Content-Type"] == CARD_MEDIA_TYPE
    card = _json(response)
    assert card["$schema"] == CARD_SCHEMA
    assert card["name"] == "com.example.mcp/server"
    assert card["remotes"] == [
        {
            "type": "streamable-http",
            "url": "http://mcp.example.com/mcp",
            "supportedProtocolVersions": list(SUPPORTED_VERSIONS),
            "headers": [
                {
                    "name": "Authorization",
                    "description": card["remotes"][0]["headers"][0]["description"],
                    "isRequired": True,
                    "isSecret": True,
                }
            ],
        }
    ]
    assert not {"tools", "resources", "prompts"} & set(card)


def test_a_card_agrees_with_what_the_endpoint_answers_server_discover_with(client: Client) -> None:
    card = _json(client.get("/books/mcp/server-card"))
    headers = stateless_headers("server/discover")
    discovered = _json(post(client, stateless("server/discover"), headers, path="/books/mcp"))

    result = discovered["result"]
    server_info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert card["version"] == server_info["version"]
    assert card["remotes"][0]["supportedProtocolVersions"] == result["supportedVersions"]
    assert "headers" not in card["remotes"][0]  # an anonymous endpoint asks for no credentials


def test_the_ai_catalog_lists_every_published_endpoint_by_its_card_url(client: Client) -> None:
    response = client.get("/.well-known/ai-catalog.json")

    assert response["Content-Type"] == CATALOG_MEDIA_TYPE
    catalog = _json(response)
    assert catalog["specVersion"] == "1.0"
    entry = next(entry for entry in catalog["entries"] if entry["identifier"] == "urn:air:mcp.example.com:mcp:server")
    assert entry == {
        "identifier": "urn:air:mcp.example.com:mcp:server",
        "type": CARD_MEDIA_TYPE,
        "url": "http://mcp.example.com/mcp/server-card",
    }
    for listed in catalog["entries"]:
        assert client.get(listed["url"].removeprefix("http://mcp.example.com")).status_code == 200


def test_the_legacy_location_serves_the_default_endpoints_card(client: Client) -> None:
    response = client.get("/.well-known/mcp/server-card.json")

    assert response["Content-Type"] == CARD_MEDIA_TYPE
    assert _json(response) == _json(client.get("/mcp/server-card"))


def test_an_unchanged_card_answers_304_to_its_etag_and_200_to_another(client: Client) -> None:
    first = client.get("/mcp/server-card")
    assert first["Cache-Control"] == "public, max-age=3600"

    again = client.get("/mcp/server-card", headers={"If-None-Match": first["ETag"]})
    other = client.get("/mcp/server-card", headers={"If-None-Match": '"something-else"'})

    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == first["ETag"]
    assert other.status_code == 200


def test_a_changed_card_has_another_etag(client: Client) -> None:
    before = client.get("/mcp/server-card")["ETag"]
    with override_settings(MCP_DJANGO={"SERVER_CARD": {"title": "The bookshop"}}):
        changed = client.get("/mcp/server-card", headers={"If-None-Match": before})

    assert changed.status_code == 200
    assert _json(changed)["title"] == "The bookshop"


def test_browsers_on_any_origin_may_read_the_documents_and_preflight_them(client: Client) -> None:
    got = client.get("/.well-known/ai-catalog.json", headers={"Origin": "https://elsewhere.example"})
    preflight = client.options(
        "/mcp/server-card",
        headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Headers": "if-none-match"},
    )

    for response in (got, preflight):
        assert response["Access-Control-Allow-Origin"] == "*"
        assert response["Access-Control-Expose-Headers"] == "ETag"
        assert "If-None-Match" in response["Access-Control-Allow-Headers"]
    assert preflight.status_code == 204


def test_an_endpoint_the_site_does_not_publish_has_no_card_and_no_catalog_entry(client: Client) -> None:
    with override_settings(MCP_DJANGO={"SERVER_CARD_ENDPOINTS": ["books"]}):
        hidden = client.get("/mcp/server-card")
        catalog = _json(client.get("/.well-known/ai-catalog.json"))
        legacy = _json(client.get("/.well-known/mcp/server-card.json"))

    assert hidden.status_code == 404
    assert [entry["identifier"] for entry in catalog["entries"]] == ["urn:air:mcp.example.com:mcp:books"]
    assert legacy["name"] == "com.example.mcp/books"


def test_a_path_that_is_no_endpoint_has_no_card(client: Client) -> None:
    assert client.get("/nowhere/server-card").status_code == 404
    assert client.post("/mcp/server-card").status_code == 405


def test_the_site_names_its_namespace_and_adds_what_the_server_does_not_say(client: Client) -> None:
    extra = {"websiteUrl": "https://example.com/books", "description": "Books, searched and reviewed."}
    with override_settings(MCP_DJANGO={"SERVER_CARD_NAMESPACE": "com.example", "SERVER_CARD": extra}):
        card = _json(client.get("/books/mcp/server-card"))

    assert card["name"] == "com.example/books"
    assert card["websiteUrl"] == "https://example.com/books"
    assert card["description"] == "Books, searched and reviewed."
