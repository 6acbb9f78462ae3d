"""Plain-Python checks that the params of a hot request are valid, so the common case builds no pydantic model.

(`result_shapes` writes the hot results the same way.)

mcp-types validates a request by building its pydantic model (`validate_client_request`): about 5-8 µs
for a `tools/call`, a good part of what the whole call costs in process. `known_valid` answers the same
question for the shapes clients send on every call, by looking at the dict itself, and only ever says
yes: whatever it does not recognise (an unknown field, a field it leaves to pydantic such as `icons`, a
value of an unexpected type) is no, and the caller then runs mcp-types as before. Every error a client
can see therefore still comes from mcp-types, unchanged; `tests/fuzz/test_fuzz_shapes.py` checks that
every params dict said yes to is one mcp-types accepts.

Each check is written against the field names and annotations of the mcp-types model it stands for, and
those are compared once, at import: a field added, removed or retyped by a new mcp-types release, or a
model it no longer has (the models are found through the module its public tables name), turns that
check off (mcp-types validates those requests again) instead of letting it accept what it no longer
knows.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final

from mcp_types.methods import CLIENT_NOTIFICATIONS, CLIENT_REQUESTS
from pydantic import BaseModel

from mcp_django.protocol.context import LOG_LEVELS

Check = Callable[[Any], bool]
Field = tuple[Check, str]
"""A field's check and the annotation it was written for, as `_spelled` writes it."""

_MODULE = re.compile(r"mcp_types\._v\d+_\d+_\d+\.|typing\.")
_CLASS = re.compile(r"<class '([^']*)'>")


def _spelled(annotation: Any) -> str:
    """An annotation as text without module paths: `Meta | None`, `str`, `dict[str, Any] | None`."""
    return _MODULE.sub("", _CLASS.sub(r"\1", str(annotation)))


def _never(value: Any) -> bool:
    return False


def _string(value: Any) -> bool:
    return type(value) is str


def _optional(check: Check) -> Check:
    def optional(value: Any) -> bool:
        return value is None or check(value)

    return optional


def _absent(value: Any) -> bool:
    """Only None: a field whose values are left to pydantic (`task`, `icons`, `inputResponses`)."""
    return value is None


def _token(value: Any) -> bool:
    """`str | int` (bool is an int subclass pydantic refuses here; it is left to pydantic)."""
    kind = type(value)
    return kind is str or kind is int


def _boolean(value: Any) -> bool:
    return type(value) is bool


def _object(value: Any) -> bool:
    """`dict[str, Any]`."""
    return type(value) is dict and all(type(key) is str for key in value)


def _json(value: Any) -> bool:
    """A `JSONValue`: what a JSON parser can return (finite numbers only)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_json(item) for item in value)
    return kind is dict and all(type(key) is str and _json(item) for key, item in value.items())


def _json_copy(value: Any) -> Any:
    """A copy of a `JSONValue`'s lists and dicts (what `_json` accepted), the rest shared."""
    kind = type(value)
    if kind is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    return value


def _json_object(value: Any) -> bool:
    """`dict[str, JSONValue]`."""
    return type(value) is dict and _json(value)


def _objects_of(check: Check) -> Check:
    """`dict[str, X]` where `check` says what X is."""

    def objects(value: Any) -> bool:
        return type(value) is dict and all(type(key) is str and check(item) for key, item in value.items())

    return objects


def _log_level(value: Any) -> bool:
    return type(value) is str and value in LOG_LEVELS


def _module_of(method: str, version: str) -> ModuleType | None:
    """The mcp-types module whose models serve `method` at `version` (found through the public tables)."""
    model = CLIENT_REQUESTS.get((method, version))
    return sys.modules.get(model.__module__) if model is not None else None


handshake: Final = _module_of("tools/call", "2025-11-25")
stateless: Final = _module_of("tools/call", "2026-07-28")


def _class(module: ModuleType | None, name: str) -> Any:
    """`module.name`, or None when mcp-types has no such model any more (its checks then say no)."""
    return getattr(module, name, None)


