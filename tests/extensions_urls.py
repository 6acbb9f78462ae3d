"""Endpoints whose own `extensions=` and `exclude_extensions=` the checks read (tests/test_extensions.py)."""

from __future__ import annotations

from django.core.checks import CheckMessage, Warning

from mcp_django.extensions import Extension
from mcp_django.urls import endpoint


class CheckedExtension(Extension):
    """An extension no setting installs, with a check of its own."""

    identifier = "example.com/checked"

    def check(self) -> list[CheckMessage]:
        return [Warning("Receipts are not printed.", hint="Plug in the printer.", id="tests.W001")]


urlpatterns = [
    *endpoint("one/mcp", name="one", extensions=[CheckedExtension]),
    *endpoint("two/mcp", name="two", extensions=[CheckedExtension], exclude_extensions=["example.com/missing"]),
    *endpoint("three/mcp", name="three", extensions=["tests.extensions_urls.NotThere"]),
]
