"""The admin's views of MCP Apps: the dashboard lists the tools with views, the audit list tells a view's calls."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from mcp_django.models import ToolCallRecord

pytestmark = [pytest.mark.urls("tests.ui.admin_urls"), pytest.mark.django_db]

DASHBOARD = "/admin/mcp_django/controlroom/"
CALLS = "/admin/mcp_django/toolcallrecord/"


def cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]


def test_the_dashboard_lists_each_tool_with_a_view_its_endpoint_and_whether_it_is_served(admin_client: Client) -> None:
    page = admin_client.get(DASHBOARD).content.decode()

    table = page.split('id="mcp-apps"')[1].split("</section>")[0]
    rows = [cells(row) for row in re.findall(r"<tr><td>.*?</tr>", table, re.S)]
    assert rows == [
        ["apps-adapter", "stock", "ui://apps/apps_test/stock.html", "apps_test/stock.html", "apps-test.stock",
         "model, app", "served"],
        ["apps-adapter", "restock", "ui://apps/apps_test/stock.html", "apps_test/stock.html", "apps-test.stock",
         "app", "served"],
        ["apps-adapter", "shelf", "ui://shelf", "apps_test/whoami.html", "ShelfToolset", "model", "served"],
        ["apps-server", "server_card", "ui://server-card", "apps_test/whoami.html", "registry", "model, app",
         "not served (W200)"],
    ]  # fmt: skip


def test_the_audit_list_shows_and_filters_the_calls_a_view_made(admin_client: Client) -> None:
    ToolCallRecord.objects.create(tool="stock", endpoint="apps-adapter", outcome="ok", duration_ms=1, origin="app")
    ToolCallRecord.objects.create(tool="count", endpoint="apps-adapter", outcome="ok", duration_ms=1)

    page = admin_client.get(CALLS).content.decode()
    from_views = admin_client.get(CALLS + "?origin=app").content.decode()

    assert 'field-origin">app<' in page
    assert 'field-origin">agent<' in page
    assert 'field-tool">stock<' in from_views
    assert 'field-tool">count<' not in from_views
