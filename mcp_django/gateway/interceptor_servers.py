"""Remote interceptor servers: MCP servers hosting SEP-2624 interceptors, and what `interceptors/list` found on each.

Servers are named in `MCP_DJANGO["SERVERS"]` (and in the admin, `RemoteServer` rows amending or
adding to them); each is a remote MCP server configuration (`URL` or `COMMAND`, `HEADERS`, `TOKEN`...,
`mcp_django.client.connection`) where `FAIL_OPEN` and `TIMEOUT` (seconds) say how a chain treats it.
`discoveries` lists the interceptors of several servers in parallel, once per server until the admin's
state changes (then every chain asks again); a server that could not be listed is asked again after
`RETRY_AFTER_S` seconds. docs/gateway.md, "Remote interceptor servers".
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.client.conf import client_settings
from mcp_django.client.config import POLICY_KEYS, ServerConfig
from mcp_django.client.servers import config_problems as connection_problems
from mcp_django.client.servers import server_config
from mcp_django.conf import mcp_settings
from mcp_django.endpoints.overlay import installed, on_change
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.gateway.upstream import connection_for

logger = logging.getLogger("mcp_django.gateway")

DEFAULT_TIMEOUT: Final = 5.0
RETRY_AFTER_S: Final = 2.0
_MAX_PAGES: Final = 20


@dataclasses.dataclass(frozen=True, slots=True)
class InterceptorServerConfig:
    """One remote interceptor server: where it is, whether its failures let calls through, and the time it gets.

    `remote` is None when the server cannot be used as configured (`problem` says why): it then fails
    like a server that cannot be listed.
    """

    name: str
    remote: ServerConfig | None
    fail_open: bool = False
    timeout_ms: int = round(DEFAULT_TIMEOUT * 1000)
    problem: str = ""


def server_problems(config: Any) -> list[str]:
    """What is wrong with one `SERVERS` entry, in words a system check can show (empty if fine)."""
    if not isinstance(config, Mapping):
        return ["must be a dict with URL or COMMAND"]
    problems = connection_problems({key: value for key, value in config.items() if key not in POLICY_KEYS})
    if "FAIL_OPEN" in config and not isinstance(config["FAIL_OPEN"], bool):
        problems.append("FAIL_OPEN must be True or False")
    timeout = config.get("TIMEOUT", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        problems.append("TIMEOUT must be a positive number of seconds")
    return problems


def interceptor_server(name: str, config: Any) -> InterceptorServerConfig:
    """The server a `SERVERS` entry (or an inline `{"SERVER": {...}}`) describes; never raises."""
    problems = server_problems(config)
    if problems:
        return InterceptorServerConfig(name, None, problem="; ".join(problems))
    connection = {key: value for key, value in config.items() if key not in POLICY_KEYS}
    return InterceptorServerConfig(
        name,
        server_config(connection, name=name),
        fail_open=bool(config.get("FAIL_OPEN", False)),
        timeout_ms=round(config.get("TIMEOUT", DEFAULT_TIMEOUT) * 1000),
    )


def configured_servers() -> dict[str, InterceptorServerConfig]:
    """Every server by name: `SERVERS` as the admin's interceptor server rows amended it (switched off, added)."""
    config = installed().interceptor_servers(client_settings.SERVERS)
    if not isinstance(config, Mapping):
        return {}
    return {str(name): interceptor_server(str(name), entry) for name, entry in config.items()}


def admin_servers() -> list[str]:
    """The names `{"SERVER": "*"}` stands for: the servers the admin added or amended, sorted.

    A `SERVERS` entry may be a gateway's backend rather than an interceptor server, so `*` does not
    take them all: the admin's "MCP interceptor servers" rows say which are.
    """
    configured = client_settings.SERVERS if isinstance(client_settings.SERVERS, Mapping) else {}
    amended = installed().interceptor_servers(configured)
    if not isinstance(amended, Mapping):
        return []
    return sorted(str(name) for name, entry in amended.items() if configured.get(name) != entry)


@dataclasses.dataclass(frozen=True, slots=True)
class Discovery:
    """What `interceptors/list` gave for one server: its descriptors, or why it could not be listed."""

    server: InterceptorServerConfig
    descriptors: tuple[Mapping[str, Any], ...] = ()
    error: str | None = None
    reason: str = ""
    at: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error is not None


