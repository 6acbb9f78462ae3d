"""The admin in Debian's chromium through the round-robin (tests/live/test_admin_browser.py): the login, the
CSRF-checked action posts and the control room alternate between the workers, and the official client,
whose lists alternate too, sees the provider go and come back.

The screenshots of this run go to a temporary directory: `test-artifacts/` keeps the single daphne's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import test_admin_browser
from tests.live.test_admin_browser import *  # the tests, collected here against the fixtures below
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def admin_server(production: ProductionSite) -> Iterator[RoundRobin]:
    """A site of its own: the test switches a provider off and on."""
    with production.workers(production.database()) as site:
        yield site


@pytest.fixture(autouse=True)
def _screenshots_elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(test_admin_browser, "ARTIFACTS", tmp_path / "artifacts")
