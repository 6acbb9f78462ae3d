"""The refresh race of tests/gateway/test_upstream_oauth.py on PostgreSQL: two worker processes find one
user's upstream token expired at once, and the row lock (`SELECT ... FOR UPDATE`) makes one refresh grant."""

from __future__ import annotations

import pytest

from tests.gateway.test_upstream_oauth import (  # the test and its fixtures, collected here on PostgreSQL
    _upstream,  # noqa: F401  # autouse
    test_two_workers_refreshing_one_expired_token_at_once_spend_its_refresh_token_once,  # noqa: F401
    upstream_base,  # noqa: F401
)

pytestmark = pytest.mark.production
