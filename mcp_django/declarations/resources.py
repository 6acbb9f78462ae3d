"""`Resource` and `ResourceTemplate`: functions served as MCP resources (templates match with `uri_templates`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_django import content
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
from mcp_django.declarations.uri_templates import UriTemplate
from mcp_django.exceptions import DeclarationError
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import ResourceNotFound
from mcp_django.runtime import results
from mcp_django.scopes import Scope

if TYPE_CHECKING:
    import mcp_types

resource_logger = logging.getLogger("mcp_django.resources")


class Resource:
    """A function served as an MCP resource at a fixed URI.

    The function takes no arguments (apart from an optional `Context`) and
    returns the contents: see `mcp_django.runtime.results.resource_contents()`. Returning None answers
    "resource not found". `scope` is the minimum `Scope` a caller needs to see and read it; `permissions`
    the Django permissions (one name or a list) the caller must also hold, all of them.
    """

    kind: str = "resource"
    uri_key: str = "uri"

    def __init__(
        self,
        fn: AnyFunction,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = "text/plain",
        size: int | None = None,
        icons: Sequence[Icon | mcp_types.Icon] | None = None,
        annotations: content.Annotations | mcp_types.Annotations | None = None,
        meta: Mapping[str, Any] | None = None,
        scope: Scope | str | int = Scope.USER,
        permissions: str | Sequence[str] | None = None,
    ) -> None:
        self.fn = fn
        self.uri = uri
        self.name: str = name or function_name(fn)
        owner = f"{self.kind} {uri!r}"
        self.scope = declared_scope(owner, scope)
        self.permissions = declared_permissions(owner, permissions)
        self.signature = Signature(fn, owner)
        self.description = require_description(owner, description or self.signature.description)
        self.title = title
        self.mime_type = mime_type
        self._check_parameters(owner)
        self._run = Runner(fn)
        self.wire: dict[str, Any] = wire(
            {self.uri_key: uri, "name": self.name},
            [
                ("title", title),
                ("description", self.description),
                ("mimeType", mime_type),
                ("size", size),
                ("icons", results.plain(icons)),
                ("annotations", results.plain(annotations)),
                ("_meta", results.plain(meta)),
            ],
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.uri}>"

    def _check_parameters(self, owner: str) -> None:
        if self.signature.required:
            raise DeclarationError(
                f"{owner}: a fixed URI passes no arguments, but the function requires {self.signature.required}"
            )

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> dict[str, Any]:
        """Run the function and return the `ReadResourceResult` for `uri`.

        Raises:
            ResourceNotFound: the variables do not fit the function, or it returned None.
            InternalError: the function raised something other than an `MCPError`.
        """
        try:
            kwargs = self.signature.bind(variables)
        except ArgumentsInvalid:
            raise ResourceNotFound(uri) from None
        with results.component_errors(resource_logger, "Resource %s raised", uri):
            value = await self._run(with_context(kwargs, self.signature, request))
        if value is None:
            raise ResourceNotFound(uri)
        return results.read_result(value, uri, self.mime_type)


class ResourceTemplate(Resource):
    """A function served for every URI matching an RFC 6570 template.

    The template's variables are passed to the function as keyword arguments
    (validated and coerced by their annotations, so `id: int` receives an int);
    a URI whose variables fail validation is "resource not found".
    """

    kind = "resource template"
    uri_key = "uriTemplate"

    def __init__(self, fn: AnyFunction, uri_template: str, **options: Any) -> None:
        self.template = UriTemplate(uri_template)
        super().__init__(fn, uri_template, **options)

    def _check_parameters(self, owner: str) -> None:
        variables = set(self.template.variables) | set(self.template.query_variables)
        unknown = sorted(variables - set(self.signature.names))
        if unknown:
            raise DeclarationError(f"{owner}: the function has no parameter for {', '.join(unknown)}")
        unfilled = [name for name in self.signature.required if name not in self.template.variables]
        if unfilled:
            raise DeclarationError(f"{owner}: required parameters {unfilled} are not path variables of the template")
