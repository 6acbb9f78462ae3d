"""Event types, declared like tools: `@event("book.added", ...)` on a filter function in `<app>/mcp.py`.

    class BookAdded(TypedDict):
        id: int
        title: str
        genre: str

    @event("book.added", permissions=["demo.view_book"])
    def book_added(book: BookAdded, genre: str | None = None) -> bool:
        \"\"\"A book was added to the catalogue.

        Args:
            genre: only books of this genre.
        \"\"\"
        return genre is None or book["genre"] == genre

The function's first parameter is the payload: its annotation is the event type's `payloadSchema`,
and `emit()` validates what it is given against it. The other parameters are the subscription's
arguments: their signature is the `inputSchema` (a subscription's arguments are validated against it,
as a tool's are), and the function, called with an occurrence's payload and a subscriber's arguments,
answers whether that subscriber receives it. `scope` and `permissions` decide who sees the type, as
for tools, at subscribe time and again at each delivery.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pydantic

from mcp_django.declarations.signatures import ArgumentsInvalid, Signature, StructuredOutput
from mcp_django.events.wire import DELIVERY_MODES
from mcp_django.exceptions import DeclarationError
from mcp_django.permissions import Permissions, parse_permissions
from mcp_django.protocol import InvalidParams
from mcp_django.scopes import Scope

logger = logging.getLogger("mcp_django.events")

Filter = Callable[..., bool]


@dataclasses.dataclass(frozen=True, eq=False)
class EventType:
    """One declared event type: its name, the schemas of its arguments and payload, who may see it."""

    name: str
    description: str
    filter: Filter
    arguments: Signature
    payload: pydantic.TypeAdapter[Any]
    payload_schema: dict[str, Any]
    scope: Scope
    permissions: Permissions
    delivery: tuple[str, ...]

    def descriptor(self) -> dict[str, Any]:
        """The event type as `events/list` lists it."""
        return {
            "name": self.name,
            "description": self.description,
            "delivery": list(self.delivery),
            "inputSchema": self.arguments.schema,
            "payloadSchema": self.payload_schema,
        }

    def bind(self, arguments: Any) -> dict[str, Any]:
        """A subscription's arguments, validated against the input schema.

        Raises:
            InvalidParams: they do not fit (`-32602`).
        """
        if arguments is not None and not isinstance(arguments, Mapping):
            raise InvalidParams("Invalid params: arguments must be an object")
        try:
            return self.arguments.bind(arguments)
        except ArgumentsInvalid as error:
            raise InvalidParams(f"Invalid arguments for event {self.name!r}: {error}") from None

    def dump(self, payload: Any) -> Any:
        """The JSON form of an occurrence's payload, validated against the payload annotation.

        Raises:
            pydantic.ValidationError: the payload does not fit it.
        """
        return self.payload.dump_python(self.payload.validate_python(payload), mode="json", by_alias=True)

    def matches(self, data: Any, bound: Mapping[str, Any]) -> bool:
        """Whether a subscriber with these (bound) arguments receives an occurrence of `data`.

        A filter that raises says no, and the exception is logged: one bad occurrence must not stop a stream.
        """
        try:
            return bool(self.filter(self.payload.validate_python(data), **bound))
        except Exception:
            logger.exception("The filter of event type %r raised; the occurrence is not delivered", self.name)
            return False


class EventTypes:
    """The event types a site declares, by name; `event_types` is the one `@event` fills."""

    def __init__(self) -> None:
        self._types: dict[str, EventType] = {}

    def __iter__(self) -> Any:
        return iter(sorted(self._types.values(), key=lambda declared: declared.name))

    def __len__(self) -> int:
        return len(self._types)

    def get(self, name: str) -> EventType | None:
        return self._types.get(name)

    def add(self, declared: EventType) -> EventType:
        """Add a declared type; the same function declaring it again (its module imported anew) replaces it.

        Raises:
            DeclarationError: another function declares a type of that name.
        """
        known = self._types.get(declared.name)
        if known is not None and _origin(known.filter) != _origin(declared.filter):
            raise DeclarationError(f"event {declared.name!r} is declared twice")
        self._types[declared.name] = declared
        return declared

    def remove(self, name: str) -> None:
        self._types.pop(name, None)

    def event(
        self,
        name: str,
        *,
        scope: Scope | str | int = Scope.USER,
        permissions: str | Iterable[str] | None = None,
        delivery: Iterable[str] = DELIVERY_MODES,
        description: str | None = None,
    ) -> Callable[[Filter], Filter]:
        """Declare the event type `name` from its filter function (the module docstring shows one)."""

        def declare(fn: Filter) -> Filter:
            declared = declare_event(
                fn, name, scope=scope, permissions=permissions, delivery=delivery, description=description
            )
            self.add(declared)
            return fn

        return declare


def _origin(fn: Filter) -> tuple[str, str]:
    return getattr(fn, "__module__", ""), getattr(fn, "__qualname__", "")


def declare_event(
    fn: Filter,
    name: str,
    *,
    scope: Scope | str | int,
    permissions: str | Iterable[str] | None,
    delivery: Iterable[str],
    description: str | None,
) -> EventType:
    """The `EventType` a filter function declares.

    Raises:
        DeclarationError: no payload parameter, an unknown delivery mode, a signature that builds no schema.
    """
    owner = f"event {name!r}"
    if not isinstance(name, str) or not name:
        raise DeclarationError("an event type needs a name")
    modes = tuple(dict.fromkeys(delivery))
    if not modes or not set(modes) <= set(DELIVERY_MODES):
        raise DeclarationError(f"{owner}: delivery must be some of {', '.join(DELIVERY_MODES)}")
    parameters = list(inspect.signature(fn, eval_str=True).parameters.values())
    if not parameters:
        raise DeclarationError(f"{owner}: the first parameter takes the payload")
    payload_annotation = parameters[0].annotation
    if payload_annotation is inspect.Parameter.empty:
        payload_annotation = dict[str, Any]

    def arguments_only(**arguments: Any) -> Any:  # what Signature reads: the parameters after the payload
        return None

    arguments_only.__signature__ = inspect.Signature(parameters[1:])  # type: ignore[attr-defined]
    arguments_only.__doc__ = fn.__doc__
    arguments_only.__name__ = getattr(fn, "__name__", "event")
    signature = Signature(arguments_only, owner)
    schema = dict(signature.schema)
    schema.setdefault("properties", {})
    try:
        payload = StructuredOutput(payload_annotation, name)
    except (pydantic.PydanticUserError, TypeError, ValueError) as error:
        raise DeclarationError(f"{owner}: cannot build a payload schema ({error})") from error
    if payload.wrap:
        raise DeclarationError(f"{owner}: the payload must be an object (a TypedDict, dataclass or pydantic model)")
    return EventType(
        name=name,
        description=description or signature.description or name,
        filter=fn,
        arguments=signature,
        payload=payload.adapter,
        payload_schema=payload.schema,
        scope=Scope.parse(scope),
        permissions=parse_permissions(permissions),
        delivery=modes,
    )


event_types = EventTypes()
"""Every event type the site's `mcp.py` modules declare with `@event`."""

event = event_types.event
