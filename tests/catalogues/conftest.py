"""Fixtures of the catalogue tests: the demo's books, as the toolset tests seed them."""

from tests.toolsets.conftest import books

__all__ = ["books"]
