"""The example project as `make demo` serves it: the landing page at `/`, and the port it is served on."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.authtoken.models import Token

from example_project.demo.models import Book
from mcp_django.endpoints import mounted_endpoints
from tests.conftest import ROOT

pytestmark = [pytest.mark.urls("example_project.urls"), pytest.mark.django_db]


def test_the_landing_page_links_every_mounted_endpoint_with_its_mode_and_the_ways_in() -> None:
    response = Client().get("/")

    page = response.content.decode()
    links = set(re.findall(r'href="([^"]+)"', page))
    assert response.status_code == 200
    endpoints = mounted_endpoints()
    assert {"server", "adapter", "gateway"} <= {endpoint.mode for endpoint in endpoints}
    for endpoint in endpoints:
        assert f"http://testserver/{endpoint.path}" in links, endpoint
        assert re.search(rf"<td>{re.escape(endpoint.name)}</td>.*?<strong>{endpoint.mode}</strong>", page, re.S)
    assert {"/admin/", "/admin/mcp_django/controlroom/"} <= links
    assert 'http://testserver/mcp/adapter \\\n  --header "Authorization: Bearer &lt;token&gt;"' in page
    assert "alice/alice" in page


@pytest.mark.django_db(transaction=True)
def test_the_landing_page_s_curl_line_calls_a_tool_as_written() -> None:
    page = Client().get("/").content.decode()
    curl = html.unescape(re.search(r'<pre id="curl">(.*?)</pre>', page, re.S).group(1))  # type: ignore[union-attr]
    url = re.search(r"curl -sS (\S+)", curl).group(1)  # type: ignore[union-attr]
    headers = dict(header.split(": ", 1) for header in re.findall(r"-H '([^']+)'", curl))
    body = re.search(r"-d '(.*)'", curl, re.S).group(1)  # type: ignore[union-attr]

    response = Client(headers=headers).post(
        url.removeprefix("http://testserver"), body, content_type=headers["Content-Type"]
    )

    assert response.status_code == 200, response.content
    result = json.loads(response.content)["result"]
    assert "isError" not in result, result
    assert "books" in result["structuredContent"]


@pytest.mark.django_db(transaction=True)
def test_the_landing_page_s_idempotent_curl_line_adds_the_book_once_when_sent_twice(django_user_model: Any) -> None:
    bob = django_user_model.objects.create(username="bob")
    bob.user_permissions.add(Permission.objects.get(codename="add_book"))
    token = Token.objects.create(user=bob).key
    page = Client().get("/").content.decode()
    curl = html.unescape(re.search(r'<pre id="idempotent-curl">(.*?)</pre>', page, re.S).group(1))  # type: ignore[union-attr]
    url = re.search(r"curl -sS (\S+)", curl).group(1)  # type: ignore[union-attr]
    headers = dict(header.split(": ", 1) for header in re.findall(r"-H '([^']+)'", curl))
    headers["Authorization"] = f"Bearer {token}"  # the page names bob's token, which seed_demo prints
    body = re.search(r"-d '(.*)'", curl, re.S).group(1)  # type: ignore[union-attr]

    answers = [
        Client(headers=headers).post(url.removeprefix("http://testserver"), body, content_type=headers["Content-Type"])
        for _ in range(2)
    ]

    results = [json.loads(answer.content)["result"] for answer in answers]
    assert (
        results[0]["content"] == results[1]["content"] == [{"type": "text", "text": "Added 1 books to the catalogue."}]
    )
    assert results[1]["_meta"]["mcp-django.dev/idempotent-replay"] is True
    assert Book.objects.filter(title="Kindred").count() == 1


def test_demo_port_reaches_every_url_the_example_project_builds_for_itself() -> None:
    # A fresh interpreter: the settings module reads the environment once, at import.
    env = {
        key: value for key, value in os.environ.items() if key not in ("MCP_EXAMPLE_BASE_URL", "DEMO_HOST", "DEMO_PORT")
    }
    script = (
        "import json; from django.conf import settings; mcp = settings.MCP_DJANGO; "
        "print(json.dumps([s['URL'] for s in mcp['SERVERS'].values()]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "example_project.settings", "DEMO_PORT": "8123"},
        capture_output=True,
        text=True,
        check=True,
    )

    urls = json.loads(run.stdout)
    assert urls
    assert all(url.startswith("http://127.0.0.1:8123/") for url in urls), urls
