"""SEP-2640's methods: `skills/list`, `skills/get` and `resources/directory/read`.

They answer from the endpoint's `SkillSource`, and only for a caller the endpoint's backend lets
reach it (its scope, the admin's switches): anyone else sees no skills, and a skill URI is unknown
to them exactly as one that was never served (`-32602`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.scopes import Scope
from mcp_django.skills.catalogue import Skill
from mcp_django.skills.source import SkillSource


def skill_methods(source: SkillSource, *, directory_read: bool = True) -> tuple[MethodSpec, ...]:
    """The extension's methods, serving the skills of `source` (`resources/directory/read` if asked)."""

    async def reach(server: Server, ctx: RequestContext) -> Scope | None:
        """The caller's scope when it reaches `source`; None when it does not."""
        reached = getattr(server.backend, "reach", None)
        if reached is None:  # a backend that is not a CompositeBackend: in-process use only
            return Scope.SYSTEM
        scope, sources = await reached(ctx)
        return scope if source in sources else None

    async def visible(server: Server, ctx: RequestContext) -> Sequence[Skill]:
        scope = await reach(server, ctx)
        return () if scope is None else source.skills(scope)

    async def list_skills(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`skills/list`: a page of skill entries; an entry is never split across pages."""
        return server.page("skills", [skill.entry() for skill in await visible(server, ctx)], params)

    async def get_skill(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`skills/get`: the entry of the skill whose `SKILL.md` is at `params.uri`."""
        uri = _uri_of(params)
        scope = await reach(server, ctx)
        skill = None if scope is None else source.catalogue().get(uri)
        if skill is None or scope is None or not source.sees(skill, scope):
            raise InvalidParams(f"No skill is served at {uri}")
        return {"skill": skill.entry()}

    async def read_directory(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`resources/directory/read`: a page of the direct children of a skill directory."""
        uri = _uri_of(params)
        found = source.catalogue().directory(uri)
        scope = await reach(server, ctx)
        if found is None or scope is None or not source.sees(found[0], scope):
            raise InvalidParams(f"{uri} is not a directory resource")
        return server.page("resources", found[1], params)

    methods = [
        MethodSpec("skills/list", list_skills, cacheable=True),
        MethodSpec("skills/get", get_skill, cacheable=True),
    ]
    if directory_read:
        methods.append(MethodSpec("resources/directory/read", read_directory, feature="resources"))
    return tuple(methods)


def _uri_of(params: Mapping[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise InvalidParams("Invalid params: uri must be a non-empty string")
    return uri
