"""The checks of `permissions=` (E190, E191, W190): every permission a component requires must exist.

Registered by `MCPDjangoConfig.ready()`. A permission exists when a model declares it (its Meta's
`default_permissions` and `permissions`, which `migrate` makes into `Permission` rows) or when a
`Permission` row has it (one a migration or the admin made). Only a name no model declares is looked up
in the database, so the common case runs no query; where that lookup cannot run (a database not yet
migrated, or not reachable) the name is reported as a warning, not confirmed, rather than an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import short
from mcp_django.declarations import Prompt, Resource, Tool
from mcp_django.permissions import Permissions, declared_by_models, in_database, parse_permissions


def required_permissions() -> Iterator[tuple[str, Any]]:
    """`(owner, permissions as declared)` for every declaration, provider and toolset that requires some."""
    from mcp_django.providers import provider_registry
    from mcp_django.registry import all_registries
    from mcp_django.toolsets.base import all_toolsets

    for registry in all_registries():
        declarations: list[tuple[str, Mapping[str, Tool | Resource | Prompt]]] = [
            ("tool", registry.tools),
            ("resource", registry.resources),
            ("resource template", registry.resource_templates),
            ("prompt", registry.prompts),
        ]
        for kind, table in declarations:
            for key, declaration in table.items():
                if declaration.permissions:
                    yield f"{kind} {key!r}", declaration.permissions
    for provider in provider_registry.providers:
        if provider.permissions:
            yield f"provider {provider.id!r}", provider.permissions
    for toolset in all_toolsets():
        for tool in toolset.tools.values():
            if tool.permissions:
                yield f"tool {tool.name!r}", tool.permissions
        if toolset.permissions:
            yield f"toolset {type(toolset).__name__}", toolset.permissions


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


@register(Tags.compatibility)
def check_permissions(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check that every permission a tool, resource, prompt, provider or toolset requires exists."""
    messages: list[CheckMessage] = []
    required: dict[tuple[str, str], None] = {}
    for owner, declared in required_permissions():
        try:
            names: Permissions = parse_permissions(declared)
        except TypeError:
            messages.append(
                Error(
                    f"{_cut(owner, 40)}: permissions= is not a list of names.",
                    hint='Set permissions = "app_label.codename", or a list of such names.',
                    id="mcp_django.E191",
                )
            )
            continue
        required.update(dict.fromkeys((owner, name) for name in names))
    unknown = {name for _, name in required} - declared_by_models()
    if not unknown:
        return messages
    rows = in_database(unknown)
    for owner, name in required:
        if name not in unknown or (rows is not None and name in rows):
            continue
        if rows is None:
            messages.append(
                Warning(
                    f"{_cut(owner, 24)}: permission {short(name, 24)} is not confirmed.",
                    hint="No model declares it and the database could not be read: run migrate, then check.",
                    id="mcp_django.W190",
                )
            )
        else:
            messages.append(
                Error(
                    f"{_cut(owner, 24)} requires unknown permission {short(name, 24)}.",
                    hint="Name an existing permission as 'app_label.codename' (docs/permissions.md).",
                    id="mcp_django.E190",
                )
            )
    return messages
