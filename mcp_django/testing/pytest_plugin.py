"""The pytest plugin shipped with mcp_django (entry point `pytest11`): fixtures to test MCP endpoints.

Installed with the package and active in every pytest run; it imports nothing of Django until a
fixture is used, so projects without Django are unaffected. The fixtures:

- `mcp_client`: makes in-memory `MCPTestClient`s for any endpoint or registry, as a user or with a
  scope: `mcp_client("/mcp", user=alice)`, `mcp_client("mcp/adapter", scope="TEAM", era="stateless")`.
- `mcp_http_client`: makes `MCPHTTPTestClient`s over real HTTP to pytest-django's `live_server`:
  `async with mcp_http_client("/mcp", user=alice, era="stateless") as client: ...`.
- `mcp_era`: parametrizes a test over both eras (`"handshake"`, `"stateless"`).

At the end of each test, before its fixtures (its database) are torn down, it stops the events app's
webhook deliverer when a test started one (`mcp_django.events.delivery.stop()`): left running, the thread
would query the database after the test's access to it ended.

The assertion helpers live in `mcp_django.testing` (`assert_tool_result`, `assert_tool_error`,
`assert_mcp_error`). docs/testing.md.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mcp_django.testing.client import MCPTestClient
    from mcp_django.testing.http import MCPHTTPTestClient

ERAS = ("handshake", "stateless")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Stop the webhook deliverer a test started (an emit starts it), before the test's fixtures are torn down.

    Only where the events app's deliverer is loaded already: the plugin imports nothing of Django itself.
    """
    delivery = sys.modules.get("mcp_django.events.delivery")
    if delivery is not None:
        delivery.stop()


@pytest.fixture(params=ERAS)
def mcp_era(request: pytest.FixtureRequest) -> str:
    """Each era in turn: the test runs once with `"handshake"` and once with `"stateless"`."""
    era: str = request.param
    return era


@pytest.fixture
def mcp_client() -> Callable[..., MCPTestClient]:
    """Make an in-memory client: `mcp_client(target, *, user=None, scope=None, era="handshake", ...)`.

    `target` is an endpoint's name or path, a dotted path to an `Endpoint` or `Registry`, or one of
    them; the other arguments are `MCPTestClient`'s.
    """
    from mcp_django.testing.client import MCPTestClient

    def make(target: Any, **options: Any) -> MCPTestClient:
        return MCPTestClient(target, **options)

    return make


@pytest.fixture
def mcp_http_client(live_server: Any) -> Callable[..., MCPHTTPTestClient]:
    """Make a client over HTTP to pytest-django's `live_server`: `mcp_http_client(path, *, user=None, ...)`.

    The other arguments are `MCPHTTPTestClient`'s (`token`, `headers`, `era`, `timeout`). Use the
    client as `async with`, so it closes on the test's event loop. The live server makes the test use
    a transactional database, so the users and tokens a test creates are seen by the server's threads.
    """
    from mcp_django.testing.http import MCPHTTPTestClient

    def make(path: str, **options: Any) -> MCPHTTPTestClient:
        return MCPHTTPTestClient(live_server.url + "/" + path.lstrip("/"), **options)

    return make
