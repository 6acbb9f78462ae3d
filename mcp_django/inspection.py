"""What an endpoint serves to a caller, item by item: the data behind `manage.py mcp_inspect`.

Every tool, resource, resource template and prompt an endpoint's sources define is listed with the
scope it needs (the lowest scope that lists it, raised to its source's, which the admin may override),
its source (`registry:<name>` or `provider:<id>`), its state (`off` when the admin switched its
provider or the tool off) and whether the caller is served it. "Served" is what the caller really gets:
the endpoint's lists fetched in memory as that caller (`MCPTestClient`), through the same hooks and
interceptors as a request, so an item an interceptor hides shows as not served.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_types.jsonrpc import METHOD_NOT_FOUND

from mcp_django.endpoints import Endpoint
from mcp_django.protocol.context import Connection, RequestContext
from mcp_django.protocol.versions import Era
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
    source: str
    state: str
    served: bool

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


async def inspect_endpoint(endpoint: Endpoint, *, user: User | None, scope: Scope | None) -> dict[str, Any]:
    """Report what `endpoint` defines and what it serves to `user`, or to a caller of `scope`.

    With neither, the caller is an anonymous one; with both, `scope` wins (as `MCPTestClient` has it).
    """
    await endpoint.overlay.refresh()
    caller_scope = scope if scope is not None else await endpoint.scope_of(user)
    client = MCPTestClient(endpoint, user=user, scope=scope, era="stateless")
    sources = endpoint.overlay.wrap_sources(endpoint, endpoint.sources())
    report: dict[str, Any] = {
        "endpoint": endpoint.name,
        "path": "/" + endpoint.path.strip("/"),
        "mode": endpoint.mode,
        "caller": {"user": _username(user), "scope": str(caller_scope) if caller_scope is not None else None},
    }
    for kind, method, source_method, key in KINDS:
        served = {str(item.get(key)) for item in await _served(client, method, kind)}
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
                    source=_label(source),
                    state=_state(endpoint, source, kind, name),
                    served=name in served,
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
        connection=Connection(endpoint=endpoint, transport="inspect"),
    )
    found: dict[str, tuple[str, Mapping[str, Any], Scope]] = {}
    for level in Scope:  # lowest first
        listed: Sequence[Mapping[str, Any]] = await getattr(source, method)(ctx, level)
        for item in listed:
            name = str(item.get(key))
            found.setdefault(name, (name, item, level))
    return list(found.values())


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
