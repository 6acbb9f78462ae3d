"""The audit writer on PostgreSQL: a batch sent as one query string stores what the ORM stores, and its lock
wait stays bounded by `AUDIT_DB_TIMEOUT` (`mcp_django.interceptors.audit_store`)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.production.site import ProductionSite

pytestmark = pytest.mark.production


def probe(production: ProductionSite, what: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.production.audit_writer_probe", what],
        env=production.database(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_a_batch_of_awkward_values_is_stored_by_the_writer_as_the_orm_stores_it(production: ProductionSite) -> None:
    found = probe(production, "stored")

    assert found["writer"] == found["orm"]
    assert found["tables"] == 6
    assert found["writer"][0]["user_id"] != "None"
    assert "DROP TABLE" in found["writer"][0]["arguments"]


def test_a_batch_waiting_on_a_locked_table_gives_up_within_the_audit_timeout(production: ProductionSite) -> None:
    found = probe(production, "locked")

    assert found["outcome"].startswith("unavailable: ")
    assert found["waited"] < 3.0
    assert found["stored"] == ["after"]
