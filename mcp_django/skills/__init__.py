"""The Skills extension (SEP-2640): skills installed apps ship, served as resources (docs/skills.md).

Install it like any extension::

    MCP_DJANGO = {"EXTENSIONS": ["mcp_django.skills.SkillsExtension"]}

and ship skills the way templates are shipped: `<app>/skills/<name>/SKILL.md`, beside any files the
skill refers to.
"""

from mcp_django.skills.extension import EXTENSION, SkillsExtension

__all__ = ["EXTENSION", "SkillsExtension"]