def _model(model: type[BaseModel] | None, fields: Mapping[str, Field]) -> Check:
    """The check of a mcp-types model whose fields, by wire name, `fields` lists with their annotations.

    When the model's fields or annotations differ from `fields` (mcp-types changed), the check says no
    to everything, so pydantic validates those values again.
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return _never
    wire = {(info.alias or name): (name, info) for name, info in model.model_fields.items()}
    written = {key: annotation for key, (_, annotation) in fields.items()}
    if {key: _spelled(info.annotation) for key, (_, info) in wire.items()} != written:
        return _never
    if model.model_config.get("extra") not in ("ignore", "allow"):
        return _never
    checks = {key: check for key, (check, _) in fields.items()}
    required = tuple(key for key, (_, info) in wire.items() if info.is_required())
    # `populate_by_name` models read `client_info` as `clientInfo` unless validated `by_name=False`, as
    # mcp-types does; such keys are left to pydantic rather than reasoned about here.
    by_name = frozenset(name for key, (name, _) in wire.items() if name != key)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for key in required:
            if key not in value:
                return False
        for key, item in value.items():
            field = checks.get(key)
            if field is not None:
                if not field(item):
                    return False
            elif type(key) is not str or key in by_name:
                return False
        return True

    return check


def _implementation(module: Any) -> Check:
    return _model(
        _class(module, "Implementation"),
        {
            "description": (_optional(_string), "str | None"),
            "icons": (_absent, "list[Icon] | None"),
            "name": (_string, "str"),
            "title": (_optional(_string), "str | None"),
            "version": (_string, "str"),
            "websiteUrl": (_optional(_string), "str | None"),
        },
    )


# -- the handshake era (2024-11-05 … 2025-11-25: one mcp-types module serves them all) ------------------

_OBJECT: Final[Field] = (_optional(_object), "dict[str, Any] | None")

_META = _model(_class(handshake, "Meta"), {"progressToken": (_optional(_token), "str | int | None")})
_HANDSHAKE_META: Final[Field] = (_optional(_META), "Meta | None")
_HANDSHAKE_CAPABILITIES = _model(
    _class(handshake, "ClientCapabilities"),
    {
        "elicitation": (
            _optional(_model(_class(handshake, "Elicitation"), {"form": _OBJECT, "url": _OBJECT})),
            "Elicitation | None",
        ),
        "experimental": (_optional(_objects_of(_object)), "dict[str, dict[str, Any]] | None"),
        "roots": (
            _optional(_model(_class(handshake, "Roots"), {"listChanged": (_optional(_boolean), "bool | None")})),
            "Roots | None",
        ),
        "sampling": (
            _optional(_model(_class(handshake, "Sampling"), {"context": _OBJECT, "tools": _OBJECT})),
            "Sampling | None",
        ),
        "tasks": (_absent, "Tasks | None"),
    },
)
_HANDSHAKE_PARAMS: Final[Mapping[str, Check]] = {
    "tools/call": _model(
        _class(handshake, "CallToolRequestParams"),
        {
            "_meta": _HANDSHAKE_META,
            "arguments": _OBJECT,
            "name": (_string, "str"),
            "task": (_absent, "TaskMetadata | None"),
        },
    ),
    "tools/list": _model(
        _class(handshake, "PaginatedRequestParams"),
        {"_meta": _HANDSHAKE_META, "cursor": (_optional(_string), "str | None")},
    ),
    "ping": _model(_class(handshake, "RequestParams"), {"_meta": _HANDSHAKE_META}),
    "initialize": _model(
        _class(handshake, "InitializeRequestParams"),
        {
            "_meta": _HANDSHAKE_META,
            "capabilities": (_HANDSHAKE_CAPABILITIES, "ClientCapabilities"),
            "clientInfo": (_implementation(handshake), "Implementation"),
            "protocolVersion": (_string, "str"),
        },
    ),
}
_HANDSHAKE_NOTIFICATIONS: Final[Mapping[str, Check]] = {
    "notifications/initialized": _model(_class(handshake, "NotificationParams"), {"_meta": _OBJECT}),
    "notifications/cancelled": _model(
        _class(handshake, "CancelledNotificationParams"),
        {
            "_meta": _OBJECT,
            "reason": (_optional(_string), "str | None"),
            "requestId": (_optional(_token), "str | int | None"),
        },
    ),
}

# -- the stateless era (2026-07-28) -------------------------------------------------------------------

_JSON_OBJECT: Final[Field] = (_optional(_json_object), "dict[str, JSONValue] | None")
_STATELESS_CAPABILITIES = _model(
    _class(stateless, "ClientCapabilities"),
    {
        "elicitation": (
            _optional(_model(_class(stateless, "Elicitation"), {"form": _JSON_OBJECT, "url": _JSON_OBJECT})),
            "Elicitation | None",
        ),
        "experimental": (_optional(_objects_of(_json_object)), "dict[str, dict[str, JSONValue]] | None"),
        "extensions": (_optional(_objects_of(_json_object)), "dict[str, dict[str, JSONValue]] | None"),
        "roots": _OBJECT,
        "sampling": (
            _optional(_model(_class(stateless, "Sampling"), {"context": _JSON_OBJECT, "tools": _JSON_OBJECT})),
            "Sampling | None",
        ),
    },
)
_REQUEST_META: Final[Field] = (
    _model(
        _class(stateless, "RequestMetaObject"),
        {
            "io.modelcontextprotocol/clientCapabilities": (_STATELESS_CAPABILITIES, "ClientCapabilities"),
            "io.modelcontextprotocol/clientInfo": (_optional(_implementation(stateless)), "Implementation | None"),
            "io.modelcontextprotocol/logLevel": (
                _optional(_log_level),
                "Optional[Literal['alert', 'critical', 'debug', 'emergency', 'error', 'info', 'notice', 'warning']]",
            ),
            "io.modelcontextprotocol/protocolVersion": (_string, "str"),
            "progressToken": (_optional(_token), "str | int | None"),
        },
    ),
    "RequestMetaObject",
)
_NOTIFICATION_META: Final[Field] = (
    _optional(
        _model(
            _class(stateless, "NotificationMetaObject"),
            {"io.modelcontextprotocol/subscriptionId": (_optional(_token), "str | int | None")},
        )
    ),
    "NotificationMetaObject | None",
)
_STATELESS_PARAMS: Final[Mapping[str, Check]] = {
    "tools/call": _model(
        _class(stateless, "CallToolRequestParams"),
        {
            "_meta": _REQUEST_META,
            "arguments": _OBJECT,
            "inputResponses": (
                _absent,
                "dict[str, CreateMessageResult | ListRootsResult | ElicitResult] | None",
            ),
            "name": (_string, "str"),
            "requestState": (_optional(_string), "str | None"),
        },
    ),
    "tools/list": _model(
        _class(stateless, "PaginatedRequestParams"),
        {"_meta": _REQUEST_META, "cursor": (_optional(_string), "str | None")},
    ),
    "server/discover": _model(_class(stateless, "RequestParams"), {"_meta": _REQUEST_META}),
}
_STATELESS_NOTIFICATIONS: Final[Mapping[str, Check]] = {
    "notifications/cancelled": _model(
        _class(stateless, "CancelledNotificationParams"),
        {
            "_meta": _NOTIFICATION_META,
            "reason": (_optional(_string), "str | None"),
            "requestId": (_token, "str | int"),
        },
    ),
}


def _rows(
    surface: Mapping[tuple[str, str], type[BaseModel]], module: Any, params: Mapping[str, Check]
) -> dict[tuple[str, str], Check]:
    """The (method, version) rows of `surface` that `module` serves, each with its params check.

    A row is left out (so mcp-types validates it) unless its model is `module`'s and takes the params
    model the check was written for.
    """
    rows = {}
    for (method, version), model in surface.items():
        check = params.get(method)
        if check is None or module is None or model.__module__ != module.__name__:
            continue
        annotation = model.model_fields["params"].annotation
        if check is not _never and _spelled(annotation).removesuffix(" | None") in _PARAMS_MODELS[method]:
            rows[(method, version)] = check
    return rows


_PARAMS_MODELS: Final[Mapping[str, frozenset[str]]] = {
    "tools/call": frozenset({"CallToolRequestParams"}),
    "tools/list": frozenset({"PaginatedRequestParams"}),
    "ping": frozenset({"RequestParams"}),
    "initialize": frozenset({"InitializeRequestParams"}),
    "server/discover": frozenset({"RequestParams"}),
    "notifications/initialized": frozenset({"NotificationParams"}),
    "notifications/cancelled": frozenset({"CancelledNotificationParams"}),
}

_REQUESTS: Final = {
    **_rows(CLIENT_REQUESTS, handshake, _HANDSHAKE_PARAMS),
    **_rows(CLIENT_REQUESTS, stateless, _STATELESS_PARAMS),
}
_NOTIFICATIONS: Final = {
    **_rows(CLIENT_NOTIFICATIONS, handshake, _HANDSHAKE_NOTIFICATIONS),
    **_rows(CLIENT_NOTIFICATIONS, stateless, _STATELESS_NOTIFICATIONS),
}


def known_valid(method: str, version: str, params: Any) -> bool:
    """Whether `params` is, without doubt, what mcp-types accepts for the client request `method` at `version`.

    False means "not known here", not "invalid": the caller then asks mcp-types.
    """
    check = _REQUESTS.get((method, version))
    return check is not None and check(params)


def known_valid_notification(method: str, version: str, params: Any) -> bool:
    """Whether `params` is, without doubt, what mcp-types accepts for the client notification `method`."""
    check = _NOTIFICATIONS.get((method, version))
    return check is not None and check(params)
