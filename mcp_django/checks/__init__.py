"""The core's system checks, one module per concern; each extension keeps its own beside its code.

`MCPDjangoConfig.ready()` imports the modules that register checks; this package imports none of them
itself, so `mcp_django.checks.support` (what every check module writes its messages with) stays light.
IDs are documented in `docs/checks.md`; never renumber one.
"""
