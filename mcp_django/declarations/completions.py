"""`Completion`: a function that suggests values for an argument of a prompt or resource template."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from mcp_django.declarations.common import AnyFunction, Runner
from mcp_django.declarations.signatures import Signature, with_context
from mcp_django.exceptions import DeclarationError
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.errors import internal_errors
from mcp_django.protocol.results import completion

completion_logger = logging.getLogger("mcp_django.completions")

CompletionRef: TypeAlias = tuple[Literal["ref/prompt", "ref/resource"], str, str]
"""`(ref type, prompt name or resource URI/template, argument name)`."""


class Completion:
    """A function that suggests values for one argument of a prompt or resource template.

    The function receives the partial `value` and, if it takes a second
    positional parameter, the other arguments already filled in
    (`context_arguments`); it may also take a `Context`. It returns an iterable
    of strings; at most 100 are sent, with `total` and `hasMore` set.
    """

    def __init__(
        self, fn: AnyFunction, *, prompt: str | None = None, resource: str | None = None, argument: str
    ) -> None:
        if (prompt is None) == (resource is None):
            raise DeclarationError("a completion names exactly one of prompt= or resource=")
        self.fn = fn
        self.ref: CompletionRef = (
            ("ref/prompt", prompt, argument) if prompt else ("ref/resource", resource or "", argument)
        )
        owner = f"completion for {self.ref[0].removeprefix('ref/')} {self.ref[1]!r} argument {argument!r}"
        self.signature = Signature(fn, owner, build_model=False)
        positional = len(self.signature.names)
        if positional not in (1, 2):
            raise DeclarationError(f"{owner}: the function takes (value) or (value, context_arguments)")
        self._positional = positional
        self._run = Runner(fn)

    def __repr__(self) -> str:
        return f"<Completion {self.ref}>"

    async def complete(
        self, value: str, context_arguments: Mapping[str, str], request: RequestContext
    ) -> dict[str, Any]:
        """Return the `completion` member: `values` (at most 100), `total` and `hasMore`."""
        names = self.signature.names
        kwargs: dict[str, Any] = {names[0]: value}
        if self._positional == 2:
            kwargs[names[1]] = dict(context_arguments)
        with internal_errors(completion_logger, "Completion %s raised", self.ref):
            suggestions = await self._run(with_context(kwargs, self.signature, request))
        return completion(suggestions)
