"""Resource subscriptions through the round-robin (tests/live/test_subscriptions_live.py): scope applies to
them whichever worker answers.

Left out: `test_a_subscription_survives_kill_9_and_a_restart`, about one daphne killed and started again
on its own SQLite copy; a worker killed behind the round-robin is tests/production/test_worker_killed.py.
"""

from __future__ import annotations

import pytest

from tests.live.test_subscriptions_live import *  # the tests, collected here against the round-robin `example_server`

pytestmark = pytest.mark.production

del test_a_subscription_survives_kill_9_and_a_restart  # noqa: F821  # one process's crash (docstring)
