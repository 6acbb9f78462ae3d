"""Test your own tools, resources and prompts the way mcp_django tests itself (docs/testing.md).

- `MCPTestClient` (`mcp_django.testing.client`): in memory, straight to an endpoint's protocol core.
- `MCPHTTPTestClient` (`mcp_django.testing.http`): over real HTTP to a running server, either era.
- the pytest plugin (`mcp_django.testing.pytest_plugin`, active once the package is installed): the
  `mcp_client`, `mcp_http_client` and `mcp_era` fixtures.
- the assertions `assert_tool_result`, `assert_tool_error`, `assert_mcp_error`, and `MCPCallError`.

Every name is importable from here. The package imports its modules on first use, so the pytest
plugin, loaded before Django is configured, imports no Django.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mcp_django.client.methods import MCPClientMethods
    from mcp_django.exceptions import MCPCallError
    from mcp_django.testing.client import (
        MCPTestClient,
        RaisedMCPError,
        assert_mcp_error,
        assert_tool_error,
        assert_tool_result,
        result_text,
    )
    from mcp_django.testing.http import MCPHTTPTestClient

__all__ = [
    "MCPCallError",
    "MCPClientMethods",
    "MCPHTTPTestClient",
    "MCPTestClient",
    "RaisedMCPError",
    "assert_mcp_error",
    "assert_tool_error",
    "assert_tool_result",
    "result_text",
]

_HOMES: Final = {name: "mcp_django.testing.client" for name in __all__} | {
    "MCPHTTPTestClient": "mcp_django.testing.http",
    "MCPClientMethods": "mcp_django.client.methods",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
