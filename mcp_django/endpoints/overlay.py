"""The one way the admin (or any other control plane) amends what the core serves: an installed `Overlay`.

The core never imports the admin. It asks the installed overlay four things, and lets anyone
subscribe to the stamps the overlay watches:

- `refresh()`, awaited at admission (and before every operation of a long-lived connection):
  bring the overlay's view of its state up to date, cheaply (throttled: no query in the steady state);
- `wrap_sources(endpoint, sources)`: the sources an endpoint serves, as the overlay amends them
  (providers switched off, minimum scopes overridden);
- `interceptors(config)`: an interceptor list with the overlay's overrides applied;
- `interceptor_servers(config)`: the remote interceptor servers (`SERVERS`), amended likewise;
- `hooks(endpoint)`: operation hooks to run outside the endpoint's interceptor chain (tools switched off).

`on_change(key, listener)` calls `listener()` whenever the stamp `key` moves (`"state"`: what the
overlay applies changed, the endpoints rebuild; `"sessions"`: a session was ended elsewhere; other
keys as their owners define them). Listeners live here, not on the overlay, so a module can
subscribe at import time, before `MCPDjangoConfig.ready()` installs the admin's overlay
(`mcp_django.control`). Until then, and in a process that installs none, `NullOverlay` changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mcp_django.endpoints.mounts import Mounted
from mcp_django.protocol.hooks import OperationHook
from mcp_django.sources import Source

Listener = Callable[[], None]


class Overlay(Protocol):
    """Amends what endpoints serve, from state kept outside the code (the admin's rows); see the module docstring."""

    async def refresh(self) -> None:
        """Bring the overlay's state up to date; cheap enough to await on every request."""
        ...

    def wrap_sources(self, endpoint: Mounted, sources: Sequence[Source]) -> list[Source]:
        """The sources `endpoint` serves, in order of precedence, as the overlay amends them."""
        ...

    def interceptors(self, config: Any) -> Any:
        """The interceptor list `config` (the settings' format) with the overlay's overrides applied."""
        ...

    def interceptor_servers(self, config: Any) -> Any:
        """The `SERVERS` dict `config` with the overlay's servers switched off, amended or added."""
        ...

    def hooks(self, endpoint: Mounted) -> list[OperationHook]:
        """Operation hooks run around `endpoint`'s operations, outside its interceptor chain, outermost first."""
        ...


class NullOverlay:
    """The overlay of a process with no control plane: serves everything exactly as the code says."""

    __slots__ = ()

    async def refresh(self) -> None:
        return None

    def wrap_sources(self, endpoint: Mounted, sources: Sequence[Source]) -> list[Source]:
        return list(sources)

    def interceptors(self, config: Any) -> Any:
        return config

    def interceptor_servers(self, config: Any) -> Any:
        return config

    def hooks(self, endpoint: Mounted) -> list[OperationHook]:
        return []


_installed: Overlay = NullOverlay()
_listeners: dict[str, list[Listener]] = {}


def install(overlay: Overlay) -> None:
    """Make `overlay` the one every endpoint asks from its next built handler on (`MCPDjangoConfig.ready()`)."""
    global _installed
    _installed = overlay


def installed() -> Overlay:
    """The overlay endpoints ask: the admin's once `mcp_django` is ready, else a `NullOverlay`."""
    return _installed


def on_change(key: str, listener: Listener) -> None:
    """Call `listener()` whenever the stamp `key` moves (`"state"`, `"sessions"`, ...)."""
    _listeners.setdefault(key, []).append(listener)


def changed(key: str) -> None:
    """Tell the listeners of `key` that it moved (called by the overlay that watches the stamps)."""
    for listener in _listeners.get(key, ()):
        listener()
