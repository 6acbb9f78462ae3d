"""The example project's fast path, and the requests it leaves to Django, through the round-robin
(tests/live/test_fast_path_live.py).

Collected here against `example_server`, two workers (daphne and uvicorn) on PostgreSQL and the Redis channel
layer behind the round-robin (tests/production/conftest.py): each request goes to the next worker.
"""

from __future__ import annotations

import pytest

from tests.live.test_fast_path_live import *  # the tests, collected here against the round-robin `example_server`

pytestmark = pytest.mark.production
