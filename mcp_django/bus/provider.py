"""`BusProvider`: a bus's whitelisted actions as MCP tools taking `{target, payload}`, dispatched as the agent."""

from __future__ import annotations

import fnmatch
import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

from django.utils.module_loading import import_string

from mcp_django.bus.core import HANDLER_FAILED, Action, Bus, Err, Metadata, Ok
from mcp_django.context import Context
from mcp_django.declarations import NAME_PATTERN
from mcp_django.declarations.lean import lean_definition, verbose
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.protocol.results import tool_error
from mcp_django.providers import ToolProvider

if TYPE_CHECKING:
    import pydantic

logger = logging.getLogger("mcp_django.bus")

AGENT: Final = "agent"
"""The `Metadata.origin` of every dispatch an MCP client drives."""
INVALID_ARGUMENTS: Final = "invalid_arguments"
"""`Err.code` of a tool call with arguments besides `target` and `payload`."""
ARGUMENTS: Final = ("target", "payload")


class BusProvider(ToolProvider):
    """Serves the actions of `bus` whose names match `actions` as tools; every dispatch has `origin="agent"`.

    Subclass it, name the bus and the glob patterns (`fnmatch`: `*`, `?`, `[...]`) of the
    actions to expose, and list the subclass in your app config's `mcp_providers`::

        class CatalogueTools(BusProvider):
            id = "shop.catalogue"
            scope = Scope.TEAM
            bus = "shop.actions.bus"
            actions = ["catalogue.book.*", "catalogue.stats"]

    A tool's arguments are `{"target": {...}, "payload": {...}}`, its `inputSchema` built from
    the action's models. A success answers the value as JSON text plus `structuredContent` (the
    value itself when it is an object, else `{"result": value}`); a bus error is an `isError`
    result reading `"<message> (<code>)"`. An action the whitelist does not match is neither
    listed nor ever dispatched: calling it answers exactly as an unknown tool.

    Attributes:
        bus: the `Bus`, or its dotted path; `mcp_django.bus.default_bus` unless set.
        actions: glob patterns of the action names to expose. None exposes every action, and
            the system check `mcp_django.W002` warns about it: an MCP client is a model-driven
            caller, so say `["*"]` if you mean everything.
    """

    bus: Bus | str = "mcp_django.bus.default_bus"
    actions: ClassVar[Sequence[str] | None] = None

    def __init__(self) -> None:
        self._resolved: Bus | None = None
        self._definitions: dict[tuple[str, bool], dict[str, Any]] = {}

    def get_bus(self) -> Bus:
        """The bus this provider serves (imported on first use when named by a dotted path)."""
        if self._resolved is None:
            bus = import_string(self.bus) if isinstance(self.bus, str) else self.bus
            if not isinstance(bus, Bus):
                raise TypeError(f"{type(self).__name__}.bus names {bus!r}, which is not a mcp_django.bus.Bus")
            self._resolved = bus
        return self._resolved

    def exposes(self, name: str) -> bool:
        """Whether the whitelist lets the action `name` through (a valid MCP tool name is also needed)."""
        if not NAME_PATTERN.fullmatch(name):
            return False
        return self.actions is None or any(fnmatch.fnmatchcase(name, pattern) for pattern in self.actions)

    def exposed(self) -> list[Action]:
        """The bus's actions this provider serves, in registration order."""
        return [action for action in self.get_bus().actions if self.exposes(action.name)]

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [self._definition(action, verbose(ctx)) for action in self.exposed()]

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        bus = self.get_bus()
        if name not in bus or not self.exposes(name):
            raise InvalidParams(f"Unknown tool: {name}")
        unexpected = sorted(set(arguments) - set(ARGUMENTS))
        if unexpected:
            return error_result(
                Err(INVALID_ARGUMENTS, f"Unexpected argument {unexpected[0]}: pass only target and payload.")
            )
        endpoint = getattr(ctx.endpoint, "name", None)
        metadata = Metadata(origin=AGENT, user=ctx.request.principal, extra={"endpoint": endpoint, "tool": name})
        result = await bus.dispatch(name, arguments.get("target"), arguments.get("payload"), metadata=metadata)
        if isinstance(result, Err):
            return error_result(result)
        return self._success(name, result)

    def _success(self, name: str, result: Ok[Any]) -> dict[str, Any]:
        import pydantic_core  # here, not when the package loads: a management command pays none (issue 34)

        try:
            value = pydantic_core.to_jsonable_python(result.value)
            text = json.dumps(value, ensure_ascii=False)
        except (pydantic_core.PydanticSerializationError, TypeError, ValueError):
            logger.exception("Action %s returned a value that is not JSON", name)
            return error_result(Err(HANDLER_FAILED, f"Action {name} failed."))
        structured = value if isinstance(value, dict) else {"result": value}
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured}

    def _definition(self, action: Action, verbose: bool) -> dict[str, Any]:
        """The tool of `action`, lean unless the endpoint serves verbose definitions; built once each."""
        tool = self._definitions.get((action.name, verbose))
        if tool is None:
            tool = {"name": action.name, "inputSchema": input_schema(action, titles=verbose)}
            if action.title:
                tool["title"] = action.title
            if action.description:
                tool["description"] = action.description
            tool = self._definitions[action.name, verbose] = tool if verbose else lean_definition(tool)
        return tool


def error_result(error: Err) -> dict[str, Any]:
    """The `isError` `CallToolResult` of a bus error: the message and code as text, and as structured content."""
    detail = {"code": error.code, "message": error.message}
    if error.field is not None:
        detail["field"] = error.field
    return {**tool_error(f"{error.message} ({error.code})"), "structuredContent": {"error": detail}}


def input_schema(action: Action, *, titles: bool = True) -> dict[str, Any]:
    """The JSON Schema of `{target, payload}` for `action`: both models inlined, their sub-models in `$defs`
    (and the model itself when both parts are the same one: `Empty`, say). `titles=False` leaves out the
    title pydantic gives an inlined model (its class name).

    A part whose model has no required field may be left out of the arguments (it is `{}` then).
    """
    from pydantic.json_schema import models_json_schema  # here, not when the package loads (issue 34)

    models: list[tuple[type[pydantic.BaseModel], Any]] = [(action.target, "validation"), (action.payload, "validation")]
    refs, top = models_json_schema(models, ref_template="#/$defs/{model}")
    definitions: dict[str, Any] = dict(top.get("$defs", {}))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field, model in zip(ARGUMENTS, (action.target, action.payload), strict=True):
        reference = refs[(model, "validation")]
        properties[field] = reference
        if any(info.is_required() for info in model.model_fields.values()):
            required.append(field)
    # Inline each part's own definition unless a definition (a recursive model) or the other part refers to it.
    inlined = set()
    keys = [str(properties[field].get("$ref", "")).removeprefix("#/$defs/") for field in ARGUMENTS]
    for field, key in zip(ARGUMENTS, keys, strict=True):
        if key in definitions and keys.count(key) == 1 and _references(key, definitions) == 0:
            properties[field] = definitions[key]
            if not titles and properties[field].get("title") == key:
                properties[field] = {name: value for name, value in properties[field].items() if name != "title"}
            inlined.add(key)
    for key in inlined:
        del definitions[key]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if definitions:
        schema["$defs"] = definitions
    return schema


def _references(key: str, document: Mapping[str, Any]) -> int:
    return json.dumps(document).count(json.dumps(f"#/$defs/{key}"))
