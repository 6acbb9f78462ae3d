"""`Tool`: a function served as an MCP tool."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mcp_django.declarations.apps import App, app_of
from mcp_django.declarations.common import (
    AnyFunction,
    Icon,
    Runner,
    ToolAnnotations,
    declared_permissions,
    declared_scope,
    function_name,
    require_description,
    wire,
)
from mcp_django.declarations.django_values import named_serializer, output_annotation
from mcp_django.declarations.lean import lean_definition
from mcp_django.declarations.signatures import (
    ArgumentsInvalid,
    Signature,
    StructuredOutput,
    mentions_content,
    schema_errors,
    with_context,
)
from mcp_django.exceptions import DeclarationError
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidRequest, MCPError
from mcp_django.protocol.meta import param_headers_of
from mcp_django.protocol.results import tool_error
from mcp_django.runtime import results
from mcp_django.runtime.transactions import settlement, unit_of_work
from mcp_django.safety.approvals import Approval, Preview, approval_rule
from mcp_django.scopes import Scope

if TYPE_CHECKING:
    import mcp_types

tool_logger = logging.getLogger("mcp_django.tools")


class ToolRunner(Protocol):
    """Runs a tool declared with `task=` (or one that needs approval) some other way than inline: as a task.

    An extension offers one (`Extension.tool_runner`); the endpoint a call arrives on names it as its
    `tool_runner`, and `Tool.call` hands such a tool's call over once the arguments are valid.
    """

    async def run(self, tool: Tool, arguments: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any] | None:
        """The call's result when the runner took it over (a `CreateTaskResult`); None: run it inline."""
        ...


