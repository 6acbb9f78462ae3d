"""Pinned remote definitions: a remote cannot silently change or add what a gateway or hub serves of it.

With `REMOTE_DEFINITIONS = "pin"` (the default), the first time a gateway or hub lists a remote's tools,
prompts, resources or resource templates, each item's definition (the whole item as the remote listed it,
after `listing` cleaned it: name, description, schemas, annotations) is pinned in a `RemoteDefinition` row,
by a SHA-256 of its canonical JSON. That first listing is the remote as the admin who configured it saw
it. From then on:

- the same definition is served as before;
- a different one is **withheld**: left out of every list and not callable or readable, the row marked
  `changed` with the new definition beside the approved one, until an admin approves it in the admin
  (which shows the diff; the approval is in the admin's history); a remote that goes back to the approved
  definition is served again;
- an item the remote did not list the first time is **new** and withheld the same way until approved (a
  tool added later is as much a rug pull as a tool changed); at most `REMOTE_MAX_LIST_ITEMS` new items per
  remote and kind are kept, the newest (a remote that makes up names on every listing cannot grow the table
  without end).

What the remote never listed is the remote's to answer, as without pinning: a tool a remote in search mode
(`catalogues`) found and the caller calls by name, a URI one of its templates expands to. `"trust"` serves
whatever the remote lists (check `mcp_django_gateway.W250`).
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

KINDS: Final[Mapping[str, tuple[str, str]]] = {
    "tools/list": ("tool", "name"),
    "prompts/list": ("prompt", "name"),
    "resources/list": ("resource", "uri"),
    "resources/templates/list": ("template", "uriTemplate"),
}
"""The list methods whose items are pinned: the kind each item is and the key that names it."""
NAME_MAX: Final = 255
"""`RemoteDefinition.name`'s length: a longer name (a long URI) is pinned under a digest of itself."""


def pinning() -> bool:
    """True when remote definitions are pinned (`REMOTE_DEFINITIONS = "pin"`)."""
    return bool(client_settings.REMOTE_DEFINITIONS != "trust")


def digest_of(definition: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a definition's canonical JSON (keys sorted)."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def pinned_items(server: str, method: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items of a remote's `method` listing that may be served: first seen (now pinned) or as approved."""
    known = KINDS.get(method)
    if known is None or not items or not pinning():
        return items
    return await run_sync(_pin, server, *known, items)


async def withheld(server: str, kind: str, name: str) -> bool:
    """True when the remote's `kind` `name` is withheld: listed changed or new, and no admin approved it yet."""
    if not pinning():
        return False
    return await run_sync(_withheld, server, kind, pin_name(name))


def pin_name(name: str) -> str:
    """The name a definition is pinned under: itself, or a digest of it when longer than the column."""
    if len(name) <= NAME_MAX:
        return name
    return "sha256:" + hashlib.sha256(name.encode()).hexdigest()


def _withheld(server: str, kind: str, name: str) -> bool:
    from mcp_django.gateway.models import RemoteDefinition

    return (
        RemoteDefinition.objects.filter(server=server, kind=kind, name=name)
        .exclude(state=RemoteDefinition.State.PINNED)
        .exists()
    )


def _pin(server: str, kind: str, key: str, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    from django.db import IntegrityError, transaction
    from django.utils import timezone

    from mcp_django.gateway.models import RemoteDefinition

    State = RemoteDefinition.State
    rows = {row.name: row for row in RemoteDefinition.objects.filter(server=server, kind=kind)}
    first_listing = not rows  # the remote as the admin who configured it saw it: pinned as listed
    served: list[dict[str, Any]] = []
    added = False
    for item in items:
        name, digest = pin_name(str(item.get(key))), digest_of(item)
        row = rows.get(name)
        if row is None:
            fields: dict[str, Any]
            if first_listing:
                fields = {"approved": item, "approved_digest": digest}
            else:
                fields = {"state": State.NEW, "seen": item, "seen_digest": digest, "changed_at": timezone.now()}
            try:
                with transaction.atomic():
                    RemoteDefinition.objects.create(server=server, kind=kind, name=name, **fields)
            except IntegrityError:  # another worker pinned it first: serve it only if it is the same
                row = RemoteDefinition.objects.get(server=server, kind=kind, name=name)
            else:
                if first_listing:
                    served.append(item)
                else:
                    added = True
                    _log(server, "lists a new", kind, name)
                continue
        if row.state == State.NEW:
            if row.seen_digest != digest:
                RemoteDefinition.objects.filter(pk=row.pk).update(seen=item, seen_digest=digest)
        elif row.approved_digest == digest:
            if row.state == State.CHANGED:  # the remote went back to the approved definition
                RemoteDefinition.objects.filter(pk=row.pk).update(state=State.PINNED, seen=None, seen_digest="")
            served.append(item)
        elif row.seen_digest != digest:
            RemoteDefinition.objects.filter(pk=row.pk).update(
                state=State.CHANGED, seen=item, seen_digest=digest, changed_at=timezone.now()
            )
            _log(server, "changed the definition of its", kind, name)
    if added:
        _forget_the_oldest_new(server, kind)
    return served


def _forget_the_oldest_new(server: str, kind: str) -> None:
    """Keep at most `REMOTE_MAX_LIST_ITEMS` new items per remote and kind, the newest: a remote that makes up
    new names on every listing would otherwise grow the table without end. A forgotten one was never
    approved: listed again, it is new again."""
    from mcp_django.gateway.models import RemoteDefinition

    new = RemoteDefinition.objects.filter(server=server, kind=kind, state=RemoteDefinition.State.NEW)
    oldest = list(new.order_by("-pk").values_list("pk", flat=True)[client_settings.REMOTE_MAX_LIST_ITEMS :])
    if oldest:
        RemoteDefinition.objects.filter(pk__in=oldest).delete()
        logger.warning(
            "Remote server %r lists more new %ss than REMOTE_MAX_LIST_ITEMS: forgot the %d oldest unapproved",
            server,
            kind,
            len(oldest),
        )


def _log(server: str, what: str, kind: str, name: str) -> None:
    logger.warning("Remote server %r %s %s %r: withheld until an admin approves it", server, what, kind, name)
