"""Remote interceptors in the chain: each interceptor a server lists becomes a plan entry invoking it there.

An interceptor list may name remote interceptor servers beside local classes, like `MIDDLEWARE`::

    MCP_DJANGO = {
        "SERVERS": {"guard": {"URL": "https://guard.example/mcp", "TOKEN": "..."}},
        "INTERCEPTORS": ["mcp_django.interceptors.audit.AuditSinkInterceptor", {"SERVER": "guard"}],
    }

`{"SERVER": name}` names a server of `SERVERS` or of the admin's `RemoteServer` rows, `{"SERVER":
"*"}` every server the admin's rows add or amend, `{"SERVER": {...}}` an inline one. Before the first operation
(and after each change of the admin's state) the servers are listed in parallel; their interceptors and
the local ones form one plan (`interceptors.chain.build_plan`), ordered by priority then name whatever
their origin, each invoked where it lives with `interceptor/invoke`. Duplicate names across servers are kept.
The installed `GatewayExtension` (`gateway.extension`) runs these entries for every list that names servers.

Failures: a server that cannot be listed refuses every operation of the chain with a clear error
(`-32603`, `data.server`, `data.reason`), unless it is `FAIL_OPEN`, which drops its interceptors
until it answers; a remote invocation that fails or takes longer than `TIMEOUT` counts as that
interceptor failing (fail-closed unless `FAIL_OPEN` or the descriptor's `failOpen`). Remote sinks
are sent and not awaited: they never hold up the call. docs/remote-interceptors.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.client.servers import location
from mcp_django.conf import mcp_settings
from mcp_django.gateway.interceptor_servers import (
    Discovery,
    InterceptorServerConfig,
    admin_servers,
    configured_servers,
    discoveries,
    interceptor_server,
)
from mcp_django.gateway.upstream import connection_for
from mcp_django.interceptors.base import (
    PHASES,
    InterceptorContext,
    Invocation,
    MutationInterceptor,
    MutationResult,
    NoOptions,
    SinkInterceptor,
    ValidationInterceptor,
    ValidationMessage,
    ValidationResult,
    in_background,
)
from mcp_django.interceptors.chain import InterceptorPlan, build_plan
from mcp_django.interceptors.config import MODES, PlanEntry, is_server_entry
from mcp_django.interceptors.hook import InterceptorHook
from mcp_django.protocol import CallNext, InternalError, RequestContext

logger = logging.getLogger("mcp_django.gateway")

_NO_OPTIONS: Final = NoOptions()


class RemoteInvocationError(Exception):
    """A remote interceptor answered with something other than a well-formed result of its own kind."""


class _Remote:
    """What the three remote kinds share: the server, the descriptor's name, and `interceptor/invoke`."""

    def __init__(self, server: InterceptorServerConfig, remote_name: str) -> None:
        self.server = server
        self.remote_name = remote_name

    async def invoke(self, invocation: Invocation, kind: str) -> dict[str, Any]:
        """Invoke the interceptor on its server; the result, checked to echo the name, the kind and the phase."""
        assert self.server.remote is not None
        params = {
            "name": self.remote_name,
            "event": invocation.event,
            "phase": invocation.phase,
            "payload": invocation.payload,
            "timeoutMs": self.server.timeout_ms,
            "context": invocation.context.to_wire(),
        }
        connection = await connection_for(self.server.remote, invocation.context.user)  # AUTH: the caller's token
        result = await connection.request("interceptor/invoke", params, timeout=self.server.timeout_ms / 1000)
        expected = (kind, self.remote_name, invocation.phase)
        echoed = (result.get("type"), result.get("interceptor", expected[1]), result.get("phase", expected[2]))
        if echoed != expected:
            raise RemoteInvocationError(f"{self.server.name} answered {echoed!r} for a {kind} of {self.remote_name!r}")
        return result


class RemoteValidation(_Remote, ValidationInterceptor):
    """A validation interceptor hosted on a remote interceptor server."""

    async def validate(self, invocation: Invocation) -> ValidationResult:
        result = await self.invoke(invocation, "validation")
        valid = result.get("valid")
        if not isinstance(valid, bool):
            raise RemoteInvocationError(f"{self.remote_name!r} answered a validation without 'valid'")
        messages = [
            ValidationMessage(str(m.get("message", "")), m.get("severity", "error"), m.get("path"))
            for m in result.get("messages") or ()
            if isinstance(m, dict)
        ]
        severity = result.get("severity")
        info = result.get("info")
        return ValidationResult(
            valid=valid,
            severity=severity if isinstance(severity, str) else None,
            messages=messages,
            info=info if isinstance(info, dict) else None,
        )


