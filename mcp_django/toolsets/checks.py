"""The toolsets' system checks (E110-E119, E260, W110, W260): what each toolset found wrong while building
its tools, and what an app's `mcp.py` raised while it loaded (E261).

Registered by `MCPDjangoConfig.ready()`; a toolset reports its problems as `(id, message, hint)` in
`Toolset.problems` (see `model.py` and `drf.py` for where each ID is found), the apps' modules theirs in
`declarations.loading.load_failures`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import short
from mcp_django.declarations.loading import load_failures
from mcp_django.toolsets.base import Toolset, all_toolsets

_WRITES = ("create", "update", "delete")


def toolset_messages(toolset: Toolset) -> list[CheckMessage]:
    """The check messages of one toolset: its problems, and a warning for writes without permission checks."""
    messages: list[CheckMessage] = [
        Error(message, hint=hint, id=check_id, obj=type(toolset)) for check_id, message, hint in toolset.problems
    ]
    if getattr(toolset, "check_permissions", True) is False:  # a ModelToolset's (checked without importing it)
        writes = [action for action in _WRITES if action in getattr(toolset, "actions", ())]
        if writes:
            messages.append(
                Warning(
                    f"{type(toolset).__name__} serves {', '.join(writes)} without model permission checks.",
                    hint="Set check_permissions = True, or override has_permission().",
                    id="mcp_django.W110",
                    obj=type(toolset),
                )
            )
    return messages


@register(Tags.models)
def check_toolsets(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check every toolset registered on a registry or loaded as a provider."""
    return [message for toolset in all_toolsets() for message in toolset_messages(toolset)]


@register(Tags.models)
def check_tool_names(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Warn when two toolsets name a tool alike: wherever both are served, one of them is out of reach."""
    return tool_name_collisions(all_toolsets())


def tool_name_collisions(toolsets: Iterable[Toolset]) -> list[CheckMessage]:
    """W260 for each tool name two of `toolsets` share."""
    owners: dict[str, list[str]] = {}
    for toolset in toolsets:
        for name in toolset.tools:
            owners.setdefault(name, []).append(type(toolset).__name__)
    return [
        Warning(
            f"{first} and {second} both name a tool {short(name, 30)}.",
            hint="Set basename (or plural) on one of them to tell their tools apart.",
            id="mcp_django.W260",
        )
        for name, (first, second, *_) in ((name, found) for name, found in owners.items() if len(found) > 1)
    ]


@register(Tags.models)
def check_declaration_modules(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Report what the apps' declaration modules (`mcp.py`) raised while they loaded (E261)."""
    return [Error(message, hint=hint, id=check_id) for check_id, message, hint in load_failures]
