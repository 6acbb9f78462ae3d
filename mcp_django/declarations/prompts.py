"""`Prompt`: a function served as an MCP prompt."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_django.declarations.common import (
    AnyFunction,
    Icon,
    Runner,
    declared_permissions,
    declared_scope,
    function_name,
    require_description,
    wire,
)
from mcp_django.declarations.signatures import ArgumentsInvalid, Signature, with_context
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.runtime import results
from mcp_django.scopes import Scope

if TYPE_CHECKING:
    import mcp_types

prompt_logger = logging.getLogger("mcp_django.prompts")


class Prompt:
    """A function served as an MCP prompt.

    Its parameters are the prompt's arguments (required when they have no
    default; descriptions from the docstring or `Annotated[..., Field(...)]`).
    It returns a string (one user message), a message or content block, or a
    list of them. `scope` is the minimum `Scope` a caller needs to see and get it; `permissions` the Django
    permissions (one name or a list) the caller must also hold, all of them.
    """

    def __init__(
        self,
        fn: AnyFunction,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        scope: Scope | str | int = Scope.USER,
        permissions: str | Sequence[str] | None = None,
    ) -> None:
        self.fn = fn
        self.name: str = name or function_name(fn)
        owner = f"prompt {self.name!r}"
        self.scope = declared_scope(owner, scope)
        self.permissions = declared_permissions(owner, permissions)
        self.signature = Signature(fn, owner)
        self.description = require_description(owner, description or self.signature.description)
        self.title = title
        self._run = Runner(fn)
        arguments = [
            wire(
                {"name": arg},
                [("description", self.signature.descriptions.get(arg)), ("required", arg in self.signature.required)],
            )
            for arg in self.signature.names
        ]
        self.argument_names = frozenset(self.signature.names)
        self.wire: dict[str, Any] = wire(
            {"name": self.name},
            [
                ("title", title),
                ("description", self.description),
                ("arguments", arguments),
                ("icons", results.plain(icons)),
                ("_meta", results.plain(meta)),
            ],
        )

    def __repr__(self) -> str:
        return f"<Prompt {self.name}>"

    async def get(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> dict[str, Any]:
        """Run the function and return the `GetPromptResult`.

        Raises:
            InvalidParams: a required argument is missing or an argument is invalid.
            InternalError: the function raised something other than an `MCPError`.
        """
        try:
            kwargs = self.signature.bind(arguments)
        except ArgumentsInvalid as exc:
            if exc.missing:
                missing = ", ".join(exc.missing)
                raise InvalidParams(f"Missing required arguments for prompt {self.name}: {missing}") from None
            raise InvalidParams(f"Invalid arguments for prompt {self.name}: {exc}") from None
        with results.component_errors(prompt_logger, "Prompt %s raised", self.name):
            value = await self._run(with_context(kwargs, self.signature, request))
            return results.prompt_result(value, self.description)