class RemoteMutation(_Remote, MutationInterceptor):
    """A mutation interceptor hosted on a remote interceptor server."""

    async def mutate(self, invocation: Invocation) -> MutationResult:
        result = await self.invoke(invocation, "mutation")
        modified = result.get("modified")
        payload = result.get("payload", None if modified else invocation.payload)
        if not isinstance(modified, bool) or not isinstance(payload, dict):
            raise RemoteInvocationError(f"{self.remote_name!r} answered a mutation without 'modified' and a payload")
        info = result.get("info")
        return MutationResult(modified=modified, payload=payload, info=info if isinstance(info, dict) else None)


class RemoteSink(_Remote, SinkInterceptor):
    """A sink hosted on a remote interceptor server: sent, never awaited, so it never holds up the call."""

    async def record(self, invocation: Invocation) -> None:
        if not in_background(self._send(invocation)):
            logger.warning("Remote sink %r of %r dropped: too many still in flight", self.remote_name, self.server.name)

    async def _send(self, invocation: Invocation) -> None:
        try:
            async with asyncio.timeout(self.server.timeout_ms / 1000):
                await self.invoke(invocation, "sink")
        except Exception as exc:
            logger.warning("Remote sink %r of %r failed: %s", self.remote_name, self.server.name, exc)


class UnlistedServer(ValidationInterceptor):
    """Stands for a fail-closed server that could not be listed: refuses every operation, with the reason."""

    def __init__(self, discovery: Discovery) -> None:
        self.discovery = discovery

    def error(self) -> InternalError:
        server = self.discovery.server.name
        return InternalError(
            f"Interceptor server {server!r} could not be listed: {self.discovery.error}",
            data={"server": server, "reason": self.discovery.reason},
        )

    def admits(self, event: str) -> None:
        raise self.error()

    async def validate(self, invocation: Invocation) -> ValidationResult:
        return ValidationResult(valid=False, messages=[ValidationMessage(self.error().message)])


_KINDS: Final[Mapping[str, type[_Remote]]] = {
    "validation": RemoteValidation,
    "mutation": RemoteMutation,
    "sink": RemoteSink,
}


def _priority(hint: Any) -> dict[str, int] | None:
    """The per-phase priorities of a `priorityHint` (unset: 0), or None when it is malformed."""
    if hint is None:
        return dict.fromkeys(PHASES, 0)
    if isinstance(hint, int) and not isinstance(hint, bool):
        return dict.fromkeys(PHASES, hint)
    if (
        isinstance(hint, dict)
        and set(hint) <= set(PHASES)
        and all(isinstance(value, int) and not isinstance(value, bool) for value in hint.values())
    ):
        return {phase: hint.get(phase, 0) for phase in PHASES}
    return None


def _hooks(descriptor: Mapping[str, Any]) -> dict[frozenset[str], set[str]] | None:
    """The descriptor's hooks as {events: phases} (one plan entry each), or None when they are malformed."""
    hooks = descriptor.get("hooks")
    if not isinstance(hooks, list):
        return None
    grouped: dict[frozenset[str], set[str]] = {}
    for hook in hooks:
        events, phase = (hook.get("events"), hook.get("phase")) if isinstance(hook, dict) else (None, None)
        if phase not in PHASES or not isinstance(events, list) or not all(isinstance(e, str) for e in events):
            return None
        if events:
            grouped.setdefault(frozenset(events), set()).add(phase)
    return grouped


def remote_entries(discovery: Discovery, first_index: int) -> list[PlanEntry]:
    """The plan entries of one server: one per listed interceptor (and hook group), or its refusal when unlisted.

    Descriptors of an unknown `type` or `mode`, or with malformed hooks or priorities, are skipped (SEP-2624).
    """
    server = discovery.server
    if discovery.failed:
        if server.fail_open:
            return []
        refusal = UnlistedServer(discovery)
        return [_entry(f"{server.name} (unlisted)", refusal, "validation", frozenset({"*"}), PHASES, first_index)]
    entries: list[PlanEntry] = []
    for descriptor in discovery.descriptors:
        read = _read(descriptor)
        if read is None:
            logger.warning("Interceptor server %r lists one it cannot invoke: %.200r", server.name, descriptor)
            continue
        name, kind, priority, hooks = read
        for events, phases in hooks.items():
            entries.append(
                _entry(
                    name,
                    _KINDS[kind](server, name),
                    kind,
                    events,
                    phases,
                    first_index + len(entries),
                    priority=priority,
                    hint=descriptor.get("priorityHint"),
                    mode=descriptor.get("mode", "active"),
                    fail_open=server.fail_open or descriptor.get("failOpen") is True,
                    timeout_ms=None if kind == "sink" else server.timeout_ms,  # a sink's call is bounded on its own
                )
            )
    return entries