async def _list(server: InterceptorServerConfig, user: Any = None) -> Discovery:
    """List the interceptors of `server` (following `nextCursor`), bounded by its timeout.

    A server with `"AUTH": "oauth"` is listed with `user`'s own token (`upstream.connection_for`).
    """
    if server.remote is None:
        return Discovery(server, error=f"misconfigured: {server.problem}", reason="misconfigured", at=time.monotonic())
    limit = server.timeout_ms / 1000
    descriptors: list[Mapping[str, Any]] = []
    try:
        async with asyncio.timeout(limit):
            connection = await connection_for(server.remote, user)
            params: dict[str, Any] = {}
            for _ in range(_MAX_PAGES):
                result = await connection.request("interceptors/list", params, timeout=limit)
                found = result.get("interceptors")
                if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
                    raise ValueError("its interceptors/list result has no list of interceptors")
                descriptors += found
                cursor = result.get("nextCursor")
                if not isinstance(cursor, str) or not cursor:
                    break
                params = {"cursor": cursor}
    except TimeoutError:
        error, reason = f"no answer within {server.timeout_ms} ms", "timeout"
    except BackendUnavailable as exc:
        error, reason = str(exc), exc.reason
    except RemoteError as exc:
        error, reason = f"interceptors/list failed ({exc.code}): {exc.message}", "error"
    except Exception as exc:  # a broken answer, a refused socket: the server cannot be listed
        error, reason = f"{type(exc).__name__}: {exc}", "error"
    else:
        return Discovery(server, tuple(descriptors), at=time.monotonic())
    level = logging.INFO if server.fail_open else logging.WARNING
    logger.log(level, "Interceptor server %r could not be listed: %s", server.name, error)
    return Discovery(server, error=error, reason=reason, at=time.monotonic())


class _Discoveries:
    """What was found on each server, shared by every chain of the process; forgotten when the state changes."""

    def __init__(self) -> None:
        self.found: dict[InterceptorServerConfig, Discovery] = {}
        self.pending: dict[tuple[asyncio.AbstractEventLoop, InterceptorServerConfig], asyncio.Future[Discovery]] = {}

    def current(self, server: InterceptorServerConfig) -> Discovery | None:
        """The discovery to use now, or None when the server must be (re)listed."""
        found = self.found.get(server)
        if found is not None and found.failed and time.monotonic() - found.at >= RETRY_AFTER_S:
            return None
        return found

    async def get(self, servers: Sequence[InterceptorServerConfig], user: Any = None) -> tuple[Discovery, ...]:
        """The discovery of each of `servers`, listing in parallel those not known (concurrent callers share one)."""
        found = [self.current(server) for server in servers]
        if all(discovery is not None for discovery in found):
            return tuple(found)  # type: ignore[arg-type]  # none is None
        loop = asyncio.get_running_loop()
        waits = []
        for server, discovery in zip(servers, found, strict=True):
            if discovery is None:
                key = (loop, server)
                future = self.pending.get(key)
                if future is None:
                    future = self.pending[key] = loop.create_task(self._list(key, user))
                waits.append(future)
        await asyncio.gather(*(asyncio.shield(wait) for wait in waits))  # one caller cancelled: not the others'
        return tuple(self.found[server] for server in servers)

    async def _list(self, key: tuple[asyncio.AbstractEventLoop, InterceptorServerConfig], user: Any) -> Discovery:
        try:
            discovery = self.found[key[1]] = await _list(key[1], user)
            return discovery
        finally:
            self.pending.pop(key, None)

    def forget(self) -> None:
        self.found.clear()


_discoveries = _Discoveries()


async def discoveries(servers: Sequence[InterceptorServerConfig], user: Any = None) -> tuple[Discovery, ...]:
    """What `interceptors/list` gives for each of `servers` (listed in parallel, then remembered).

    `user`: the caller whose own token lists a server with `"AUTH": "oauth"` (a listing is shared by all).
    """
    return await _discoveries.get(servers, user)


def forget_discoveries() -> None:
    """List every server again on next use (the admin's state or the settings changed)."""
    _discoveries.forget()


on_change("state", forget_discoveries)
mcp_settings.on_reload(forget_discoveries)
