"""The contract between the protocol core and whatever serves tools, resources and prompts.

The core knows nothing of Django, registries or providers: it asks a `Backend`.
Every method receives the `RequestContext` of the request being served, so a
backend can filter by the caller. Lists return every item the caller may see, in
a stable order; the core pages them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from mcp_django.protocol.context import RequestContext


@runtime_checkable
class Backend(Protocol):
    """Serves the features of one endpoint to the protocol core."""

    def capabilities(self) -> dict[str, Any]:
        """Return the `ServerCapabilities` this backend serves (`tools`, `resources`, `prompts`, `completions`).

        A feature missing here is answered `-32601` by the core, so the
        advertised capabilities always match the methods that work.
        """
        ...

    async def list_tools(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        """Return the `Tool` objects the caller may see."""
        ...

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
        """Run a tool and return its `CallToolResult`.

        Raises:
            InvalidParams: no tool of that name is visible to the caller.
        """
        ...

    async def list_resources(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        """Return the `Resource` objects the caller may see."""
        ...

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        """Return the `ResourceTemplate` objects the caller may see."""
        ...

    async def read_resource(self, uri: str, ctx: RequestContext) -> Mapping[str, Any]:
        """Return the `ReadResourceResult` for `uri`.

        Raises:
            ResourceNotFound: nothing visible to the caller serves `uri`.
        """
        ...

    async def readable(self, uri: str, ctx: RequestContext) -> bool:
        """True when something visible to the caller serves `uri` (a resource, or a template matching it).

        Nothing is read. Subscriptions use it: a caller may only subscribe to, and only hears about,
        what it could read.
        """
        ...

    async def list_prompts(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        """Return the `Prompt` objects the caller may see."""
        ...

    async def get_prompt(self, name: str, arguments: Mapping[str, str], ctx: RequestContext) -> Mapping[str, Any]:
        """Return the `GetPromptResult` for a prompt.

        Raises:
            InvalidParams: unknown prompt, or a required argument is missing.
        """
        ...

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        """Return the `completion` member (`values`, `total?`, `hasMore?`) for a prompt or template argument.

        Raises:
            InvalidParams: the reference names nothing the caller may see.
        """
        ...
