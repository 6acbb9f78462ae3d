"""The approvals' checks (mcp_django.E124, mcp_django_tasks.E104, W102), each message asserted whole; and the
fail-closed call of a tool that needs approval where nothing runs approvals."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from django.core.checks import CheckMessage, Error, Warning
from django.test import override_settings

from mcp_django import Registry
from mcp_django.checks.endpoints import check_approval_runners
from mcp_django.protocol.jsonrpc import INVALID_REQUEST
from mcp_django.tasks.checks import check_tasks
from mcp_django.testing import MCPTestClient, assert_mcp_error
from mcp_django.urls import endpoint

gated = Registry("approval-checks")


@gated.tool(approval="demo.delete_bok")
def purge_shelf(shelf: str) -> str:
    """Remove a shelf."""
    return f"purged {shelf}"


urlpatterns = [
    *endpoint("gated/mcp", name="gated", registry=gated, allow_anonymous=True),
    *endpoint(
        "gated-plain/mcp",
        name="gated-plain",
        registry=gated,
        allow_anonymous=True,
        exclude_extensions=["io.modelcontextprotocol/tasks"],
    ),
]
"""A URLconf (this module): the gated tool with the tasks extension, and without it."""


def about_approvals(messages: Sequence[CheckMessage]) -> list[CheckMessage]:
    return [
        message
        for message in messages
        if getattr(message, "id", "") in ("mcp_django_tasks.E104", "mcp_django_tasks.W102")
    ]


def test_the_example_projects_approvals_name_permissions_that_exist() -> None:
    assert about_approvals(check_tasks()) == []
    assert check_approval_runners() == []


@pytest.mark.django_db
def test_e104_an_approval_naming_a_permission_nobody_can_hold() -> None:
    with override_settings(ROOT_URLCONF="tests.tasks.test_approval_checks"):
        assert about_approvals(check_tasks()) == [
            Error(
                "tool 'purge_shelf': approval needs unknown permission 'demo.delete_bok'.",
                hint="Name an existing permission, 'app_label.codename', that approvers hold.",
                id="mcp_django_tasks.E104",
            )
        ]


def test_w102_without_a_database_the_destructive_tools_approval_is_not_confirmed() -> None:
    with override_settings(MCP_DJANGO={"DESTRUCTIVE_TOOLS_APPROVAL": "shop.approve"}):
        assert about_approvals(check_tasks()) == [
            Warning(
                "DESTRUCTIVE_TOOLS_APPROVAL: approval permission 'shop.approve' is not confirmed.",
                hint="No model declares it and the database could not be read: run migrate, then check.",
                id="mcp_django_tasks.W102",
            )
        ]


def test_e124_tools_needing_approval_where_no_extension_runs_approvals() -> None:
    with override_settings(ROOT_URLCONF="tests.tasks.test_approval_checks"):
        assert check_approval_runners() == [
            Error(
                "Tools need approval (purge_shelf), but no extension runs approvals.",
                hint="Add 'mcp_django.tasks' to INSTALLED_APPS (docs/side-effects.md), or drop approval= from them.",
                id="mcp_django.E124",
            )
        ]


@pytest.mark.django_db(transaction=True)
async def test_where_nothing_runs_approvals_a_gated_tool_is_refused_not_run() -> None:
    with override_settings(ROOT_URLCONF="tests.tasks.test_approval_checks"):
        mcp = MCPTestClient("gated-plain", era="stateless")
        with assert_mcp_error(INVALID_REQUEST, match="needs approval, and nothing here runs approvals"):
            await mcp.call_tool("purge_shelf", {"shelf": "A"})
