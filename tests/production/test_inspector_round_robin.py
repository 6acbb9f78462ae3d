"""The MCP Inspector's CLI through the round-robin (tests/live/test_inspector_cli.py).

Collected here against `example_server`, two workers (daphne and uvicorn) on PostgreSQL and the Redis channel
layer behind the round-robin (tests/production/conftest.py): each request goes to the next worker.
"""

from __future__ import annotations

import pytest

from tests.live.test_inspector_cli import *  # the tests, collected here against the round-robin `example_server`

pytestmark = pytest.mark.production
