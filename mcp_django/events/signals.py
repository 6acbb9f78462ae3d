"""Emitting from model signals: `emit_on_save(Book, "book.added", payload=...)`, one line in `ready()`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models.signals import post_save


def connect_save(model: Any, name: str, payload: Callable[[Any], Any], *, created: bool | None = True) -> None:
    """Connect a `post_save` receiver of `model` that emits `name` (inside the saving transaction)."""

    def saved(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
        if raw or (wanted is not None and created is not wanted):  # fixtures load raw: no events
            return
        from mcp_django.events.store import emit

        emit(name, payload(instance))

    wanted = created
    post_save.connect(saved, sender=model, weak=False, dispatch_uid=f"mcp_django.events:{name}:{model._meta.label}")
