"""The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) on the extension seam."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from django.core.checks import CheckMessage, Error, Warning

from mcp_django.conf import mcp_settings
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.skills.catalogue import catalogue
from mcp_django.skills.methods import skill_methods
from mcp_django.skills.source import SkillSource
from mcp_django.sources import Source

__all__ = ["EXTENSION", "SkillsExtension"]

EXTENSION: Final = "io.modelcontextprotocol/skills"


class SkillsExtension:
    """Serves the skills installed apps ship (`<app>/skills/<name>/SKILL.md`) on every endpoint but gateways.

    Each file of a skill is a `skill://<name>/<path>` resource; `skills/list` and `skills/get` give
    the skills' entries (front matter and the digest and size of every file), and
    `resources/directory/read` lists a skill's directories (`directoryRead: true`). An endpoint that
    serves no skill (none is installed, or it fronts a remote server) does not advertise it.
    """

    identifier: str = EXTENSION

    def __init__(self) -> None:
        self.source = SkillSource(catalogue)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identifier!r}>"

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{"directoryRead": true}`, or None on a gateway endpoint and where no skill is installed."""
        if getattr(endpoint, "mode", None) == "gateway" or not catalogue().skills:
            return None
        return {"directoryRead": True}

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return skill_methods(self.source)

    def hooks(self, endpoint: Any) -> Sequence[Any]:
        return ()

    def sources(self, endpoint: Any) -> Sequence[Source]:
        return (self.source,)

    def tool_runner(self) -> None:
        return None

    def check(self) -> list[CheckMessage]:
        """E136 for a bad `SKILLS_DIRS`, then every skill that cannot be served as it is (E130-E135, W130-W132)."""
        messages: list[CheckMessage] = []
        directories = mcp_settings.SKILLS_DIRS
        if not isinstance(directories, (list, tuple)) or not all(isinstance(d, (str, Path)) for d in directories):
            hint = "Set it to a list of paths, each a directory of skill directories."
            return [Error("MCP_DJANGO['SKILLS_DIRS'] must be a list of paths.", hint=hint, id="mcp_django.E136")]
        for directory in directories:
            if not Path(directory).is_dir():
                message = f"MCP_DJANGO['SKILLS_DIRS'] names {_short(str(directory))}, not a directory."
                hint = "Create it, or remove it from SKILLS_DIRS."
                messages.append(Error(message, hint=hint, id="mcp_django.E136"))
        for problem in catalogue().problems:
            kind = Warning if problem.id.startswith("mcp_django.W") else Error
            messages.append(kind(problem.message, hint=problem.hint, obj=problem.obj, id=problem.id))
        return messages


def _short(text: str, limit: int = 30) -> str:
    quoted = repr(text)
    return quoted if len(quoted) <= limit else f"'...{text[-(limit - 5) :]}'"
