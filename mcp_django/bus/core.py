"""The command bus: named actions with pydantic `target` and `payload`, middleware by priority, results as values.

An action is a function of a validated target, a validated payload and the dispatch's
`Metadata`. `Bus.dispatch` never raises: it returns `Ok(value)` or `Err(code, message)`.
Middleware wraps every dispatch, outermost first by descending priority, and may inspect or
replace the command, short-circuit with a result of its own, or rewrite the result.

This module knows nothing of MCP: `mcp_django.bus.provider.BusProvider` exposes actions as
tools and stamps `origin="agent"` on the dispatches it makes.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import importlib
import inspect
import logging
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, TypeAlias, TypeVar, overload

from asgiref.sync import async_to_sync, iscoroutinefunction

from mcp_django.exceptions import ActionError, RegistryFrozen
from mcp_django.protocol.errors import validation_problems
from mcp_django.runtime.executor import run_sync
from mcp_django.runtime.lazy_models import LazyModel, lazy_attributes

if TYPE_CHECKING:
    import pydantic

logger = logging.getLogger("mcp_django.bus")

UNKNOWN_ACTION: Final = "unknown_action"
"""`Err.code` of a dispatch naming an action the bus does not have."""
INVALID_TARGET: Final = "invalid_target"
"""`Err.code` of a target its action's model rejects; `Err.field` names the first bad field."""
INVALID_PAYLOAD: Final = "invalid_payload"
"""`Err.code` of a payload its action's model rejects; `Err.field` names the first bad field."""
HANDLER_FAILED: Final = "handler_failed"
"""`Err.code` of an action or middleware that raised: the message says which action, never why (that is logged)."""

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


if TYPE_CHECKING:

    class Empty(pydantic.BaseModel):
        """The target or payload of an action that takes none (made on first use: `LazyModel`)."""


@LazyModel
def _empty() -> type[pydantic.BaseModel]:
    import pydantic  # here, not when the package loads: a management command pays none (issue 34)

    class Empty(pydantic.BaseModel):
        """The target or payload of an action that takes none: an empty object, nothing else."""

        model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    return Empty


__getattr__ = lazy_attributes(__name__, Empty=_empty)  # made when an action first needs it (`LazyModel`)


@dataclasses.dataclass(frozen=True, slots=True)
class Ok(Generic[T]):
    """A dispatch that succeeded, with the action's return value."""

    value: T = None  # type: ignore[assignment]  # an action may return nothing
    ok: bool = dataclasses.field(default=True, init=False)


@dataclasses.dataclass(frozen=True, slots=True)
class Err:
    """A dispatch that failed: a stable `code`, a message a caller may read, and the bad field if any."""

    code: str
    message: str
    field: str | None = None
    ok: bool = dataclasses.field(default=False, init=False)


Result: TypeAlias = "Ok[Any] | Err"


@dataclasses.dataclass(frozen=True, slots=True)
class Metadata:
    """What travels with one dispatch besides its target and payload; middleware and actions read it.

    Attributes:
        origin: who is dispatching: `"agent"` for every dispatch an MCP client drives (the bus
            provider stamps it), None for local code such as a Django view.
        user: the user on whose behalf the action runs, when known.
        id: unique per dispatch (a UUID4 hex unless given).
        ts: when the dispatch was made (`time.time()`).
        correlation_id: ties related dispatches together, when the caller has such an id.
        extra: anything else (the bus provider puts the endpoint's name and the tool name here).
    """

    origin: str | None = None
    user: Any = None
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)
    ts: float = dataclasses.field(default_factory=time.time)
    correlation_id: str | None = None
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    """One dispatch as middleware sees it; pass a `dataclasses.replace(...)`d copy to `call_next` to alter it.

    `target` and `payload` are instances of the action's models once validated; a middleware
    may pass dicts instead, which are validated again before the action runs.
    """

    action: str
    target: Any
    payload: Any
    metadata: Metadata


CallNext: TypeAlias = Callable[[Command], Awaitable["Ok[Any] | Err"]]
Middleware: TypeAlias = Callable[[Command, CallNext], "Awaitable[Ok[Any] | Err] | Ok[Any] | Err"]
"""`async def middleware(command, call_next) -> Result`: return `await call_next(command)`, or a result of its own."""
M = TypeVar("M", bound=Middleware)


@dataclasses.dataclass(frozen=True, slots=True)
class Action:
    """A registered action: its name, models, description and the function that runs it."""

    name: str
    target: type[pydantic.BaseModel]
    payload: type[pydantic.BaseModel]
    handler: Callable[..., Any]
    description: str
    title: str | None = None


_current: contextvars.ContextVar[Metadata | None] = contextvars.ContextVar("mcp_django_bus_metadata", default=None)


def current_metadata() -> Metadata | None:
    """The `Metadata` of the dispatch running in this context (also in a sync action's thread), or None.

    Code the action calls (a model's `save`, a signal receiver) can read the origin here
    without it being passed down. Each dispatch sets it for its own context only, so
    concurrent dispatches never see each other's.
    """
    return _current.get()


