"""The example project's log under daphne: each record written once."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import LiveServer

pytestmark = pytest.mark.live


def test_a_404_is_logged_once(example_server: LiveServer) -> None:
    path = f"/no-such-page-{time.monotonic_ns()}"

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(example_server.url(path), timeout=10)
    deadline = time.monotonic() + 5
    while f'"GET {path}" 404' not in example_server.log_tail(400) and time.monotonic() < deadline:
        time.sleep(0.05)  # daphne writes the access line after Django's warning: once it is there, both are

    lines = example_server.log_tail(400).splitlines()
    assert refused.value.code == 404
    assert len([line for line in lines if line.endswith(f"Not Found: {path}")]) == 1, "\n".join(lines[-20:])
