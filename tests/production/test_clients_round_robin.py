"""The official `mcp` client's live tests (tests/live/test_official_client.py), every request through the round-robin.

Two workers (daphne and uvicorn) on PostgreSQL and the Redis channel layer (`example_server` of
tests/production/conftest.py); HAProxy sends each request to the next worker, so a session's requests, and
a streamed call's answers, alternate between them.
"""

from __future__ import annotations

import pytest

from tests.live.test_official_client import *  # the tests, collected here against the round-robin `example_server`

pytestmark = pytest.mark.production
