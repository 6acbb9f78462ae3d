"""What an endpoint serves to a caller, item by item: the data behind `manage.py mcp_inspect`.

Every tool, resource, resource template and prompt an endpoint's sources define is listed with the
scope it needs (the lowest scope that lists it, raised to its source's, which the admin may override),
the Django permissions it needs (its source's and its own), its source (`registry:<name>` or
`provider:<id>`), its state (`off` when the admin switched its provider or the tool off) and whether
the caller is served it. The definitions are listed as a caller holding every permission would see
them, so nothing guarded by `permissions=` is missing. "Served" is what the caller really gets: the
endpoint's lists fetched in memory as that caller (`MCPTestClient`), through the same hooks and
interceptors as a request, so an item an interceptor hides shows as not served; with no caller (neither
a user nor a scope), "served" is None and the report is everything the endpoint defines.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.endpoints import Endpoint
from mcp_django.permissions import parse_permissions
from mcp_django.protocol.context import Connection, RequestContext
from mcp_django.protocol.jsonrpc import METHOD_NOT_FOUND
from mcp_django.protocol.versions import Era
from mcp_django.providers.base import Provider
from mcp_django.registry import Registry
from mcp_django.scopes import Scope, User
from mcp_django.sources import Source
from mcp_django.testing import MCPCallError, MCPTestClient

KINDS: Final = (
    ("tools", "tools/list", "list_tools", "name"),
    ("resources", "resources/list", "list_resources", "uri"),
    ("resource_templates", "resources/templates/list", "list_resource_templates", "uriTemplate"),
    ("prompts", "prompts/list", "list_prompts", "name"),
)
"""Each kind of item: its key in the report, its list method, the source's list method, the key naming an item."""


@dataclasses.dataclass(frozen=True)
class Item:
    """One tool, resource, resource template or prompt of an endpoint, as a caller meets it."""

    name: str
    title: str | None
    description: str | None
    scope: str
    permissions: list[str]
    source: str
    state: str
    served: bool | None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _Inspector:
    """The principal the definitions are listed as: one that holds every permission, so none is left out."""

    is_authenticated = True
    is_active = True
    is_superuser = True
    pk = None

    def get_username(self) -> str:
        return "mcp_inspect"

    def has_perm(self, perm: str, obj: Any = None) -> bool:
        return True

    def has_perms(self, perm_list: Any, obj: Any = None) -> bool:
        return True


async def inspect_endpoint(
    endpoint: Endpoint, *, user: User | None = None, scope: Scope | None = None, everything: bool = False
) -> dict[str, Any]:
    """Report what `endpoint` defines and what it serves to `user`, or to a caller of `scope`.

    With `everything`, no caller: every item with the scope and permissions it needs, `served` None.
    Otherwise, with neither `user` nor `scope` the caller is an anonymous one; with both, `scope` wins
    (as `MCPTestClient` has it).
    """
    await endpoint.overlay.refresh()
    sources = endpoint.overlay.wrap_sources(endpoint, endpoint.sources())
    report: dict[str, Any] = {
        "endpoint": endpoint.name,
        "path": "/" + endpoint.path.strip("/"),
        "mode": endpoint.mode,
        "caller": None,
    }
    client = None
    if not everything:
        caller_scope = scope if scope is not None else await endpoint.scope_of(user)
        client = MCPTestClient(endpoint, user=user, scope=scope, era="stateless")
        report["caller"] = {
            "user": _username(user),
            "scope": str(caller_scope) if caller_scope is not None else None,
        }
    for kind, method, source_method, key in KINDS:
        served = None if client is None else {str(item.get(key)) for item in await _served(client, method, kind)}
        items: dict[str, Item] = {}
        for source in sources:
            for name, item, needed in await _defined(endpoint, source, source_method, key):
                if name in items:
                    continue  # an earlier source has it: the backend serves that one
                items[name] = Item(
                    name=name,
                    title=item.get("title"),
                    description=item.get("description"),
                    scope=str(max(needed, source.scope)),
                    permissions=_permissions(source, kind, name, item),
                    source=_label(source),
                    state=_state(endpoint, source, kind, name),
                    served=None if served is None else name in served,
                )
        report[kind] = [item.as_dict() for item in items.values()]
    return report


async def _served(client: MCPTestClient, method: str, kind: str) -> list[dict[str, Any]]:
    key = {"resource_templates": "resourceTemplates"}.get(kind, kind)
    try:
        return await client._collect(method, key)
    except MCPCallError as error:
        if error.code == METHOD_NOT_FOUND:  # the endpoint does not serve this kind at all
            return []
        raise


async def _defined(
    endpoint: Endpoint, source: Source, method: str, key: str
) -> list[tuple[str, Mapping[str, Any], Scope]]:
    """The source's items, each with the lowest scope that lists it (none of a feature it does not serve)."""
    if ("resources" if "resource" in method else method.removeprefix("list_")) not in source.capabilities():
        return []
    ctx = RequestContext(
        method=method,
        request_id=None,
        era=Era.STATELESS,
        protocol_version="inspect",
        connection=Connection(endpoint=endpoint, transport="inspect", principal=_Inspector()),
    )
    found: dict[str, tuple[str, Mapping[str, Any], Scope]] = {}
    for level in Scope:  # lowest first
        listed: Sequence[Mapping[str, Any]] = await getattr(source, method)(ctx, level)
        for item in listed:
            name = str(item.get(key))
            found.setdefault(name, (name, item, level))
    return list(found.values())


def _permissions(source: Source, kind: str, name: str, item: Mapping[str, Any]) -> list[str]:
    """The Django permissions a caller needs for one item: its source's, then the item's own."""
    inner = getattr(source, "source", source)  # under the admin overlay's wrapper
    needed = list(source.permissions)
    registry = getattr(inner, "registry", None)
    if isinstance(registry, Registry):
        needed += registry._guarded[kind].get(name, ())
    provider = getattr(inner, "provider", None)
    if isinstance(provider, Provider):
        with contextlib.suppress(TypeError):  # reported by check E191
            needed += parse_permissions(provider.permissions_of(item))
    return list(dict.fromkeys(needed))


def _label(source: Source) -> str:
    described = source.manifest()
    kind = {"providers": "provider"}.get(described["kind"], described["kind"])
    return f"{kind}:{described['name']}"


def _state(endpoint: Endpoint, source: Source, kind: str, name: str) -> str:
    if not source.enabled:
        return "off (provider switched off)"
    if kind == "tools" and name in _disabled_tools(endpoint):
        return "off (tool switched off)"
    return "on"


def _disabled_tools(endpoint: Endpoint) -> frozenset[str]:
    state = getattr(endpoint.overlay, "state", None)  # the admin's overlay; NullOverlay switches nothing
    snapshot = getattr(state, "snapshot", None)
    return frozenset(getattr(snapshot, "disabled_tools", frozenset()))


def _username(user: User | None) -> str | None:
    if user is None or not user.is_authenticated:
        return None
    return str(user.get_username())
