"""The `MCP_DJANGO` keys of the Skills extension (docs/skills.md), read through `skills_settings`.

Named on `SkillsExtension.settings`; their checks are the extension's (mcp_django_skills.E136, E138).
"""

from __future__ import annotations

from typing import Final

from mcp_django.conf import MCPSettings

skills_settings: Final = MCPSettings(
    {
        # Directories of skill directories, searched before the apps'.
        "SKILL_DIRS": [],
        # The scope a caller needs to see a skill, by skill name (USER when not listed).
        "SKILL_SCOPES": {},
    },
    owner="mcp_django.skills",
)
