"""The client's callbacks answering a tool's questions through the round-robin (tests/live/test_client_callbacks.py).

In the handshake era the question leaves on the call's SSE stream of one worker and the client's answer, a
POST of its own, may reach the other; the Channels layer (Redis) carries it back.

Collected here against `example_server`, two workers (daphne and uvicorn) on PostgreSQL and the Redis channel
layer behind the round-robin (tests/production/conftest.py): each request goes to the next worker.
"""

from __future__ import annotations

import pytest

from tests.live.test_client_callbacks import *  # the tests, collected here against the round-robin `example_server`

pytestmark = pytest.mark.production
