"""Emitting from signals, one line each in `mcp.py` or `ready()`: a model's saves (`emit_on_save`), the admin's
actions as its `LogEntry` records them (`emit_on_admin_action`), finished tasks (`emit_on_task_finished`)."""

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


ADMIN_ACTIONS = {1: "addition", 2: "change", 3: "deletion"}
"""The admin's `LogEntry.action_flag`s, by the names `emit_on_admin_action(actions=...)` takes."""


def admin_payload(entry: Any) -> dict[str, Any]:
    """What `emit_on_admin_action` emits by default: which action, on what, by whom."""
    return {
        "action": ADMIN_ACTIONS.get(entry.action_flag, str(entry.action_flag)),
        "model": entry.content_type.model_class()._meta.label_lower if entry.content_type_id else "",
        "objectId": str(entry.object_id or ""),
        "objectRepr": entry.object_repr,
        "user": entry.user.get_username() if entry.user_id else "",
        "message": entry.get_change_message(),
    }


def connect_admin_action(
    name: str, payload: Callable[[Any], Any], *, model: Any = None, actions: tuple[str, ...]
) -> None:
    """Connect a `post_save` receiver of the admin's `LogEntry` that emits `name` for the `actions` on `model`."""
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    flags = {flag for flag, action in ADMIN_ACTIONS.items() if action in actions}

    def logged(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
        if raw or not created or instance.action_flag not in flags:
            return
        if model is not None and instance.content_type_id != ContentType.objects.get_for_model(model).pk:
            return
        from mcp_django.events.store import emit

        emit(name, payload(instance))

    label = model._meta.label if model is not None else "*"
    post_save.connect(logged, sender=LogEntry, weak=False, dispatch_uid=f"mcp_django.events:{name}:admin:{label}")


def task_payload(task: Any) -> dict[str, Any]:
    """What `emit_on_task_finished` emits by default: the task, its tool and how it ended."""
    return {"taskId": task.task_id, "tool": task.tool, "status": str(task.status), "endpoint": task.endpoint}


def connect_task_finished(name: str, payload: Callable[[Any], Any], *, tools: tuple[str, ...] | None) -> None:
    """Connect a receiver of the tasks extension's `task_finished` that emits `name` for the tasks of `tools`."""
    from mcp_django.tasks.signals import task_finished

    def finished(sender: Any, task: Any, **kwargs: Any) -> None:
        if tools is not None and task.tool not in tools:
            return
        from mcp_django.events.store import emit

        emit(name, payload(task))

    task_finished.connect(finished, weak=False, dispatch_uid=f"mcp_django.events:{name}:tasks:{tools}")
