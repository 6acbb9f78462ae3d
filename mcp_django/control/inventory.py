"""What the code defines, for the admin: providers, interceptors, remote servers and tools, and the rows mirroring them.

The admin shows every provider, interceptor, remote server and tool in code, row or not: `sync_inventory()` creates
the missing rows with blank fields, which mean "as the code says", and flags rows whose provider,
interceptor or tool is gone. It runs after `migrate` (`post_migrate`), with `manage.py mcp_sync` and from
the admin's tool list ("Sync with code and remote servers"), never on a page view (docs/adr/0003-admin-overlay.md).

`migrate` asks no remote server (like Django's own `post_migrate` work, it stays off the network: a deploy's
`migrate` must not wait for a remote, nor fail for one); the other two ask them too. A sync that did not hear
from every remote server (not asked, down, answering an error) creates and restores rows but flags none: a
remote that is down has not lost its tools.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from asgiref.sync import async_to_sync
from django.db import DEFAULT_DB_ALIAS, models
from django.db.models import QuerySet

from mcp_django.client.conf import client_settings
from mcp_django.conf import mcp_settings
from mcp_django.control.state import control_state, remote_server_model
from mcp_django.endpoints import Endpoint, mounted_endpoints
from mcp_django.gateway.extension import remote_sources
from mcp_django.interceptors.chain import build_plan
from mcp_django.interceptors.config import PlanEntry
from mcp_django.models import InterceptorState, ProviderState, ToolState
from mcp_django.protocol.context import Connection, RequestContext
from mcp_django.protocol.jsonrpc import MCPError
from mcp_django.protocol.versions import Era
from mcp_django.providers import PromptProvider, Provider, ResourceProvider, ToolProvider, provider_registry
from mcp_django.scopes import Scope, ScopeResolver

logger = logging.getLogger("mcp_django.state")


def code_providers() -> list[Provider]:
    """Every provider the installed apps name, in their order."""
    return list(provider_registry.providers)


def mounted() -> list[Endpoint]:
    """The endpoints the root URLconf mounts; none when it is broken (the checks report that)."""
    try:
        return mounted_endpoints()
    except Exception:  # a broken URLconf is the checks' business, not the admin's
        return []


def code_interceptors() -> dict[str, PlanEntry]:
    """Every interceptor the settings and the mounted endpoints configure, by name, with its configured policy."""
    configs: list[Any] = [mcp_settings.INTERCEPTORS]
    configs += [endpoint.interceptors for endpoint in mounted() if endpoint.interceptors is not None]
    found: dict[str, PlanEntry] = {}
    for config in configs:
        try:
            plan = build_plan(config)
        except Exception:  # the checks report configuration mistakes
            continue
        for entry in plan.entries:
            found.setdefault(entry.name, entry)
    return found


def endpoints_serving(provider_id: str) -> list[Endpoint]:
    """The mounted endpoints whose providers include `provider_id`."""
    serving = []
    for endpoint in mounted():
        try:
            if any(provider.id == provider_id for provider in endpoint.providers):
                serving.append(endpoint)
        except LookupError:
            continue
    return serving


def list_changed_methods(provider: Provider) -> list[str]:
    """The list-changed notifications a change of `provider` calls for, by what it serves."""
    methods = []
    for kind, feature in ((ToolProvider, "tools"), (ResourceProvider, "resources"), (PromptProvider, "prompts")):
        if isinstance(provider, kind):
            methods.append(f"notifications/{feature}/list_changed")
    return methods


class _HoldsEverything:
    """The inventory's caller: it holds whatever permission a component requires, so every tool is listed."""

    is_authenticated = True
    is_active = True

    def has_perms(self, permissions: object) -> bool:
        return True


