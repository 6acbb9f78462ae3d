"""`manage.py mcp_inspect`, driven with call_command on the example project's endpoints and the real database."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command

from example_project.demo.models import Book
from mcp_django.control.state import control_state
from mcp_django.endpoints import Endpoint
from mcp_django.inspection import inspect_endpoint
from mcp_django.models import ProviderState, ToolState
from mcp_django.scopes import Scope

pytestmark = pytest.mark.django_db


def inspect(*args: str) -> str:
    out = io.StringIO()
    call_command("mcp_inspect", *args, stdout=out)
    return out.getvalue()


def report(*args: str) -> dict[str, Any]:
    (endpoint,) = json.loads(inspect("--json", *args))["endpoints"]
    return dict(endpoint)


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


@pytest.fixture
def alice(django_user_model: Any) -> Any:
    return django_user_model.objects.create(username="alice")


@pytest.fixture
def admin_state() -> Iterator[None]:
    """Rows the test switches in the admin, read fresh before and after (the state is process-wide)."""
    control_state.invalidate()
    yield
    control_state.invalidate()


def test_a_user_is_shown_what_the_endpoint_serves_and_what_needs_more_scope(alice: Any) -> None:
    server = report("--endpoint", "server", "--user", "alice")
    tools = by_name(server["tools"])

    assert server["caller"] == {"user": "alice", "scope": "USER"}
    assert (server["endpoint"], server["path"], server["mode"]) == ("server", "/mcp", "server")
    assert tools["search_books"] | {"description": None} == {
        "name": "search_books",
        "title": None,
        "description": None,
        "scope": "USER",
        "permissions": [],
        "source": "registry:default",
        "state": "on",
        "served": True,
    }
    assert (tools["reindex_catalogue"]["scope"], tools["reindex_catalogue"]["served"]) == ("TEAM", False)
    assert (tools["curate_book"]["permissions"], tools["curate_book"]["served"]) == (["demo.curate_book"], False)
    assert [item["name"] for item in server["resource_templates"]] == ["demo://books/{book_id}"]
    assert [item["name"] for item in server["prompts"]] == ["review_book"]


def test_a_scope_is_shown_what_that_scope_reaches(admin_state: None) -> None:
    Book.objects.create(title="Dune", author="Frank Herbert", year=1965)
    adapter = report("--endpoint", "/mcp/adapter", "--scope", "team")
    tools = by_name(adapter["tools"])

    assert adapter["caller"] == {"user": None, "scope": "TEAM"}
    assert tools["about_dune"]["source"] == "provider:demo.books"
    assert tools["books_by_frank_herbert"] | {"description": None} == {
        "name": "books_by_frank_herbert",
        "title": None,
        "description": None,
        "scope": "TEAM",
        "permissions": [],
        "source": "provider:demo.authors",
        "state": "on",
        "served": True,
    }
    assert {item["scope"] for item in tools.values() if not item["served"]} == {"SYSTEM"}


def test_what_the_admin_switched_off_is_listed_as_off_and_not_served(admin_state: None) -> None:
    Book.objects.create(title="Dune", author="Frank Herbert", year=1965)
    ProviderState.objects.update_or_create(provider_id="demo.books", defaults={"enabled": False})
    ToolState.objects.update_or_create(name="search_books", defaults={"enabled": False})
    control_state.invalidate()

    adapter = by_name(report("--endpoint", "adapter", "--scope", "SYSTEM")["tools"])
    server = by_name(report("--endpoint", "server", "--scope", "SYSTEM")["tools"])

    assert (adapter["about_dune"]["state"], adapter["about_dune"]["served"]) == ("off (provider switched off)", False)
    assert (server["search_books"]["state"], server["search_books"]["served"]) == ("off (tool switched off)", False)
    assert (server["catalogue_stats"]["state"], server["catalogue_stats"]["served"]) == ("on", True)


def test_a_tool_that_needs_a_permission_is_served_to_a_superuser_and_to_whoever_holds_it(
    alice: Any, django_user_model: Any
) -> None:
    django_user_model.objects.create_superuser("root")
    alice.user_permissions.add(Permission.objects.get(codename="curate_book"))

    for username in ("root", "alice"):
        tools = by_name(report("--endpoint", "server", "--user", username)["tools"])
        assert (tools["curate_book"]["permissions"], tools["curate_book"]["served"]) == (["demo.curate_book"], True)
    text = inspect("--endpoint", "server", "--user", "root")
    assert "    + curate_book  scope USER, needs demo.curate_book, registry:default\n" in text


def test_without_a_user_or_a_scope_everything_is_listed_with_what_it_needs() -> None:
    server = report("--endpoint", "server")
    tools = by_name(server["tools"])

    assert server["caller"] is None
    assert {item["served"] for item in tools.values()} == {None}
    assert (tools["curate_book"]["permissions"], tools["import_books"]["permissions"]) == (
        ["demo.curate_book"],
        ["demo.add_book"],
    )
    text = inspect("--endpoint", "server")
    assert (
        "server (server) at /mcp\n  everything it defines (--user or --scope shows what one caller is served)\n" in text
    )
    assert "  Tools (10)\n" in text
    assert "      curate_book  scope USER, needs demo.curate_book, registry:default\n" in text


def test_the_text_report_lists_every_endpoint_with_marks_for_what_is_served(alice: Any) -> None:
    text = inspect("--user", "alice")

    assert "server (server) at /mcp\n  as alice, scope USER\n  Tools (7 of 10 served)\n" in text
    assert "    - reindex_catalogue  scope TEAM, registry:default\n" in text
    assert "    + search_books  scope USER, registry:default\n" in text
    assert "adapter (adapter) at /mcp/adapter\n" in text
    # the guarded endpoint's chain asks the demo's interceptor server, which no server runs here
    assert "guarded (server) at /guarded/mcp\n  could not be listed: -32603: Interceptor server 'demo'" in text


def test_an_endpoint_that_cannot_be_listed_says_why_in_json() -> None:
    guarded = report("--endpoint", "guarded", "--scope", "USER")

    assert guarded["error"].startswith("-32603: Interceptor server 'demo' could not be listed")
    assert "tools" not in guarded


def test_a_tool_is_called_as_the_user_and_its_result_printed(alice: Any) -> None:
    Book.objects.create(title="Dune", author="Frank Herbert", year=1965)

    result = json.loads(
        inspect("--endpoint", "server", "--user", "alice", "--call", "search_books", "--arguments", '{"query": "dune"}')
    )

    assert result["content"][0]["text"].endswith("Dune (Frank Herbert, 1965)")


def test_a_resource_is_read_from_the_command_line(alice: Any) -> None:
    book = Book.objects.create(title="Dune", author="Frank Herbert", year=1965)

    result = json.loads(inspect("--endpoint", "server", "--user", "alice", "--read", f"demo://books/{book.pk}"))

    assert json.loads(result["contents"][0]["text"])["title"] == "Dune"


def test_a_tool_the_caller_does_not_reach_is_refused_as_unknown(alice: Any) -> None:
    with pytest.raises(
        CommandError, match=r"^The endpoint refused: Unknown tool: reindex_catalogue \(JSON-RPC error -32602\)$"
    ):
        inspect("--endpoint", "server", "--user", "alice", "--call", "reindex_catalogue")


def test_a_failing_tool_prints_its_result_and_fails_the_command(alice: Any) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError, match="isError"):
        call_command(
            "mcp_inspect", "--endpoint", "server", "--user", "alice", "--call", "search_books",
            "--arguments", '{"query": 1}', stdout=out,
        )  # fmt: skip

    assert json.loads(out.getvalue())["isError"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--endpoint", "nowhere"), r"^No endpoint is mounted as 'nowhere'; the endpoints are: .*server"),
        (("--scope", "boss"), r"^'boss' is not a scope; use one of USER, TEAM, SYSTEM$"),
        (("--user", "nobody", "--endpoint", "server"), r"^Unknown user 'nobody'\.$"),
        (("--call", "search_books", "--scope", "USER"), r"^Name the endpoint to call or read on with --endpoint\.$"),
        (("--endpoint", "server", "--scope", "USER", "--call", "x", "--arguments", "[1]"), "must be a JSON object"),
    ],
)
def test_mistakes_are_command_errors(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        inspect(*args)


@pytest.mark.django_db(transaction=True)
async def test_a_gateway_is_inspected_through_what_its_remote_lists(live_server: Any) -> None:
    gateway = Endpoint(
        "inspected/gateway/mcp",
        name="inspected-gateway",
        backend={"URL": live_server.url + "/conformance/mcp"},
        allow_anonymous=True,
        interceptors=[],
    )

    report = await inspect_endpoint(gateway, user=None, scope=Scope.USER)

    tools = by_name(report["tools"])
    assert tools["test_simple_text"] | {"description": None} == {
        "name": "test_simple_text",
        "title": None,
        "description": None,
        "scope": "USER",
        "permissions": [],
        "source": "remote:gateway inspected-gateway",
        "state": "on",
        "served": True,
    }
    assert [item["name"] for item in report["resource_templates"]] == ["test://template/{id}/data"]
