"""mcp_django: serve the Model Context Protocol from Django URL routes.

The public API for declaring what a server offers:

    import mcp_django

    @mcp_django.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

This module imports no Django: the protocol core (`mcp_django.protocol`) is
imported through it and must stay usable without settings.
"""

from mcp_django import content
from mcp_django.context import Context
from mcp_django.declarations import App, DeclarationError, ToolAnnotations, ToolError
from mcp_django.exceptions import RegistryFrozen
from mcp_django.providers import PromptProvider, ResourceProvider, ToolProvider
from mcp_django.registry import Registry, default_registry
from mcp_django.scopes import Scope
from mcp_django.version import __version__

__all__ = [
    "App",
    "Context",
    "DeclarationError",
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
    "prompt",
    "resource",
    "tool",
]

tool = default_registry.tool
resource = default_registry.resource
prompt = default_registry.prompt
completion = default_registry.completion