def tool_permissions() -> dict[str, tuple[str, ...]]:
    """The Django permissions each tool in code requires by name (static declarations and toolsets)."""
    from mcp_django.registry import all_registries
    from mcp_django.toolsets.base import all_toolsets

    found: dict[str, tuple[str, ...]] = {}
    tools = [*(tool for registry in all_registries() for tool in registry.tools.values())]
    for tool in tools + [tool for toolset in all_toolsets() for tool in toolset.tools.values()]:
        if tool.permissions:
            found.setdefault(tool.name, tool.permissions)
    return found


def listed_tools(endpoint: Endpoint, scope: Scope = Scope.SYSTEM, *, remote: bool = True) -> list[str]:
    """The names of the tools a caller of `scope` gets from `endpoint`'s backend (before the admin's tool switches).

    The caller holds every Django permission: a tool that requires some is listed too.

    Args:
        remote: ask the endpoint's remote servers too (False: only what this site defines).

    Raises whatever a provider's `list_tools` raises.
    """

    async def names() -> list[str]:
        ctx = RequestContext(
            method="tools/list",
            request_id=None,
            era=Era.STATELESS,
            protocol_version="admin",
            connection=Connection(endpoint=endpoint, transport="admin", principal=_HoldsEverything()),
        )
        return [str(tool.get("name")) for tool in await backend.list_tools(ctx)]

    backend = endpoint.build_backend(fixed_scope(scope), remote=remote)
    if "tools" not in backend.capabilities():
        return []
    return list(async_to_sync(names)())


def fixed_scope(scope: Scope) -> ScopeResolver:
    """A scope resolver that gives every caller `scope`."""

    async def fixed(ctx: RequestContext) -> Scope:
        return scope

    return fixed


def code_remote_servers() -> dict[str, list[str]]:
    """Every server `MCP_DJANGO["SERVERS"]` names, with the mounted endpoints serving it as a source."""
    servers: dict[str, list[str]] = {str(name): [] for name in dict(client_settings.SERVERS or {})}
    for endpoint in mounted():
        for source in remote_sources(endpoint):
            if source.name in servers and endpoint.name not in servers[source.name]:
                servers[source.name].append(endpoint.name)
    return {name: sorted(endpoints) for name, endpoints in servers.items()}


def probe_remote_server(name: str) -> str:
    """Ask the server `name` for its tools, without interceptors, and say what it answered, in a line for the admin."""
    from mcp_django.client import SyncMCPClient

    try:
        tools = SyncMCPClient(name, interceptors=[]).list_tools()
    except (LookupError, ValueError) as error:
        return f"not configured: {error}"
    except MCPError as error:
        return f"no: {error}"
    names = sorted(str(tool.get("name")) for tool in tools if isinstance(tool, dict))
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return f"yes, {len(names)} tools" + (f": {shown}" if names else "")


@dataclasses.dataclass(frozen=True)
class ToolsSeen:
    """The tools some endpoint lists now (name → the endpoints listing it), and what was not heard from."""

    tools: dict[str, list[str]]
    unheard: dict[str, str]
    """Endpoint or remote server → why its tools may be missing (not asked, not answering, an error)."""


def code_tools(*, remote: bool = True) -> ToolsSeen:
    """Every tool a caller of the highest scope sees on some endpoint now, with the names of those endpoints.

    Tools of a provider switched off are not listed, so their rows read "not present" until it is back.

    Args:
        remote: ask the endpoints' remote servers too (`migrate` does not).
    """
    control_state.refresh_sync()
    tools: dict[str, list[str]] = {}
    unheard: dict[str, str] = {}
    for endpoint in mounted():
        try:
            names = listed_tools(endpoint, remote=remote)
        except MCPError as error:  # e.g. a gateway's one remote server not serving yet (the demo's, during make demo)
            unheard[f"endpoint {endpoint.name!r}"] = error.message
            continue
        except Exception as error:  # a failing provider: the dashboard shows it, the tool list does without
            logger.warning("Listing the tools of %r failed", endpoint, exc_info=True)
            unheard[f"endpoint {endpoint.name!r}"] = f"{type(error).__name__}: {error}"
            continue
        for source in remote_sources(endpoint):
            if not remote:
                unheard.setdefault(f"remote server {source.name!r}", "not asked")
            elif source.health.state in ("down", "degraded"):  # a hub left it out (a lone remote's error raises)
                unheard.setdefault(f"remote server {source.name!r}", source.health.detail or source.health.state)
        for name in names:
            tools.setdefault(name, []).append(endpoint.name)
    return ToolsSeen(tools, unheard)


