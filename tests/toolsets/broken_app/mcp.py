"""Declares one tool, then fails as a typo would: what comes after the failure is never declared."""

from mcp_django.registry import Registry

registry = Registry("tests-broken-app")


@registry.tool
def reached() -> str:
    """Declared before the failure."""
    return "reached"


undefined_name  # type: ignore[name-defined]  # noqa: B018, F821  # the mistake this app makes


@registry.tool
def never_reached() -> str:
    """Declared after the failure: left out."""
    return "never"
