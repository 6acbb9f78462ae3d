"""Fixtures of the OAuth tests: the credential cache's movable clock, shared with the access tests."""

from collections.abc import Iterator

import pytest
from django.core.cache import cache

from tests.access.test_auth_cache import clock, steady  # noqa: F401  # fixtures: pytest finds them here


@pytest.fixture(autouse=True)
def registration_counts() -> Iterator[None]:
    """Every test registers from 127.0.0.1: each starts with no registrations counted against it."""
    cache.clear()
    yield
    cache.clear()
