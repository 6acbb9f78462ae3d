"""The example project's landing page at `/`: every mounted endpoint, linked, with its mode."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from mcp_django.endpoints import mounted_endpoints

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
