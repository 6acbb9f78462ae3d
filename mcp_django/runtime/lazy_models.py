"""pydantic models of mcp_django's own, made on first use (issue 34).

pydantic's first model in a process pays its one-time set-up (some 70 ms: its schema machinery and the
plugin look-up), which a management command that never serves MCP should not pay. A `LazyModel` wraps
the function that defines the class; it is made when first asked for, as a class attribute (it is a
descriptor: `Options = LazyModel(...)`), through `get()`, or as the module's attribute of its name
(`__getattr__ = lazy_attributes(...)`), and then stands in its module under that name.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import pydantic

M = TypeVar("M", bound="type[pydantic.BaseModel]")


class LazyModel(Generic[M]):
    """The model `build` defines, made once, when first asked for."""

    def __init__(self, build: Callable[[], M]) -> None:
        self._build = build
        self._model: M | None = None
        self._lock = threading.Lock()  # one class, even when two threads ask first

    def get(self) -> M:
        """The model (made now if it was not yet)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    model = self._build()
                    model.__qualname__ = model.__name__  # as if defined at its module's top level, where it now stands
                    setattr(sys.modules[model.__module__], model.__name__, model)
                    self._model = model
        return self._model

    def __get__(self, instance: object, owner: type | None = None) -> M:
        return self.get()


def lazy_attributes(module: str, **models: LazyModel[Any]) -> Callable[[str], Any]:
    """A module's `__getattr__` answering each of `models` by its name (made then), anything else as absent."""

    def __getattr__(name: str) -> Any:
        if name in models:
            return models[name].get()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