def _read(descriptor: Mapping[str, Any]) -> tuple[str, str, dict[str, int], dict[frozenset[str], set[str]]] | None:
    """(name, type, priorities, hooks) of a listed interceptor, or None when it cannot be invoked as listed."""
    name, kind = descriptor.get("name"), descriptor.get("type")
    priority, hooks = _priority(descriptor.get("priorityHint")), _hooks(descriptor)
    if not isinstance(name, str) or not name or kind not in _KINDS or descriptor.get("mode", "active") not in MODES:
        return None
    if priority is None or hooks is None:
        return None
    return name, str(kind), priority, hooks


def _entry(
    name: str,
    interceptor: Any,
    kind: str,
    events: frozenset[str],
    phases: Any,
    index: int,
    *,
    priority: Mapping[str, int] | None = None,
    hint: Any = None,
    mode: str = "active",
    fail_open: bool = False,
    timeout_ms: int | None = None,
) -> PlanEntry:
    return PlanEntry(
        name=name,
        interceptor=interceptor,
        type=kind,
        events=events,
        phases=frozenset(phases),
        priority=priority or dict.fromkeys(PHASES, 0),
        priority_hint=hint,
        mode=mode,
        fail_open=fail_open,
        timeout_ms=timeout_ms,
        options=_NO_OPTIONS,
        index=index,
    )


class RemoteChainHook:
    """Runs a chain that includes remote interceptor servers: lists them first, then runs the merged plan.

    The plan is built again only when what a server lists changes (the admin's state moved, a failed
    server was listed again), so the steady state costs a dictionary lookup per server.
    """

    __slots__ = ("_built", "label", "local", "servers")

    def __init__(self, local: Sequence[Any], servers: Sequence[InterceptorServerConfig], *, label: str) -> None:
        self.local = list(local)
        self.servers = tuple(servers)
        self.label = label
        self._built: tuple[tuple[Discovery, ...], InterceptorHook | None] | None = None

    async def plan(self) -> InterceptorPlan:
        """The merged plan as of now (listing the servers it does not know yet)."""
        hook = await self.hook()
        return hook.plan if hook is not None else self._build(await discoveries(self.servers))

    async def hook(self, user: Any = None) -> InterceptorHook | None:
        """The `InterceptorHook` running the merged plan, or None when the plan is empty.

        `user` is the caller: a server with `"AUTH": "oauth"` not listed yet is listed with their token.
        """
        found = await discoveries(self.servers, user)
        built = self._built
        if built is None or any(a is not b for a, b in zip(built[0], found, strict=True)):
            plan = self._build(found)
            built = self._built = (found, InterceptorHook(plan) if plan else None)
        return built[1]

    def _build(self, found: Sequence[Discovery]) -> InterceptorPlan:
        remote: list[PlanEntry] = []
        for discovery in found:
            remote += remote_entries(discovery, len(self.local) + len(remote))
        return build_plan(
            self.local,
            label=self.label,
            directions=mcp_settings.INTERCEPTOR_DIRECTIONS,
            chain_timeout=mcp_settings.INTERCEPTOR_CHAIN_TIMEOUT,
            remote=remote,
        )

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        hook = await self.hook(ctx.principal)
        return await (call_next(params) if hook is None else hook(method, params, ctx, call_next))

    async def around(
        self, method: str, params: dict[str, Any], context: InterceptorContext, call_next: CallNext
    ) -> dict[str, Any]:
        """`InterceptorHook.around` with the merged plan (the intercepting client's requests)."""
        hook = await self.hook(context.user)
        return await (call_next(params) if hook is None else hook.around(method, params, context, call_next))


def chain_servers(config: Any) -> list[InterceptorServerConfig]:
    """The servers a list names: `{"SERVER": name}` (`"*"`: every configured one, by name) or an inline dict."""
    if not isinstance(config, (list, tuple)) or not any(is_server_entry(raw) for raw in config):
        return []
    servers = configured_servers()
    chosen: list[InterceptorServerConfig] = []
    for index, raw in enumerate(config):
        if not is_server_entry(raw):
            continue
        spec = raw["SERVER"]
        if spec == "*":
            named = [servers[name] for name in admin_servers() if name in servers]
        elif isinstance(spec, str):
            named = [servers.get(spec) or InterceptorServerConfig(spec, None, problem="no such interceptor server")]
        else:
            where = location(spec) if isinstance(spec, Mapping) else None
            named = [interceptor_server(str(where or f"server {index}"), spec)]
        chosen += [server for server in named if server not in chosen]
    return chosen


def server_entries_hook(local: Sequence[Any], config: Sequence[Any], label: str) -> RemoteChainHook | None:
    """The hook running `config`'s local entries merged with its servers' (`GatewayExtension.interceptor_servers`)."""
    servers = chain_servers(config)
    return RemoteChainHook(local, servers, label=label) if servers else None
