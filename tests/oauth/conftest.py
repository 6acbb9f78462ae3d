"""Fixtures of the OAuth tests: the credential cache's movable clock, shared with the access tests."""

from tests.access.test_auth_cache import clock  # noqa: F401  # a fixture: pytest finds it here
