"""Django permissions on tools, resources, prompts, providers and toolsets (`permissions=`).

A component may require Django permissions (`"app_label.codename"`), all of them, as
`PermissionRequiredMixin.permission_required` does; the caller must hold them beside reaching the
component's scope. What a caller lacks is left out of its lists and answers exactly as an unknown name.

Permissions are read afresh on every request: the user admission found may be shared between
requests (`mcp_django.endpoints.auth_cache`), and `ModelBackend` caches a user's permissions on the instance,
so the check runs on a copy without those caches, made once per request and remembered for the rest
of it (a list of many guarded tools reads them once). A machine client's or an OAuth token's
permissions are its user's: the principal is that user.

Like `scopes`, this module imports no Django until a check runs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

from mcp_django.runtime.executor import run_sync

if TYPE_CHECKING:
    from mcp_django.protocol.context import RequestContext

Permissions: TypeAlias = "tuple[str, ...]"
"""The permission names a component requires, all of them (empty: none)."""

T = TypeVar("T")

_CACHES: Final = ("_perm_cache", "_user_perm_cache", "_group_perm_cache")
_MEMO_KEY: Final = "mcp_django.permissions"


def parse_permissions(value: str | Iterable[str] | None) -> Permissions:
    """The permission names `value` gives: one name or several (`permission_required`'s forms).

    Raises:
        TypeError: `value` is neither a string nor an iterable of strings.
    """
    if value is None:
        return ()
    names = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(name, str) and name for name in names):
        raise TypeError(f"permissions must be a permission name or a list of them, not {value!r}")
    return tuple(dict.fromkeys(names))


def fresh_user(principal: Any) -> Any:
    """A copy of the caller without the permissions Django cached on it (None and anonymous: as given)."""
    if principal is None or not hasattr(principal, "__dict__"):
        return principal
    user = copy.copy(principal)
    for name in _CACHES:
        user.__dict__.pop(name, None)
    return user


def _request_user(ctx: RequestContext) -> Any:
    """The caller's fresh copy for this request, made once (a long-lived connection makes one per request)."""
    entry = ctx.connection.extra.get(_MEMO_KEY)
    if isinstance(entry, tuple) and entry[0] is ctx:
        return entry[1]
    user = fresh_user(ctx.principal)
    ctx.connection.extra[_MEMO_KEY] = (ctx, user)
    return user


def _holds(user: Any, required: Sequence[Permissions]) -> list[bool]:
    """For each set of names, whether `user` holds all of them (runs where the ORM may run)."""
    if user is None or getattr(user, "is_authenticated", False) is not True:
        return [not names for names in required]
    return [not names or bool(user.has_perms(names)) for names in required]


async def granted(ctx: RequestContext, required: Permissions) -> bool:
    """True when the caller of `ctx` holds every permission in `required` (always, for none)."""
    if not required:
        return True
    return (await run_sync(_holds, _request_user(ctx), [required]))[0]


async def permitted(ctx: RequestContext, items: Sequence[T], required: Callable[[T], Permissions]) -> Sequence[T]:
    """`items` without those whose required permissions the caller lacks; one trip to the database at most."""
    needs = [required(item) for item in items]
    if not any(needs):
        return items
    distinct = list(dict.fromkeys(names for names in needs if names))
    held = await run_sync(_holds, _request_user(ctx), distinct)
    answers: Mapping[Permissions, bool] = dict(zip(distinct, held, strict=True))
    return [item for item, names in zip(items, needs, strict=True) if not names or answers[names]]


def declared_by_models() -> set[str]:
    """Every permission the installed models declare, as `"app_label.codename"`."""
    from django.apps import apps

    names: set[str] = set()
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        names.update(f"{meta.app_label}.{action}_{meta.model_name}" for action in meta.default_permissions)
        names.update(f"{meta.app_label}.{codename}" for codename, _ in meta.permissions)
    return names


def in_database(names: Iterable[str]) -> set[str] | None:
    """Which of `names` are `Permission` rows; None when the database cannot say (not migrated, unreachable)."""
    from django.contrib.auth.models import Permission
    from django.db.models import Q

    wanted = [name.split(".", 1) for name in names if "." in name]
    if not wanted:
        return set()
    query = Q()
    for app_label, codename in wanted:
        query |= Q(content_type__app_label=app_label, codename=codename)
    try:
        rows = Permission.objects.filter(query).values_list("content_type__app_label", "codename")
        return {f"{app_label}.{codename}" for app_label, codename in rows}
    except Exception:  # no auth tables yet, no database, or no access here (a test)
        return None
