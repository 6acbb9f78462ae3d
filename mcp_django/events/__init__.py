"""Events (SEP-3415): declare event types like tools, emit occurrences from Django, deliver them three ways.

    # shop/mcp.py
    from mcp_django.events import event

    @event("order.shipped", permissions=["shop.view_order"])
    def order_shipped(order: Shipped, customer: str | None = None) -> bool:
        \"\"\"An order left the warehouse.\"\"\"
        return customer is None or order["customer"] == customer

    # anywhere, inside the transaction that ships it
    from mcp_django.events import emit

    emit("order.shipped", {"id": order.pk, "customer": order.customer.email})

Install the app (`"mcp_django.events"` in `INSTALLED_APPS`): clients then poll (`events/poll`), hold a
push stream (`events/stream`) or subscribe a signed webhook (`events/subscribe`). docs/events.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_django.events.declarations import EventType, event, event_types

if TYPE_CHECKING:
    from mcp_django.events.models import EventOccurrence

__all__ = [
    "EventType",
    "emit",
    "emit_on_admin_action",
    "emit_on_save",
    "emit_on_task_finished",
    "event",
    "event_types",
]


def emit(name: str, payload: Any) -> EventOccurrence:
    """Record and deliver an occurrence of the event type `name` (`mcp_django.events.store.emit`)."""
    from mcp_django.events.store import emit as store_emit

    return store_emit(name, payload)


def emit_on_save(model: Any, name: str, payload: Any, *, created: bool | None = True) -> None:
    """Emit `name` with `payload(instance)` whenever `model` is saved (`created=True`: only new rows; False:
    only changes; None: both), from every save: the admin's, a tool's, a management command's."""
    from mcp_django.events.signals import connect_save

    connect_save(model, name, payload, created=created)


def emit_on_admin_action(
    name: str,
    payload: Any = None,
    *,
    model: Any = None,
    actions: tuple[str, ...] = ("addition", "change", "deletion"),
) -> None:
    """Emit `name` whenever the admin records one of `actions` (`"addition"`, `"change"`, `"deletion"`) on
    `model` (None: any model), inside the admin's transaction. `payload(log_entry)` makes the payload; by
    default `{action, model, objectId, objectRepr, user, message}` (`signals.admin_payload`)."""
    from mcp_django.events.signals import admin_payload, connect_admin_action

    connect_admin_action(name, payload or admin_payload, model=model, actions=tuple(actions))


def emit_on_task_finished(name: str, payload: Any = None, *, tools: Any = None) -> None:
    """Emit `name` whenever a task of the tasks extension completes or fails (of one of `tools`, by name; None:
    any). `payload(task)` makes the payload from the `MCPTask`; by default `{taskId, tool, status, endpoint}`
    (`signals.task_payload`)."""
    from mcp_django.events.signals import connect_task_finished, task_payload

    connect_task_finished(name, payload or task_payload, tools=None if tools is None else tuple(tools))
