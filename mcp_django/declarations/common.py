"""What every kind of declaration shares: names, errors, metadata types, the runner, the wire dict."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, Literal, NotRequired, Protocol, TypeAlias, TypeVar

from asgiref.sync import iscoroutinefunction
from typing_extensions import TypedDict

from mcp_django.declarations.django_values import evaluate, needs_evaluation
from mcp_django.exceptions import DeclarationError
from mcp_django.permissions import Permissions, granted, parse_permissions
from mcp_django.protocol.context import RequestContext
from mcp_django.runtime.executor import run_sync
from mcp_django.runtime.results import is_failure
from mcp_django.scopes import Scope

NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
"""The characters and length MCP allows in tool and prompt names (2025-11-25)."""

AnyFunction: TypeAlias = Callable[..., Any]


class ToolAnnotations(TypedDict, total=False):
    """Hints about a tool's behaviour (all optional; clients must not trust them blindly)."""

    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class Icon(TypedDict):
    """An icon a client may show next to a tool, resource or prompt."""

    src: str
    mimeType: NotRequired[str]
    sizes: NotRequired[list[str]]
    theme: NotRequired[Literal["light", "dark"]]


class Runner:
    """Calls a declared function: async ones directly, sync ones through `run_sync` (where the ORM may run).

    What the function returns comes back with Django values evaluated where the ORM may run
    (`declarations.django_values.evaluate`): a sync function's in its own thread, an async one's
    through `run_sync` when it returned a QuerySet or model instances. An atomic runner (tools) runs a
    sync function in a transaction on each `ATOMIC_REQUESTS` database (`mcp_django.runtime.transactions`).
    """

    __slots__ = ("_call", "_evaluate", "fn", "is_async")

    def __init__(
        self,
        fn: AnyFunction,
        *,
        serializer: tuple[type, bool] | None = None,
        unit: Callable[..., Any] | None = None,
    ) -> None:
        """Args: serializer: the DRF serializer the function's results are serialized with (and if many);
        unit: how a sync function runs as a unit of work (`transactions.unit_of_work`); None: outside one."""
        self.fn = fn
        self.is_async = iscoroutinefunction(fn) or iscoroutinefunction(type(fn).__call__)
        self._evaluate = functools.partial(evaluate, serializer=serializer)
        sync_call = functools.partial(_evaluated, fn, self._evaluate)
        if unit is not None:
            sync_call = functools.partial(unit, sync_call, is_failure)
        self._call: Callable[..., Awaitable[Any]] = fn if self.is_async else functools.partial(run_sync, sync_call)

    async def __call__(self, kwargs: dict[str, Any]) -> Any:
        value = await self._call(**kwargs)
        if self.is_async and needs_evaluation(value):
            value = await run_sync(self._evaluate, value)
        return value


def _evaluated(fn: AnyFunction, evaluated: Callable[[Any], Any], /, **kwargs: Any) -> Any:
    return evaluated(fn(**kwargs))


def declared_scope(owner: str, value: Scope | str | int) -> Scope:
    """The `Scope` a declaration asks for, parsed.

    Raises:
        DeclarationError: `value` names no scope.
    """
    try:
        return Scope.parse(value)
    except ValueError as exc:
        raise DeclarationError(f"{owner}: {exc}") from None


def declared_permissions(owner: str, value: str | Iterable[str] | None) -> Permissions:
    """The Django permissions a declaration requires (`"app_label.codename"`, one or a list), parsed.

    Raises:
        DeclarationError: `value` is not a permission name or a list of them.
    """
    try:
        return parse_permissions(value)
    except TypeError as exc:
        raise DeclarationError(f"{owner}: {exc}") from None


class Guarded(Protocol):
    """A declaration as callers reach it: the least scope it needs, the Django permissions it requires."""

    scope: Scope
    permissions: Permissions


Declared = TypeVar("Declared", bound=Guarded)


def reached(declaration: Declared | None, scope: Scope) -> Declared | None:
    """The declaration if the caller's scope reaches it, else None (exactly as if it were not declared).

    The one check of a declaration's own scope; `CompositeBackend.reach` checks the sources'.
    """
    return declaration if declaration is not None and declaration.scope <= scope else None


async def allowed(declaration: Declared | None, ctx: RequestContext, scope: Scope) -> Declared | None:
    """The declaration if the caller reaches its scope and holds its permissions, else None (as if undeclared)."""
    found = reached(declaration, scope)
    return found if found is not None and await granted(ctx, found.permissions) else None


def function_name(fn: AnyFunction) -> str:
    """The name a declaration takes by default: the function's, or its class's for callable objects."""
    return str(getattr(fn, "__name__", type(fn).__name__))


def require_description(owner: str, description: str | None) -> str:
    """The description, which every declaration needs.

    Raises:
        DeclarationError: there is none.
    """
    if not description:
        raise DeclarationError(f"{owner} needs a description: give the function a docstring or pass description=")
    return description


def wire(required: dict[str, Any], optional: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A wire dict: the required members, then each optional one that is set (not None, not empty)."""
    wire = dict(required)
    for key, value in optional:
        if value is not None and value != {} and value != []:
            wire[key] = value
    return wire
