"""The Skills extension on real endpoints: named by the example project's /mcp and conformance endpoints
(`extensions=`), served there only, and behind each endpoint's admission (no credentials, no skills)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from mcp_django.endpoints import get_endpoint
from mcp_django.protocol.versions import Era
from mcp_django.testing import MCPTestClient
from tests.http_support import post, stateless, stateless_headers

SKILLS = "io.modelcontextprotocol/skills"


def with_settings(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


async def test_the_conformance_endpoint_serves_every_installed_apps_skills_in_both_eras() -> None:
    stateless_client = MCPTestClient("conformance", era="stateless")
    listed = await stateless_client.request("skills/list")
    assert [entry["uri"] for entry in listed["skills"]] == [
        "skill://book-search/SKILL.md",
        "skill://catalogue-report/SKILL.md",
        "skill://fixture-tour/SKILL.md",
    ]
    handshake_client = MCPTestClient("conformance")
    entry = await handshake_client.request("skills/get", {"uri": "skill://fixture-tour/SKILL.md"})
    assert entry["skill"]["frontmatter"]["metadata"] == {"version": "1.0"}
    read = await handshake_client.read_resource("skill://fixture-tour/references/checklist.md")
    assert read["contents"][0]["mimeType"] == "text/markdown"


def test_the_endpoints_naming_the_extension_advertise_it_beside_the_installed_tasks_and_the_others_do_not() -> None:
    for name in ("conformance", "server"):
        served = get_endpoint(name).handler.capabilities(Era.STATELESS)["extensions"]
        assert served[SKILLS] == {"directoryRead": True}
        assert "io.modelcontextprotocol/tasks" in served
    adapter = get_endpoint("adapter").handler.capabilities(Era.STATELESS)
    assert SKILLS not in adapter.get("extensions", {})
    assert not any(item["uri"].startswith("skill://") for item in adapter_resources())


def adapter_resources() -> list[dict[str, Any]]:
    return MCPTestClient("adapter", scope="SYSTEM", era="stateless").sync.list_resources()


async def test_an_endpoint_not_serving_skills_answers_their_methods_as_unknown() -> None:
    client = MCPTestClient("adapter", scope="SYSTEM", era="stateless")
    reply: Any = await client.handler.handle(stateless("skills/list"), client.connection)
    assert reply["error"] == {"code": -32601, "message": "Method not found: skills/list"}


@pytest.mark.django_db
def test_the_demo_s_protected_mcp_refuses_skills_to_callers_without_credentials_and_serves_the_rest() -> None:
    client = Client()
    refused = post(client, stateless("skills/list"), stateless_headers("skills/list"))
    assert refused.status_code == 401
    assert "skill://" not in refused.content.decode()
    user = get_user_model().objects.create_user("reader")
    token = Token.objects.create(user=user).key
    headers = {**stateless_headers("skills/list"), "Authorization": f"Token {token}"}
    served = post(client, stateless("skills/list"), headers)
    assert served.status_code == 200, served.content
    assert [entry["frontmatter"]["name"] for entry in json.loads(served.content)["result"]["skills"]] == [
        "book-search",
        "catalogue-report",
        "fixture-tour",
    ]


def test_a_gateway_endpoint_never_serves_the_projects_skills_even_where_the_extension_is_installed() -> None:
    with with_settings(EXTENSIONS=["mcp_django.skills.SkillsExtension"]):
        gateway = get_endpoint("gateway")
        assert gateway.mode == "gateway"
        assert SKILLS in [extension.identifier for extension in gateway.served_extensions.offered]
        assert SKILLS not in gateway.served_extensions.capabilities
