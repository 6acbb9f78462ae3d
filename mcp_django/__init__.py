"""mcp_django: serve the Model Context Protocol from Django URL routes.

The public API for declaring what a server offers:

    import mcp_django

    @mcp_django.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

and, in a URLconf, `*mcp_django.endpoint("ops/mcp", name="ops", ...)` (`mcp_django.urls.endpoint`).

This module imports no Django: the protocol core (`mcp_django.protocol`) is
imported through it and must stay usable without settings. `endpoint` is loaded
on first use (it brings Django's URL machinery and the transports), so
`import mcp_django` stays as light as the declarations.
"""

from typing import TYPE_CHECKING, Any

from mcp_django import content
from mcp_django.context import Context
from mcp_django.declarations import App, DeclarationError, ToolAnnotations, ToolError
from mcp_django.exceptions import MCPError, RegistryFrozen
from mcp_django.providers import PromptProvider, ResourceProvider, ToolProvider
from mcp_django.registry import Registry, default_registry
from mcp_django.scopes import Scope
from mcp_django.version import __version__

if TYPE_CHECKING:
    from mcp_django.urls import endpoint

__all__ = [
    "App",
    "Context",
    "DeclarationError",
    "MCPError",
    "PromptProvider",
    "Registry",
    "RegistryFrozen",
    "ResourceProvider",
    "Scope",
    "ToolAnnotations",
    "ToolError",
    "ToolProvider",
    "__version__",
    "completion",
    "content",
    "default_registry",
    "endpoint",
    "prompt",
    "resource",
    "tool",
]

tool = default_registry.tool
resource = default_registry.resource
prompt = default_registry.prompt
completion = default_registry.completion


def __getattr__(name: str) -> Any:
    """`endpoint`, imported from `mcp_django.urls` when first asked for."""
    if name == "endpoint":
        from mcp_django.urls import endpoint

        return endpoint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
