"""The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) on the extension seam."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from django.core.checks import CheckMessage, Error, Warning

from mcp_django.extensions import Extension
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.scopes import Scope
from mcp_django.skills.catalogue import catalogue
from mcp_django.skills.conf import skills_settings
from mcp_django.skills.methods import skill_methods
from mcp_django.skills.source import SkillSource
from mcp_django.sources import Source

EXTENSION: Final = "io.modelcontextprotocol/skills"
_E136: Final = "mcp_django_skills.E136"
_E138: Final = "mcp_django_skills.E138"


class SkillsExtension(Extension):
    """Serves the skills installed apps ship (`<app>/skills/<name>/SKILL.md`) on the endpoints that take them.

    Each file of a skill is a `skill://<name>/<path>` resource; `skills/list` and `skills/get` give
    the skills' entries (front matter and the digest and size of every file), and
    `resources/directory/read` lists a skill's directories (`directoryRead: true`). Every endpoint it
    is offered on serves them (installed, or named in an endpoint's `extensions=`); a gateway, whose
    resources are its remote server's, and an endpoint of a project with no skill advertise nothing.
    """

    identifier = EXTENSION
    settings = skills_settings

    def __init__(self) -> None:
        self.source = SkillSource(catalogue)

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{"directoryRead": true}` where skills are served; None elsewhere."""
        if getattr(endpoint, "mode", None) == "gateway" or not catalogue().skills:
            return None
        return {"directoryRead": True}

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return skill_methods(self.source)

    def sources(self, endpoint: Any) -> Sequence[Source]:
        return (self.source,)

    def check(self) -> list[CheckMessage]:
        """E136 and E138 for bad settings, then every skill that cannot be served as it is (E130-E135, W130-W132)."""
        messages = _settings_problems()
        for problem in catalogue().problems:
            kind = Warning if problem.id.rpartition(".")[2].startswith("W") else Error
            messages.append(kind(problem.message, hint=problem.hint, obj=problem.obj, id=problem.id))
        return messages


def _settings_problems() -> list[CheckMessage]:
    directories = skills_settings.SKILL_DIRS
    if not isinstance(directories, (list, tuple)) or not all(isinstance(d, (str, Path)) for d in directories):
        hint = "Set it to a list of paths, each a directory of skill directories."
        return [Error("MCP_DJANGO['SKILL_DIRS'] must be a list of paths.", hint=hint, id=_E136)]
    messages = _scope_problems()
    for directory in directories:
        if not Path(directory).is_dir():
            message = f"MCP_DJANGO['SKILL_DIRS'] names {_short(str(directory))}, not a directory."
            messages.append(Error(message, hint="Create it, or remove it from SKILL_DIRS.", id=_E136))
    return messages


def _scope_problems() -> list[CheckMessage]:
    scopes = skills_settings.SKILL_SCOPES
    if not isinstance(scopes, Mapping):
        hint = 'Map skill names to scope names: {"catalogue-report": "TEAM"}.'
        return [Error("MCP_DJANGO['SKILL_SCOPES'] must be a dict.", hint=hint, id=_E138)]
    messages: list[CheckMessage] = []
    for name, value in scopes.items():
        try:
            Scope.parse(value)
        except ValueError:
            message = f"MCP_DJANGO['SKILL_SCOPES'][{_short(str(name), 24)}] names no scope."
            hint = f"It is {_short(str(value), 20)}: use USER, TEAM or SYSTEM (until then: SYSTEM)."
            messages.append(Error(message, hint=hint, id=_E138))
    return messages


def _short(text: str, limit: int = 30) -> str:
    quoted = repr(text)
    return quoted if len(quoted) <= limit else f"'...{text[-(limit - 5) :]}'"