def class_path(cls: type) -> str:
    """The dotted path `import_string` finds `cls` by."""
    return f"{cls.__module__}.{cls.__qualname__}"


@dataclasses.dataclass(frozen=True)
class Synced:
    """What `sync_rows` did to one model's rows."""

    model: type[models.Model]
    created: int
    flagged: int
    restored: int
    unheard: dict[str, str] = dataclasses.field(default_factory=dict)
    """What could not be asked for its items (`ToolsSeen.unheard`): none of its rows were flagged."""

    def summary(self) -> str:
        """One line of what the sync did (`mcp_sync` prints it, the admin shows it)."""
        label = self.model._meta.verbose_name_plural
        return f"{label}: {self.created} created, {self.flagged} no longer in code, {self.restored} back in code"


def inventory_models() -> list[type[models.Model]]:
    """The admin's rows that mirror something in code, in the order they are synced (with the gateway app
    installed, its `RemoteServer` rows too)."""
    remote = remote_server_model()
    return [ProviderState, InterceptorState, *([remote] if remote is not None else []), ToolState]


def sync_rows(model: type[models.Model], using: str = DEFAULT_DB_ALIAS, *, remote: bool = True) -> Synced:
    """Give everything in code a row of `model` (blank: the code's defaults) and flag rows of vanished things.

    `model` is one of `inventory_models()`; an `InterceptorState` row also
    learns the class its name runs as (so the admin validates its options without the URLconf). Tool rows are
    flagged only when every remote server was heard (`remote` asks them; `ToolsSeen.unheard` is empty).
    Uses `bulk_create` and `update`, which send no signals: nothing changes for a client, so no stamp moves.
    """
    classes: dict[str, str] = {}
    unheard: dict[str, str] = {}
    if model is ProviderState:
        field, names = "provider_id", {provider.id for provider in code_providers()}
    elif model is InterceptorState:
        classes = {name: class_path(type(entry.interceptor)) for name, entry in code_interceptors().items()}
        field, names = "name", set(classes)
    elif model is ToolState:
        seen = code_tools(remote=remote)
        field, names, unheard = "name", set(seen.tools), seen.unheard
    elif model is remote_server_model():
        field, names = "name", set(code_remote_servers())
    else:
        raise TypeError(f"{model.__name__} is not an MCP inventory model")
    rows: QuerySet[Any] = model._default_manager.using(using)
    existing = set(rows.values_list(field, flat=True))
    missing = sorted(names - existing)
    new_row: Any = model
    rows.bulk_create([new_row(**{field: name, **_class_of(classes, name)}) for name in missing], ignore_conflicts=True)
    for name, path in classes.items():
        rows.filter(**{field: name}).exclude(class_path=path).update(class_path=path)
    gone = rows.exclude(**{f"{field}__in": names}).filter(present_in_code=True)
    flagged = 0 if unheard else gone.update(present_in_code=False)
    restored = rows.filter(**{f"{field}__in": names}, present_in_code=False).update(present_in_code=True)
    return Synced(model, len(missing), flagged, restored, unheard)


def _class_of(classes: dict[str, str], name: str) -> dict[str, str]:
    return {"class_path": classes[name]} if name in classes else {}


def sync_inventory(using: str = DEFAULT_DB_ALIAS, *, remote: bool = True) -> list[Synced]:
    """Sync the rows of `inventory_models()` with the code (after `migrate`, `manage.py mcp_sync`, the admin).

    Args:
        remote: ask the remote servers for their tools too (`migrate` does not).
    """
    return [sync_rows(model, using, remote=remote) for model in inventory_models()]
