"""Approvals, as a tool declares them: who must approve a call before it runs, and what the approver is shown.

`@tool(approval="shop.approve_refund")` (or an `Approval`) names the Django permission an approver needs.
The call then does not run when it arrives: the tasks extension (`mcp_django.tasks.approvals`) answers it
with a task that waits for an approver, shows the approver a preview (the arguments, and what the tool's
`preview` adds: for a model delete, the cascade Django's `Collector` computes, `cascade`), and runs the
call once it is approved. Toolsets take an `approval` of their own (`BaseToolset.approval`), and a setting
gates every tool annotated `destructiveHint` (docs/side-effects.md#approvals).

Nothing here imports Django at import time: declarations are made before settings may be configured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_django.exceptions import DeclarationError

__all__ = ["Approval", "Preview", "approval_rule", "cascade"]

Preview = Callable[[Mapping[str, Any], Any], Mapping[str, Any]]
"""`preview(arguments, ctx)`: what an approver sees beside the arguments (sync; it may query the database)."""


@dataclass(frozen=True)
class Approval:
    """A call must be approved, out of band, by a user holding `permission` before it runs.

    Args:
        permission: the Django permission (`"app_label.codename"`) an approver needs.
        preview: a sync function of `(arguments, ctx)` returning what the approver is shown beside
            the arguments (JSON values), such as `{"deletes": cascade(objects)}`.
    """

    permission: str
    preview: Preview | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.permission, str) or self.permission.count(".") != 1 or " " in self.permission:
            wanted = "one permission as 'app_label.codename'"
            raise DeclarationError(f"approval must name {wanted}, not {self.permission!r}")


def approval_rule(owner: str, value: str | Approval | None) -> Approval | None:
    """The `Approval` an `approval=` option gives (a permission name or an `Approval`); None for None.

    Raises:
        DeclarationError: `value` is neither.
    """
    if value is None or isinstance(value, Approval):
        return value
    if not isinstance(value, str):
        raise DeclarationError(f"{owner}: approval= takes 'app_label.codename' or an Approval, not {value!r}")
    try:
        return Approval(value)
    except DeclarationError as error:
        raise DeclarationError(f"{owner}: {error}") from None


def cascade(objects: Any) -> dict[str, int]:
    """What deleting `objects` (a model instance, a list of them or a QuerySet) deletes, counted per model.

    Django's `Collector` computes it as `Model.delete()` will: every row its `on_delete=CASCADE` relations
    reach, as `{"app_label.Model": count}` (the keys sorted), without deleting anything.
    """
    from django.db import router
    from django.db.models.deletion import Collector

    rows: Iterable[Any] = [objects] if hasattr(objects, "_meta") else objects
    rows = list(rows)
    if not rows:
        return {}
    collector = Collector(using=router.db_for_write(type(rows[0])), origin=rows[0])
    collector.collect(rows)
    counts: dict[str, int] = {}
    for model, instances in collector.data.items():
        counts[model._meta.label] = counts.get(model._meta.label, 0) + len(instances)
    for queryset in collector.fast_deletes:
        label = queryset.model._meta.label
        counts[label] = counts.get(label, 0) + queryset.count()
    return {label: count for label, count in sorted(counts.items()) if count}
