"""The errors of the Django side of mcp_django (protocol errors are in `mcp_django.protocol.jsonrpc`)."""

from __future__ import annotations

__all__ = ["RegistryFrozen"]


class RegistryFrozen(RuntimeError):
    """A registration came after `ready()`: registries, the provider registry and buses are frozen by then.

    Declare tools, resources, prompts, providers and bus actions in modules loaded while Django starts
    (an app's `mcp.py`, `mcp_providers`, `mcp_bus_modules`).
    """
