"""Pinned remote definitions: a remote cannot silently change what one of its tools or prompts does.

With `REMOTE_DEFINITIONS = "pin"` (the default), the first time a gateway or hub lists a remote tool or
prompt its definition (name, description, schemas, annotations: the whole item as the remote listed it,
after `listing` cleaned it) is pinned in a `RemoteDefinition` row, by a SHA-256 of its canonical JSON. From
then on:

- the same definition is served as before;
- a different one is **withheld**: left out of every list and not callable (`get_tool` finds nothing), the
  row marked `changed` with the new definition beside the approved one, until an admin approves it in the
  admin (which shows the diff; the approval is in the admin's history); a remote that goes back to the
  approved definition is served again;
- a tool or prompt first seen is pinned and served (trust on first use): a new remote's tools are not
  held back, only their later changes.

`"trust"` serves whatever the remote lists (check `mcp_django_gateway.W250`). Resources are not pinned.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.client.conf import client_settings
from mcp_django.runtime.executor import run_sync

logger = logging.getLogger("mcp_django.gateway")

KINDS: Final[Mapping[str, str]] = {"tools/list": "tool", "prompts/list": "prompt"}
"""The list methods whose items are pinned, and the kind each item is."""


def pinning() -> bool:
    """True when remote definitions are pinned (`REMOTE_DEFINITIONS = "pin"`)."""
    return bool(client_settings.REMOTE_DEFINITIONS != "trust")


def digest_of(definition: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a definition's canonical JSON (keys sorted)."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def pinned_items(server: str, method: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items of a remote's `method` listing that may be served: first seen (now pinned) or as approved."""
    kind = KINDS.get(method)
    if kind is None or not items or not pinning():
        return items
    return await run_sync(_pin, server, kind, items)


async def withheld(server: str, kind: str, name: str) -> bool:
    """True when the remote's `kind` `name` is withheld: its definition changed and no admin approved it yet."""
    if not pinning():
        return False
    return await run_sync(_withheld, server, kind, name)


def _withheld(server: str, kind: str, name: str) -> bool:
    from mcp_django.gateway.models import RemoteDefinition

    return RemoteDefinition.objects.filter(
        server=server, kind=kind, name=name, state=RemoteDefinition.State.CHANGED
    ).exists()


def _pin(server: str, kind: str, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    from django.db import IntegrityError, transaction
    from django.utils import timezone

    from mcp_django.gateway.models import RemoteDefinition

    rows = {row.name: row for row in RemoteDefinition.objects.filter(server=server, kind=kind)}
    served: list[dict[str, Any]] = []
    for item in items:
        name, digest = str(item.get("name")), digest_of(item)
        row = rows.get(name)
        if row is None:
            try:
                with transaction.atomic():
                    RemoteDefinition.objects.create(
                        server=server, kind=kind, name=name, approved=item, approved_digest=digest
                    )
            except IntegrityError:  # another worker pinned it first: serve it only if it is the same
                row = RemoteDefinition.objects.get(server=server, kind=kind, name=name)
            else:
                served.append(item)
                continue
        if row.approved_digest == digest:
            if row.state == RemoteDefinition.State.CHANGED:  # the remote went back to the approved definition
                RemoteDefinition.objects.filter(pk=row.pk).update(
                    state=RemoteDefinition.State.PINNED, seen=None, seen_digest=""
                )
            served.append(item)
        elif row.seen_digest != digest:
            RemoteDefinition.objects.filter(pk=row.pk).update(
                state=RemoteDefinition.State.CHANGED, seen=item, seen_digest=digest, changed_at=timezone.now()
            )
            logger.warning(
                "Remote server %r changed the definition of its %s %r: withheld until an admin approves it",
                server,
                kind,
                name,
            )
    return served
