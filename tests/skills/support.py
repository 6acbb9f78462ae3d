"""Skills written to a temporary directory, and a handler serving them in memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.hooks import OperationHook
from mcp_django.scopes import Scope, ScopeResolver
from mcp_django.skills import EXTENSION
from mcp_django.skills.catalogue import Catalogue
from mcp_django.skills.methods import skill_methods
from mcp_django.skills.source import SkillSource
from mcp_django.sources.composite import CompositeBackend

SERVER_INFO = {"name": "skills-tests", "version": "1.0"}
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def write_skill(
    root: Path, name: str, front_matter: str | None = None, files: Mapping[str, str | bytes] | None = None
) -> Path:
    """A skill directory `root/name` with a SKILL.md (`front_matter` None: a valid one) and `files` by relative path."""
    directory = root / name
    directory.mkdir(parents=True)
    text = (
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n\n# {name}\n"
        if front_matter is None
        else front_matter
    )
    (directory / "SKILL.md").write_text(text)
    for relative, content in (files or {}).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return directory


def serve(
    catalogue: Catalogue,
    *,
    page_size: int = 100,
    scopes: ScopeResolver | None = None,
    scope: Scope = Scope.USER,
    hooks: Sequence[OperationHook] = (),
) -> tuple[MessageHandler, SkillSource]:
    """A handler serving `catalogue` as the extension does, to callers of the scope `scopes` works out."""
    source = SkillSource(lambda: catalogue, scope=scope)
    handler = MessageHandler(
        CompositeBackend([source], scopes),
        server_info=SERVER_INFO,
        page_size=page_size,
        cache_ttl_ms=5000,
        cache_scope="public",
        extra_methods=skill_methods(source),
        extensions={EXTENSION: {"directoryRead": True}},
        hooks=hooks,
    )
    return handler, source


async def stateless(handler: MessageHandler, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The reply to one 2026-07-28 request."""
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": STATELESS_META}}
    reply: Any = await handler.handle(message, Connection())
    return dict(reply)


async def handshake(handler: MessageHandler, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The reply to one request of a 2025-11-25 session (initialized first)."""
    connection = Connection()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    opened: Any = await handler.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, connection)
    await handler.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, connection)
    if method == "initialize":
        return dict(opened)
    reply: Any = await handler.handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}, connection)
    return dict(reply)
