"""Fixtures of the catalogue tests: the demo's books, as the toolset tests seed them, and the admin's state
read afresh for each test."""

from collections.abc import Iterator

import pytest

from mcp_django.control.state import control_state
from tests.toolsets.conftest import books

__all__ = ["books", "fresh_state"]


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    """Each test sees what its database says: a tool switched off by an earlier test (its row rolled back)
    would otherwise stay off in the process's snapshot of the admin's state."""
    control_state.invalidate()
    yield
    control_state.invalidate()
