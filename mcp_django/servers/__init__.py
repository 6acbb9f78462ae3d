"""Adapters that run ASGI servers with mcp_django's request limits (docs/deployment.md)."""