class Tool:
    """A function served as an MCP tool.

    Args:
        fn: the function; sync or async.
        name: the tool name (default: the function's name).
        title: a human-readable title.
        description: what the tool does (default: the docstring's description).
        annotations: behaviour hints (`ToolAnnotations` or an `mcp_types.ToolAnnotations`).
        icons: icons for clients that show them.
        meta: the tool's `_meta`.
        input_schema: an input schema to publish verbatim; the arguments are then
            only checked for required and (with `additionalProperties: false`) unknown
            keys, and passed to the function as keyword arguments.
        output_schema: an output schema to publish verbatim; the return value is then
            sent as `structuredContent` without validation.
        structured_output: None derives structured output from the return annotation;
            False never produces it; True requires a return annotation that supports it.
        scope: the minimum `Scope` a caller needs to see and call the tool (default USER).
        permissions: the Django permissions (`"app_label.codename"`, one or a list) the caller must also
            hold, all of them (docs/permissions.md).
        atomic: None (the default) runs a sync tool in a transaction on each database whose
            `ATOMIC_REQUESTS` is true, as Django runs a view; True also on `using` (default: the
            `default` database) whatever `ATOMIC_REQUESTS` says; False outside any transaction
            (`transaction.non_atomic_requests` for a tool).
        using: the database alias (or aliases) `atomic=True` makes the call atomic on.
        timeout: seconds a call may run before it answers a timeout error; None follows the
            endpoint's `tool_timeout`, then `MCP_DJANGO["TOOL_TIMEOUT"]` (`mcp_django.runtime.time_limits`).
        max_output_chars: the most characters a result may have (text, other blocks and structured content
            as JSON); None follows the endpoint's `tool_output_max_chars`, then
            `MCP_DJANGO["TOOL_OUTPUT_MAX_CHARS"]`; past it the result is truncated or refused
            (`mcp_django.runtime.output_caps`).
        task: `"optional"` or `"required"` to run the tool as a task of the tasks extension for clients
            that declare it (docs/tasks.md); None (the default) always runs it inline.
        task_inputs: input requests by key (`{"method": "elicitation/create", "params": ...}`) asked
            in the request before the task starts; the task reads the answers under the same keys.
        app: the tool's view for hosts of the MCP Apps extension: a template name, an `App` or its
            keyword arguments as a dict (docs/apps.md); served by `mcp_django.ui` when installed.
        approval: the Django permission (`"app_label.codename"`) of whoever must approve each call before
            it runs, or an `Approval` (with a preview); the call answers with a task that waits for the
            approval (the tasks extension; docs/side-effects.md#approvals).

    Attributes:
        wire: the definition `tools/list` returns, in its lean form (`mcp_django.declarations.lean`).
        verbose_wire: the same as built, for endpoints with `definitions="verbose"`.
    """

    lean_verbatim: ClassVar[bool] = False
    """Whether the lean form also trims an `input_schema=`/`output_schema=` given verbatim (True for a toolset
    that generates them from an OpenAPI document, as django-ninja's)."""

    def __init__(
        self,
        fn: AnyFunction,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | mcp_types.ToolAnnotations | None = None,
        icons: Sequence[Icon | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        scope: Scope | str | int = Scope.USER,
        permissions: str | Sequence[str] | None = None,
        atomic: bool | None = None,
        using: str | Sequence[str] | None = None,
        timeout: float | None = None,
        max_output_chars: int | None = None,
        task: str | None = None,
        task_inputs: Mapping[str, Mapping[str, Any]] | None = None,
        app: str | App | Mapping[str, Any] | None = None,
        approval: str | Approval | None = None,
    ) -> None:
        if task not in (None, "optional", "required"):
            raise DeclarationError(f'tool {name or function_name(fn)!r}: task must be "optional", "required" or None')
        self.task = task
        self.task_inputs = {key: dict(request) for key, request in (task_inputs or {}).items()}
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
            raise DeclarationError(f"tool {name or function_name(fn)!r}: timeout must be a positive number of seconds")
        self.timeout = timeout
        if max_output_chars is not None and (
            isinstance(max_output_chars, bool) or not isinstance(max_output_chars, int) or max_output_chars <= 0
        ):
            raise DeclarationError(f"tool {name or function_name(fn)!r}: max_output_chars must be a positive integer")
        self.max_output_chars = max_output_chars
        self.fn = fn
        self.name: str = name or function_name(fn)
        owner = f"tool {self.name!r}"
        self.app: App | None = app_of(owner, app)
        self.scope = declared_scope(owner, scope)
        self.permissions = declared_permissions(owner, permissions)
        self.approval: Approval | None = approval_rule(owner, approval)
        self.approval_preview: Preview | None = None
        """What an approver is shown beside the arguments when the `Approval` has no preview (a toolset's)."""
        if atomic is not True and using is not None:
            raise DeclarationError(f"{owner}: using= names the databases of atomic=True; set atomic=True too")
        self.signature = Signature(fn, owner, build_model=input_schema is None)
        self.description = require_description(owner, description or self.signature.description)
        self.title = title
        self._verbatim_input = input_schema is not None
        if input_schema is not None:
            if input_schema.get("type") != "object":
                raise DeclarationError(f'{owner}: input_schema needs "type": "object" at its root')
            self.input_schema = dict(input_schema)
            self._required = tuple(input_schema.get("required", ()))
            closed = input_schema.get("additionalProperties") is False
            self._known: frozenset[str] | None = frozenset(input_schema.get("properties", {})) if closed else None
        self._output: StructuredOutput | None = None
        self._verbatim_output = output_schema is not None
        if output_schema is not None:
            self.output_schema = dict(output_schema)
        else:
            self._output = self._structured_output(structured_output)
        self._serializer = named_serializer(self.signature.return_annotation)
        self.run_as(atomic, using)
        self._metadata = (annotations, icons, meta)
        if not (self.signature.plain and (self._output is None or self._output.plain)):
            self.wire, self.param_headers  # noqa: B018  # the whole definition now: what pydantic refuses is raised here

    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        """The `inputSchema` (compiled from the signature on first use, unless given)."""
        return self._arguments_schema(self.signature.schema)

    @functools.cached_property
    def output_schema(self) -> dict[str, Any] | None:
        """The `outputSchema`, or None for unstructured output (compiled on first use, unless given)."""
        return self._output.schema if self._output else None

    @functools.cached_property
    def verbose_wire(self) -> dict[str, Any]:
        """The definition as built, for endpoints with `definitions="verbose"`."""
        annotations, icons, meta = self._metadata
        return wire(
            {"name": self.name},
            [
                ("title", self.title),
                ("description", self.description),
                ("inputSchema", self.input_schema),
                ("outputSchema", self.output_schema),
                ("annotations", results.plain(annotations)),
                ("icons", results.plain(icons)),
                ("_meta", results.plain(meta)),
            ],
        )

    @functools.cached_property
    def wire(self) -> dict[str, Any]:
        """The definition `tools/list` returns, in its lean form (`mcp_django.declarations.lean`)."""
        lean = lean_definition(
            self.verbose_wire,
            arguments=self.lean_verbatim or not self._verbatim_input,
            output=self.lean_verbatim or not self._verbatim_output,
        )
        return self.verbose_wire if lean == self.verbose_wire else lean  # one copy if alike

    @functools.cached_property
    def param_headers(self) -> Mapping[str, str]:
        """The arguments a stateless call mirrors in `Mcp-Param-*` headers (`x-mcp-header`), checked by the backend."""
        return param_headers_of(self.input_schema)

    @property
    def destructive(self) -> bool:
        """Whether the tool is annotated `destructiveHint: true` (a setting may make such tools need approval)."""
        return self.wire.get("annotations", {}).get("destructiveHint") is True

    def _arguments_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The input schema `Signature` compiled, as this tool publishes it (a subclass may amend it)."""
        return schema

    def definition(self, verbose: bool = False) -> dict[str, Any]:
        """The definition `tools/list` serves: `wire`, or `verbose_wire` for an endpoint with `definitions="verbose"`
        (`mcp_django.declarations.lean.verbose(ctx)` says which)."""
        return self.verbose_wire if verbose else self.wire

    def run_as(self, atomic: bool | None, using: str | Sequence[str] | None = None) -> None:
        """Run the calls as `atomic` and `using` say (the options of the same names; a toolset's apply to
        its tools that set no `atomic` of their own)."""
        self.atomic, self.using = atomic, using
        self._run = Runner(self.fn, serializer=self._serializer, unit=unit_of_work(atomic, using))

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"

    def _structured_output(self, wanted: bool | None) -> StructuredOutput | None:
        annotation = output_annotation(self.signature.return_annotation)  # a model: the pydantic model of its fields
        unsupported = (
            annotation in (inspect.Signature.empty, Any, None, type(None), bytes)
            or mentions_content(annotation)
            or wanted is False
        )
        if unsupported:
            if wanted:
                raise DeclarationError(f"tool {self.name!r}: structured output needs a data return annotation")
            return None
        try:
            return StructuredOutput(annotation, self.name)
        except schema_errors() as exc:
            if wanted:
                raise DeclarationError(f"tool {self.name!r}: no output schema for {annotation!r} ({exc})") from exc
            tool_logger.debug("tool %r: return type %r has no JSON schema; output is unstructured", self.name, exc)
            return None

    def _bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        if not self._verbatim_input:
            return self.signature.bind(arguments)
        given = dict(arguments) if arguments else {}
        problems = [f"{key}: Field required" for key in self._required if key not in given]
        if self._known is not None:
            problems += [f"{key}: Extra inputs are not permitted" for key in given if key not in self._known]
        if problems:
            raise ArgumentsInvalid("; ".join(problems))
        return given

    async def call(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> dict[str, Any]:
        """Validate the arguments, run the function and return its `CallToolResult`.

        Bad arguments, a `ToolError` and any other exception become `isError`
        results; an `MCPError` the function raises propagates as a protocol error.
        """
        try:
            kwargs = self._bind(arguments)
        except ArgumentsInvalid as exc:
            return tool_error(f"Invalid arguments for tool {self.name}: {exc}")
        if self.task is not None or self.approval is not None or self.destructive:
            runner: ToolRunner | None = getattr(request.endpoint, "tool_runner", None)
            if runner is None and self.approval is not None:  # never run a call that must be approved first
                raise InvalidRequest(f"The tool {self.name!r} needs approval, and nothing here runs approvals")
            started = None if runner is None else await runner.run(self, arguments or {}, request)
            if started is not None:
                return started
        settling, inner = settlement.get(), None
        if settling is not None and settling.convert is None:  # a keyed call: its result is kept in its transaction
            settling.convert = self.result
            settling.skip = self.wire.get("annotations", {}).get("idempotentHint") is True
        elif settling is not None:  # a call the keyed call makes: it keeps nothing
            inner = settlement.set(None)
        try:
            value = await self._run(with_context(kwargs, self.signature, request))
            return self.result(value)
        except MCPError:
            raise
        except Exception as exc:
            return results.tool_failure(self.name, exc, tool_logger, f"Tool {self.name}")
        finally:
            if inner is not None:
                settlement.reset(inner)

    def result(self, value: Any) -> dict[str, Any]:
        """Convert a return value into a `CallToolResult` (`mcp_django.runtime.results.tool_result`)."""
        return results.tool_result(value, self.name, output=self._output, verbatim_output=self._verbatim_output)
