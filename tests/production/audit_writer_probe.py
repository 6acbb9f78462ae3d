"""Run by `test_audit_writer_postgres.py` in a process of its own, on a copy of the seeded PostgreSQL database.

`python -m tests.production.audit_writer_probe stored` writes awkward rows through the audit writer's
`write_rows` and prints each as stored beside the same row stored by the ORM; `... locked` holds the audit
table locked from another connection while `write_rows` runs with a short `AUDIT_DB_TIMEOUT`, and prints
what happened and how long it took. JSON on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def _stored(model: Any, trace_id: str) -> dict[str, Any]:
    row = model.objects.get(trace_id=trace_id)
    fields = ("user_id", "endpoint", "tool", "arguments", "outcome", "duration_ms", "origin", "created")
    return {name: str(getattr(row, name)) for name in fields}


def stored() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from mcp_django.interceptors.audit_store import write_rows
    from mcp_django.models import ToolCallRecord

    user = get_user_model().objects.order_by("pk").first()
    awkward = 'it\'s a \\ "test"; DROP TABLE mcp_django_toolcallrecord; -- é 😀 $$ %s %(x)s ?'
    rows: list[dict[str, Any]] = [
        {
            "trace_id": f"probe-{number}",
            "origin": "agent",
            "tool": awkward[:100],
            "endpoint": "mcp",
            "user_id": user.pk if user and number == 0 else None,
            "arguments": {"text": awkward, "nested": [1, 2.5, None, True, {"q": "'"}]},
            "outcome": "ok",
            "duration_ms": 1.25,
            "created": timezone.now(),
        }
        for number in range(3)
    ]
    write_rows(rows, dedupe=False)
    for row in rows:
        ToolCallRecord.objects.create(**{**row, "trace_id": "orm-" + row["trace_id"]})
    return {
        "writer": [_stored(ToolCallRecord, row["trace_id"]) for row in rows],
        "orm": [_stored(ToolCallRecord, "orm-" + row["trace_id"]) for row in rows],
        "tables": ToolCallRecord.objects.filter(tool__startswith="it's").count(),
    }


def locked() -> dict[str, Any]:
    import psycopg
    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from mcp_django.interceptors.audit_store import Unavailable, write_rows
    from mcp_django.models import ToolCallRecord

    row: dict[str, Any] = {"trace_id": "locked", "origin": "agent", "tool": "echo", "endpoint": "mcp", "user_id": None}
    row |= {"arguments": {}, "outcome": "ok", "duration_ms": 1.0}
    params = connection.get_connection_params()
    holder = psycopg.connect(**{key: value for key, value in params.items() if key != "cursor_factory"})
    holder.execute(f"LOCK TABLE {ToolCallRecord._meta.db_table} IN ACCESS EXCLUSIVE MODE")
    started = time.monotonic()
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "AUDIT_DB_TIMEOUT": 0.3}):
        try:
            write_rows([row], dedupe=False)
            outcome = "written"
        except Unavailable as refused:
            outcome = f"unavailable: {refused}"
    waited = time.monotonic() - started
    holder.rollback()
    holder.close()
    write_rows([{**row, "trace_id": "after"}], dedupe=False)
    stored = ToolCallRecord.objects.filter(trace_id__in=["locked", "after"]).values_list("trace_id", flat=True)
    return {"outcome": outcome, "waited": waited, "stored": sorted(stored)}


def main() -> None:
    import django

    django.setup()
    print(json.dumps({"stored": stored, "locked": locked}[sys.argv[1]]()))


if __name__ == "__main__":
    main()
