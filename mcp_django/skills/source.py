"""The skills' files as resources: each `SKILL.md` listed, every file of a skill's manifest readable."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import ResourceNotFound
from mcp_django.scopes import Scope
from mcp_django.skills.catalogue import MAX_FILE_BYTES, Catalogue, Skill, SkillFile, digest_of, is_text
from mcp_django.skills.conf import skills_settings
from mcp_django.sources import ResourceComponent, Source


def skill_scope(name: str) -> Scope:
    """The scope a caller needs to see the skill `name`: `MCP_DJANGO["SKILL_SCOPES"]`'s, else USER.

    A value that names no scope (check E138) asks for SYSTEM: a mistake hides the skill, never shows it.
    """
    scopes = skills_settings.SKILL_SCOPES
    value = scopes.get(name) if isinstance(scopes, Mapping) else None
    if value is None:
        return Scope.USER
    try:
        return Scope.parse(value)
    except ValueError:
        return Scope.SYSTEM


class SkillSource(Source):
    """Serves the catalogue's skills as resources: `resources/list` names each `SKILL.md`, `resources/read`
    reads any file a skill's manifest lists (and nothing else: a URI is looked up, never joined to a path).

    Args:
        catalogue: returns the catalogue to serve (read on first use, again after a settings change).
        scope: callers below it see no skill.
    """

    __slots__ = ("catalogue", "scope")

    distinct = True

    def __init__(self, catalogue: Callable[[], Catalogue], *, scope: Scope = Scope.USER) -> None:
        self.catalogue = catalogue
        self.scope = scope

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def capabilities(self) -> dict[str, Any]:
        return {"resources": {}}

    def skills(self, scope: Scope) -> Sequence[Skill]:
        """The skills a caller of `scope` sees, in order of discovery."""
        return [skill for skill in self.catalogue().skills if self.sees(skill, scope)]

    def sees(self, skill: Skill, scope: Scope) -> bool:
        """Whether a caller of `scope` sees `skill`: it reaches the scope `SKILL_SCOPES` gives the skill (USER)."""
        return scope >= skill_scope(skill.name)

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return [skill.resource() for skill in self.skills(scope)]

    async def get_resource(self, uri: str, ctx: RequestContext, scope: Scope) -> ResourceComponent | None:
        found = self.catalogue().file(uri)
        if found is None or not self.sees(found[0], scope):
            return None
        return SkillFileComponent(self.catalogue(), *found)

    async def match_resource_template(
        self, uri: str, ctx: RequestContext, scope: Scope
    ) -> tuple[ResourceComponent, dict[str, str]] | None:
        return None


class SkillFileComponent:
    """Reads one file of a skill, as the manifest describes it."""

    __slots__ = ("catalogue", "file", "skill")

    def __init__(self, catalogue: Catalogue, skill: Skill, file: SkillFile) -> None:
        self.catalogue = catalogue
        self.skill = skill
        self.file = file

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> Mapping[str, Any]:
        """The file's contents: `text` for UTF-8 text, a base64 `blob` otherwise.

        Bytes that no longer match the manifest (the file changed on disk) make the catalogue read the
        skill again, so `skills/get` describes what is served from now on.

        Raises:
            ResourceNotFound: the file is gone.
        """
        file = self.file
        try:
            data = await asyncio.to_thread(_read_bounded, file.path)
        except OSError:
            data = None
        if data is None or digest_of(data) != file.digest:
            fresh = await asyncio.to_thread(self.catalogue.reread, self.skill)
            found = None if fresh is None or data is None else self.catalogue.file(uri)
            if found is None or found[1].digest != digest_of(data or b""):
                raise ResourceNotFound(uri)
            file = found[1]
        assert data is not None
        content: dict[str, Any] = {"uri": uri, "mimeType": file.mime_type}
        if is_text(file.mime_type, data):
            content["text"] = data.decode("utf-8")
        else:
            content["blob"] = base64.b64encode(data).decode("ascii")
        return {"contents": [content]}


def _read_bounded(path: Path) -> bytes | None:
    """The file's bytes; None when it has grown past `MAX_FILE_BYTES` (it is never read whole then)."""
    with path.open("rb") as opened:
        data = opened.read(MAX_FILE_BYTES + 1)
    return None if len(data) > MAX_FILE_BYTES else data
