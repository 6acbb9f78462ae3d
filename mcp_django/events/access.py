"""Who may see an event type: the rules of tools (the type's scope, its Django permissions), asked when a
client lists, polls or subscribes, and asked again, afresh from the database, at each delivery of a push
stream or a webhook, so a user who loses a permission (or is deactivated) stops receiving.
"""

from __future__ import annotations

from typing import Any

from mcp_django.events.declarations import EventType
from mcp_django.permissions import granted
from mcp_django.protocol import RequestContext
from mcp_django.runtime.executor import run_sync
from mcp_django.scopes import ANONYMOUS_SCOPE, Scope, get_scope_policy, is_authenticated


async def caller_scope(ctx: RequestContext) -> Scope | None:
    """The caller's scope on the endpoint serving `ctx` (None: it reaches nothing)."""
    resolve = getattr(ctx.connection.endpoint, "resolve_scope", None)
    return await resolve(ctx) if resolve is not None else None


async def visible(ctx: RequestContext, declared: EventType) -> bool:
    """Whether the caller of `ctx` may see `declared`: its scope reaches the type's, and it holds its permissions."""
    scope = await caller_scope(ctx)
    return scope is not None and scope >= declared.scope and await granted(ctx, declared.permissions)


def allowed_now_sync(user_pk: Any, ceiling: int, declared: EventType) -> bool:
    """`allowed_now` for sync code (the webhook deliverer)."""
    if user_pk is None:  # an anonymous push stream: the anonymous scope, and no permission to hold
        return declared.scope <= ANONYMOUS_SCOPE and not declared.permissions and ceiling >= declared.scope
    from django.contrib.auth import get_user_model

    user = get_user_model()._default_manager.filter(pk=user_pk).first()
    if user is None or not is_authenticated(user) or getattr(user, "is_active", True) is False:
        return False
    scope = get_scope_policy().scope_of(user)
    if scope is None or min(scope, ceiling) < declared.scope:
        return False
    return not declared.permissions or bool(user.has_perms(declared.permissions))


async def allowed_now(principal_pk: Any, ceiling: int, declared: EventType) -> bool:
    """Whether the user `principal_pk` (None: anonymous) may still receive `declared`, read afresh now.

    `ceiling` is the scope the subscriber reached when it subscribed (an OAuth token's limit included):
    a delivery never reaches further than the subscription could.
    """
    return await run_sync(allowed_now_sync, principal_pk, ceiling, declared)


def principal_pk(principal: Any) -> Any:
    """The user id of a principal, None for an anonymous caller."""
    return principal.pk if is_authenticated(principal) else None
