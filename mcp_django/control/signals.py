"""What an admin change sets in motion: the stamps move, clients are told, and `migrate` syncs the rows.

`mcp_django.control.install()` (from `MCPDjangoConfig.ready()`) calls `connect()`. From then on, saving
or deleting a `ProviderState`, `InterceptorState`, `RemoteServer`, `ToolState` or `GroupScope` row writes a fresh
`"state"` stamp (every worker reloads within `MCP_DJANGO["STATE_CHECK_INTERVAL"]`), deleting an
`MCPSession` a fresh `"sessions"` stamp, and once a change commits, every endpoint it concerns tells
its listening clients `notifications/tools/list_changed` (and the resource and prompt equivalents).
After `migrate`, the inventory rows are synced with the code.

The inventory (`mcp_django.control.inventory`: the endpoints, the interceptors, the gateway, the client) is
imported by the receivers that use it, when a row changes, not when the app loads.
"""

from __future__ import annotations

import logging
from typing import Any

from django.apps import AppConfig
from django.db import DEFAULT_DB_ALIAS, connections, router, transaction
from django.db.models.signals import post_delete, post_migrate, post_save

from mcp_django.conf import mcp_settings
from mcp_django.control.state import SESSIONS, STATE, bump, control_state, remote_server_model
from mcp_django.models import GroupScope, InterceptorState, MCPSession, ProviderState, ToolState
from mcp_django.providers import provider_registry
from mcp_django.runtime.notifications import send_notification_sync

logger = logging.getLogger("mcp_django.state")


def announce_provider(provider_id: str) -> None:
    """Tell the clients of every endpoint serving `provider_id` that its lists changed."""
    from mcp_django.control.inventory import endpoints_serving, list_changed_methods

    control_state.invalidate()
    try:
        provider = provider_registry.get(provider_id)
    except LookupError:
        return
    for endpoint in endpoints_serving(provider_id):
        for method in list_changed_methods(provider):
            try:
                send_notification_sync(endpoint, method)
            except Exception:
                logger.warning("Could not send %s to %r", method, endpoint, exc_info=True)


def announce_scopes(features: tuple[str, ...] = ("tools", "resources", "prompts")) -> None:
    """Tell the clients of every endpoint that its lists of `features` may have changed."""
    from mcp_django.control.inventory import mounted

    control_state.invalidate()
    for endpoint in mounted():
        for feature in sorted(endpoint.handler.features & set(features)):
            try:
                send_notification_sync(endpoint, f"notifications/{feature}/list_changed")
            except Exception:
                logger.warning("Could not send %s list_changed to %r", feature, endpoint, exc_info=True)


def _state_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)


def _provider_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    bump(STATE)
    provider_id = instance.provider_id
    transaction.on_commit(lambda: announce_provider(provider_id))


def _scope_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)
    transaction.on_commit(announce_scopes)


def _tool_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)
    transaction.on_commit(lambda: announce_scopes(("tools",)))


def _remote_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)  # the endpoints serving it rebuild; their clients hear that the lists changed
    transaction.on_commit(announce_scopes)


def _session_ended(sender: Any, **kwargs: Any) -> None:
    bump(SESSIONS)


def _migrated(sender: AppConfig, using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """After `migrate` (and a test database's flush): every provider, interceptor and tool in code gets its row."""
    from mcp_django.control.inventory import inventory_models, sync_inventory

    if not router.allow_migrate_model(using, ProviderState):
        return
    tables = connections[using].introspection.table_names()
    if not all(model._meta.db_table in tables for model in inventory_models()):
        return  # migrated backwards, below the admin's tables
    sync_inventory(using, remote=False)  # no network during migrate: the remote servers are asked by mcp_sync


def connect(app_config: AppConfig) -> None:
    """Connect the receivers that move the stamps, announce changes and sync rows after `migrate`."""
    for signal in (post_save, post_delete):
        signal.connect(_provider_changed, sender=ProviderState, dispatch_uid="mcp_django.provider_state")
        signal.connect(_state_changed, sender=InterceptorState, dispatch_uid="mcp_django.interceptor_state")
        signal.connect(_scope_changed, sender=GroupScope, dispatch_uid="mcp_django.group_scope")
        signal.connect(_tool_changed, sender=ToolState, dispatch_uid="mcp_django.tool_state")
        if (remote := remote_server_model()) is not None:  # the gateway app's
            signal.connect(_remote_changed, sender=remote, dispatch_uid="mcp_django.remote_server")
    post_delete.connect(_session_ended, sender=MCPSession, dispatch_uid="mcp_django.session_ended")
    post_migrate.connect(_migrated, sender=app_config, dispatch_uid="mcp_django.sync_inventory")
    mcp_settings.on_reload(control_state.forget_interval)
