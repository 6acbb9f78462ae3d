"""The admin's state, as every worker process sees it: which providers, remote servers and interceptors are on, and how.

Defaults live in code (`mcp_providers`, `MCP_DJANGO["INTERCEPTORS"]`, `MCP_DJANGO["SERVERS"]`); the admin
stores its changes in `ProviderState`, `InterceptorState` and `ToolState` rows and, with the gateway app
installed, `RemoteServer` rows. A process never reads those rows on the request path: it keeps a
snapshot, and at most every `STATE_CHECK_INTERVAL` seconds (a monotonic clock, so a busy worker still
does no query per request) it reads one `StateVersion` stamp. Every
save or delete of a state row, a `GroupScope` or a session writes a fresh random stamp (and
`mcp_django.endpoints.auth_cache` writes `"auth"` when a credential or a scope may have changed); when a
stamp a process sees moves, it reloads the snapshot and tells the listeners of that stamp
(`mcp_django.endpoints.overlay.on_change`: the endpoints rebuild their handlers, the session store forgets its
cache). So a change reaches every worker within `MCP_DJANGO["STATE_CHECK_INTERVAL"]` (0.5 s) plus one
request. `docs/admin.md` tells the whole story.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from django.apps import apps
from django.utils.module_loading import import_string

from mcp_django.conf import mcp_settings
from mcp_django.endpoints.overlay import changed
from mcp_django.models import InterceptorState, ProviderState, ScopedState, StateVersion, ToolState
from mcp_django.runtime.executor import run_sync
from mcp_django.scopes import Scope

logger = logging.getLogger("mcp_django.state")

STATE: Final = "state"
SESSIONS: Final = "sessions"


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderOverride:
    """What the admin says about one provider or remote server: on or off, and a minimum scope (None: the code's)."""

    enabled: bool = True
    min_scope: Scope | None = None

    @classmethod
    def of(cls, row: ScopedState) -> ProviderOverride:
        """The override a `ProviderState` row makes, or a `RemoteServer` row for the server as a source."""
        return cls(row.enabled, None if row.min_scope is None else Scope(row.min_scope))

    def scope(self, coded: Scope) -> Scope:
        """The minimum scope that applies: the one set in the admin, else `coded`."""
        return coded if self.min_scope is None else self.min_scope


AS_CODED: Final = ProviderOverride()
"""What applies to a provider or remote server the admin has no row for."""


@dataclasses.dataclass(frozen=True, slots=True)
class InterceptorOverride:
    """What the admin says about one interceptor; None (or `""` for the mode) keeps the configured value."""

    enabled: bool = True
    mode: str = ""
    fail_open: bool | None = None
    priority: int | None = None
    options: Any = None


@dataclasses.dataclass(frozen=True, slots=True)
class InterceptorServerOverride:
    """What the admin says about one interceptor server (a `RemoteServer` row); blank fields keep the settings'."""

    enabled: bool = True
    url: str = ""
    headers: Mapping[str, str] | None = None
    fail_open: bool | None = None
    timeout: float | None = None
    """Seconds, like the entry's `TIMEOUT`."""


@dataclasses.dataclass(frozen=True, slots=True)
class Snapshot:
    """Every state row of the database at one moment: by provider id, by interceptor name, the tools switched off."""

    providers: Mapping[str, ProviderOverride] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    interceptors: Mapping[str, InterceptorOverride] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    disabled_tools: frozenset[str] = frozenset()
    interceptor_servers: Mapping[str, InterceptorServerOverride] = dataclasses.field(
        default_factory=lambda: MappingProxyType({})
    )
    remote_servers: Mapping[str, ProviderOverride] = dataclasses.field(default_factory=lambda: MappingProxyType({}))


class ControlState:
    """This process's copy of the admin's state, re-read when the shared stamp moves (see the module docstring)."""

    def __init__(self, interval: float | None = None) -> None:
        self._interval = interval
        self.snapshot = Snapshot()
        self.stamps: dict[str, int] | None = None
        self._checked = -math.inf

    @property
    def interval(self) -> float:
        """Seconds between two reads of the stamp: `MCP_DJANGO["STATE_CHECK_INTERVAL"]` unless given."""
        if self._interval is None:
            self._interval = float(mcp_settings.STATE_CHECK_INTERVAL)
        return self._interval

    def forget_interval(self) -> None:
        self._interval = None

    def due(self) -> bool:
        return time.monotonic() - self._checked >= self.interval

    def invalidate(self) -> None:
        """Read the stamp on the next `refresh`, whatever the interval (this process just changed something)."""
        self._checked = -math.inf

    async def refresh(self) -> None:
        """Re-read the stamp if the interval has passed; reload and notify listeners when it moved."""
        if time.monotonic() - self._checked < self.interval:  # the steady state: no query, no await
            return
        self._checked = time.monotonic()  # before awaiting: concurrent requests do not read it again
        try:
            stamps, snapshot = await run_sync(self._read, self.stamps)
        except Exception as exc:  # no table yet, no database in this test: keep the code's defaults
            logger.debug("Could not read the MCP state stamp: %s", exc)
            return
        self._apply(stamps, snapshot)

    def refresh_sync(self) -> None:
        """`refresh` for sync code (management commands, the admin)."""
        if not self.due():
            return
        self._checked = time.monotonic()
        try:
            stamps, snapshot = self._read(self.stamps)
        except Exception as exc:
            logger.debug("Could not read the MCP state stamp: %s", exc)
            return
        self._apply(stamps, snapshot)

    @staticmethod
    def _read(known: dict[str, int] | None) -> tuple[dict[str, int], Snapshot | None]:
        stamps = dict(StateVersion.objects.values_list("key", "version"))
        if known is not None and stamps.get(STATE) == known.get(STATE):
            return stamps, None
        providers = {row.provider_id: ProviderOverride.of(row) for row in ProviderState.objects.all()}
        interceptors = {
            row.name: InterceptorOverride(row.enabled, row.mode, row.fail_open, row.priority, row.options)
            for row in InterceptorState.objects.all()
        }
        disabled_tools = frozenset(ToolState.objects.filter(enabled=False).values_list("name", flat=True))
        rows = remote_server_rows()
        servers = {
            row.name: InterceptorServerOverride(
                row.interceptors_enabled,
                row.url,
                MappingProxyType(dict(row.headers)) if isinstance(row.headers, dict) else None,
                row.fail_open,
                row.timeout,
            )
            for row in rows
        }
        remotes = {row.name: ProviderOverride.of(row) for row in rows}
        return stamps, Snapshot(
            MappingProxyType(providers),
            MappingProxyType(interceptors),
            disabled_tools,
            MappingProxyType(servers),
            MappingProxyType(remotes),
        )

    def _apply(self, stamps: dict[str, int], snapshot: Snapshot | None) -> None:
        known, self.stamps = self.stamps, stamps
        if snapshot is not None and snapshot != self.snapshot:
            self.snapshot = snapshot
            changed(STATE)
        if known is not None:
            for key in sorted((stamps.keys() | known.keys()) - {STATE}):  # "sessions", and any other owner's key
                if stamps.get(key) != known.get(key):
                    changed(key)

    # -- what the serving code asks -----------------------------------------------------------------

    def provider_enabled(self, provider_id: str) -> bool:
        return self.snapshot.providers.get(provider_id, AS_CODED).enabled

    def provider_scope(self, provider_id: str, default: Scope) -> Scope:
        return self.snapshot.providers.get(provider_id, AS_CODED).scope(default)

    def remote_enabled(self, name: str) -> bool:
        return self.snapshot.remote_servers.get(name, AS_CODED).enabled

    def remote_scope(self, name: str, default: Scope) -> Scope:
        return self.snapshot.remote_servers.get(name, AS_CODED).scope(default)

    def overlay_interceptors(self, config: Any) -> Any:
        """An interceptor list with the admin's overrides applied: disabled entries dropped, the rest amended."""
        overrides = self.snapshot.interceptors
        if not overrides or not isinstance(config, Sequence) or isinstance(config, str):
            return config
        result: list[Any] = []
        for raw in config:
            name = entry_name(raw)
            override = overrides.get(name) if name is not None else None
            if override is None:
                result.append(raw)
                continue
            if not override.enabled:
                continue
            entry = dict(raw) if isinstance(raw, Mapping) else {"CLASS": raw}
            entry["NAME"] = name
            if override.mode:
                entry["MODE"] = override.mode
            if override.fail_open is not None:
                entry["FAIL_OPEN"] = override.fail_open
            if override.priority is not None:
                entry["PRIORITY"] = override.priority
            if override.options is not None:
                entry["OPTIONS"] = override.options
            result.append(entry)
        return result

    def overlay_interceptor_servers(self, config: Any) -> Any:
        """`SERVERS` with the admin's interceptor server rows applied: switched off (dropped), amended or added."""
        overrides = self.snapshot.interceptor_servers
        if not overrides or not isinstance(config, Mapping):
            return config
        result = dict(config)
        for name, override in overrides.items():
            if not override.enabled:
                result.pop(name, None)
                continue
            entry = dict(result.get(name) or {})
            if override.url:  # served over HTTP from now on: the keys of its former kind go
                from mcp_django.client.config import COMMON_KEYS, POLICY_KEYS

                entry = {key: value for key, value in entry.items() if key in COMMON_KEYS | POLICY_KEYS}
                entry["URL"] = override.url
            if override.headers is not None:
                entry["HEADERS"] = dict(override.headers)
            if override.fail_open is not None:
                entry["FAIL_OPEN"] = override.fail_open
            if override.timeout is not None:
                entry["TIMEOUT"] = override.timeout
            if name in result or override.url:
                result[name] = entry  # a row with a new name and no URL adds nothing
        return result


def remote_server_model() -> type[ScopedState] | None:
    """The gateway app's `RemoteServer` model, or None when `"mcp_django.gateway"` is not installed."""
    if not apps.is_installed("mcp_django.gateway"):
        return None
    from mcp_django.gateway.models import RemoteServer

    return RemoteServer


def remote_server_rows() -> list[Any]:
    """Every `RemoteServer` row (none without the gateway app)."""
    model = remote_server_model()
    return [] if model is None else list(model._default_manager.all())


def entry_name(raw: Any) -> str | None:
    """The name an interceptor list entry runs under (its `NAME`, else its class's), or None if unresolvable."""
    entry = {"CLASS": raw} if isinstance(raw, str) else raw
    if not isinstance(entry, Mapping):
        return None
    if isinstance(entry.get("NAME"), str) and entry["NAME"]:
        return str(entry["NAME"])
    cls = entry.get("CLASS")
    if isinstance(cls, str):
        try:
            cls = import_string(cls)
        except ImportError:
            return None
    if not isinstance(cls, type):
        return None
    return str(getattr(cls, "name", "") or cls.__name__)


control_state = ControlState()
"""The process's state; `await control_state.refresh()` is cheap enough for every request."""


def bump(key: str = STATE) -> None:
    """Write a fresh stamp, so every worker reloads within `STATE_CHECK_INTERVAL` (this one at its next request)."""
    StateVersion.objects.update_or_create(key=key, defaults={"version": secrets.randbits(62)})
    control_state.invalidate()
