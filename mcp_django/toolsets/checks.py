"""The toolsets' system checks (E110-E119, W110): what each toolset found wrong while building its tools.

Registered by `MCPDjangoConfig.ready()`; a toolset reports its problems as `(id, message, hint)` in
`Toolset.problems` (see `model.py` and `drf.py` for where each ID is found).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.toolsets.base import Toolset, all_toolsets
from mcp_django.toolsets.model import ModelToolset

_WRITES = ("create", "update", "delete")


def toolset_messages(toolset: Toolset) -> list[CheckMessage]:
    """The check messages of one toolset: its problems, and a warning for writes without permission checks."""
    messages: list[CheckMessage] = [
        Error(message, hint=hint, id=check_id, obj=type(toolset)) for check_id, message, hint in toolset.problems
    ]
    if isinstance(toolset, ModelToolset) and not toolset.check_permissions:
        writes = [action for action in _WRITES if action in toolset.actions]
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