_buses: list[weakref.ref[Bus]] = []


def all_buses() -> list[Bus]:
    """Every `Bus` still alive, in creation order."""
    alive = [bus for ref in _buses if (bus := ref()) is not None]
    _buses[:] = [weakref.ref(bus) for bus in alive]
    return alive


BusFrozen = RegistryFrozen
"""An action or middleware was added to a bus after Django finished starting (the one frozen error)."""


class Bus:
    """A named set of actions and the middleware around them.

    Declare actions at import time of a module your app config names in `mcp_bus_modules`;
    `MCPDjangoConfig.ready()` imports those modules, then freezes every bus::

        bus = Bus("shop")

        @bus.action("cart.add", target=CartRef, payload=AddItem)
        def add_to_cart(target: CartRef, payload: AddItem, meta: Metadata) -> dict:
            ...

        result = await bus.dispatch("cart.add", {"cart": 1}, {"sku": "x", "qty": 2})

    Args:
        name: shown in logs, errors and checks.
    """

    def __init__(self, name: str = "default") -> None:
        self.name = name
        self._actions: dict[str, Action] = {}
        self._middleware: list[tuple[int, int, Middleware]] = []
        self._frozen = False
        _buses.append(weakref.ref(self))

    def __repr__(self) -> str:
        return f"<Bus {self.name!r}: {len(self._actions)} actions>"

    def __contains__(self, name: object) -> bool:
        return name in self._actions

    def __iter__(self) -> Iterator[Action]:
        return iter(self._actions.values())

    @property
    def frozen(self) -> bool:
        return self._frozen

    @property
    def actions(self) -> tuple[Action, ...]:
        """Every action, in registration order."""
        return tuple(self._actions.values())

    def get(self, name: str) -> Action | None:
        """The action called `name`, or None."""
        return self._actions.get(name)

    def freeze(self) -> None:
        """Refuse further actions and middleware (called at the end of `MCPDjangoConfig.ready()`)."""
        self._frozen = True

    def _check_open(self, what: str) -> None:
        if self._frozen:
            raise BusFrozen(f"The bus {self.name!r} is frozen: add {what} in a module named in mcp_bus_modules.")

    def action(
        self,
        name: str,
        *,
        target: type[pydantic.BaseModel] | None = None,
        payload: type[pydantic.BaseModel] | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated function (sync or async) as the action `name`.

        The function is called as `handler(target, payload, metadata)` with validated model
        instances, and returns the result's value (or an `Ok`/`Err` of its own).

        Args:
            name: the action's unique name, e.g. `"catalogue.book.rename"`.
            target: the model of what the action acts on; `Empty` when omitted.
            payload: the model of how; `Empty` when omitted.
            description: for humans and models; the function's docstring when omitted.
            title: a short display name.

        Raises:
            BusFrozen: Django has finished starting.
            ValueError: the name is empty or taken.
            TypeError: a model is not a pydantic `BaseModel` subclass.
        """
        self._check_open(f"the action {name!r}")
        if not isinstance(name, str) or not name:
            raise ValueError("An action needs a non-empty name")
        if name in self._actions:
            raise ValueError(f"The bus {self.name!r} already has an action {name!r}")
        import pydantic  # the models given are pydantic's: it is loaded

        for field, model in (("target", target), ("payload", payload)):
            if model is not None and not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
                raise TypeError(f"Action {name!r}: {field} must be a pydantic BaseModel subclass")

        def register(handler: F) -> F:
            self._check_open(f"the action {name!r}")
            self._actions[name] = Action(
                name=name,
                target=target or _empty.get(),
                payload=payload or _empty.get(),
                handler=handler,
                description=description if description is not None else inspect.cleandoc(handler.__doc__ or ""),
                title=title,
            )
            return handler

        return register

    @overload
    def use(self, middleware: M, *, priority: int = 0) -> M: ...

    @overload
    def use(self, middleware: None = None, *, priority: int = 0) -> Callable[[M], M]: ...

    def use(self, middleware: M | None = None, *, priority: int = 0) -> M | Callable[[M], M]:
        """Wrap every dispatch in `middleware`: higher `priority` runs first (outermost), ties in the order added.

        Works bare (`bus.use(mw)`, `@bus.use`) and as a decorator factory (`@bus.use(priority=10)`).
        Returns the middleware unchanged.

        Raises:
            BusFrozen: Django has finished starting.
        """
        if middleware is None:
            return functools.partial(self.use, priority=priority)
        self._check_open("middleware")
        self._middleware.append((priority, len(self._middleware), middleware))
        return middleware

    @property
    def middleware(self) -> tuple[Middleware, ...]:
        """The middleware, outermost first."""
        return tuple(entry[2] for entry in sorted(self._middleware, key=lambda entry: (-entry[0], entry[1])))

    async def dispatch(
        self,
        action: str,
        target: Any = None,
        payload: Any = None,
        *,
        metadata: Metadata | None = None,
    ) -> Ok[Any] | Err:
        """Run `action` through the middleware; return `Ok(value)` or `Err(code, message)`, never raise.

        Args:
            action: the action's name.
            target: a dict (or an instance of the action's target model); None is `{}`.
            payload: a dict (or an instance of the action's payload model); None is `{}`.
            metadata: the dispatch's metadata; a fresh `Metadata()` (no origin) when omitted.
        """
        metadata = metadata if metadata is not None else Metadata()
        spec = self._actions.get(action)
        if spec is None:
            return _unknown(action)
        validated = _validate(spec, target, payload)
        if isinstance(validated, Err):
            return validated
        command = Command(action, validated[0], validated[1], metadata)
        token = _current.set(metadata)
        try:
            return await self._chain(0, self.middleware, command)
        finally:
            _current.reset(token)

    def dispatch_sync(
        self,
        action: str,
        target: Any = None,
        payload: Any = None,
        *,
        metadata: Metadata | None = None,
    ) -> Ok[Any] | Err:
        """`dispatch` for sync code such as a Django view; sync actions run in the calling thread."""
        result: Ok[Any] | Err = async_to_sync(self.dispatch)(action, target, payload, metadata=metadata)
        return result

    async def _chain(self, index: int, middleware: tuple[Middleware, ...], command: Command) -> Ok[Any] | Err:
        if index == len(middleware):
            return await self._run(command)

        async def call_next(next_command: Command) -> Ok[Any] | Err:
            return await self._chain(index + 1, middleware, next_command)

        try:
            outcome = middleware[index](command, call_next)
            result = await outcome if inspect.isawaitable(outcome) else outcome
        except ActionError as error:
            return Err(error.code, error.message)
        except Exception:
            logger.exception("Bus %r: middleware %r failed on %s", self.name, middleware[index], command.action)
            return _failed(command.action)
        if not isinstance(result, (Ok, Err)):
            logger.error("Bus %r: middleware %r returned %r, not a result", self.name, middleware[index], result)
            return _failed(command.action)
        return result

    async def _run(self, command: Command) -> Ok[Any] | Err:
        """The innermost step: look the (possibly re-routed) action up, validate what middleware passed, run it."""
        spec = self._actions.get(command.action)
        if spec is None:
            return _unknown(command.action)
        validated = _validate(spec, command.target, command.payload)
        if isinstance(validated, Err):
            return validated
        handler = spec.handler
        runner = handler if iscoroutinefunction(handler) else functools.partial(run_sync, handler)
        try:
            value = await runner(validated[0], validated[1], command.metadata)
        except ActionError as error:
            return Err(error.code, error.message)
        except Exception:
            logger.exception("Bus %r: action %s failed", self.name, command.action)
            return _failed(command.action)
        return value if isinstance(value, (Ok, Err)) else Ok(value)


def _unknown(action: str) -> Err:
    return Err(UNKNOWN_ACTION, f"Unknown action: {action}")


def _failed(action: str) -> Err:
    return Err(HANDLER_FAILED, f"Action {action} failed.")


def _validate(spec: Action, target: Any, payload: Any) -> tuple[pydantic.BaseModel, pydantic.BaseModel] | Err:
    """Both models' instances, or an `Err` naming the first bad field (`target.id`, `payload.title`)."""
    import pydantic  # loaded by now: the action's models are pydantic's

    validated: list[pydantic.BaseModel] = []
    for field, model, value, code in (
        ("target", spec.target, target, INVALID_TARGET),
        ("payload", spec.payload, payload, INVALID_PAYLOAD),
    ):
        if isinstance(value, model):
            validated.append(value)
            continue
        if isinstance(value, pydantic.BaseModel):
            value = value.model_dump()
        try:
            validated.append(model.model_validate({} if value is None else value))
        except pydantic.ValidationError as error:
            return _invalid(field, code, error)
    return validated[0], validated[1]


def _invalid(field: str, code: str, error: pydantic.ValidationError) -> Err:
    """An `Err` listing each problem as `path: message`, without echoing the rejected input."""
    problems = [(problem.location, problem.message) for problem in validation_problems(error, prefix=field)]
    return Err(code, "; ".join(f"{path}: {message}" for path, message in problems), problems[0][0])


default_bus = Bus("default")
"""The bus to use when a project needs only one; `BusProvider` serves it unless told otherwise."""


def load_bus_modules(app_configs: Iterable[Any]) -> None:
    """Import every module each app config names in `mcp_bus_modules` (where its actions are declared).

    Raises:
        ImportError: a named module does not import (Django reports it when it starts).
    """
    for app_config in app_configs:
        for module in getattr(app_config, "mcp_bus_modules", None) or ():
            importlib.import_module(module)
