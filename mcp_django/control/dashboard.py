"""What the admin's MCP dashboard shows: endpoints, providers and interceptors with their state, tool
counts per endpoint and scope, the tools with MCP Apps views, and an inline SVG chart of the last day's
tool calls (no JavaScript)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

from django.db.models import Count
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from mcp_django.control.inventory import (
    code_interceptors,
    code_providers,
    endpoints_serving,
    list_changed_methods,
    listed_tools,
)
from mcp_django.control.state import control_state
from mcp_django.endpoints import Endpoint, mounted_endpoints
from mcp_django.interceptors.audit import audit_status
from mcp_django.models import InterceptorState, ProviderState, ToolCallRecord
from mcp_django.scopes import Scope
from mcp_django.ui import EXTENSION, apps_of

CHART_HOURS = 24


def tool_counts(endpoint: Endpoint) -> dict[Scope, int | None]:
    """How many tools a caller of each scope sees on `endpoint` now (None: a provider failed to list)."""
    disabled = control_state.snapshot.disabled_tools
    counts: dict[Scope, int | None] = {}
    for scope in Scope:
        try:
            counts[scope] = len([name for name in listed_tools(endpoint, scope) if name not in disabled])
        except Exception:
            counts[scope] = None
    return counts


def app_rows(endpoints: list[Endpoint]) -> list[dict[str, Any]]:
    """One row per tool with an MCP Apps view, per endpoint: the view, who declared it, whether it is served."""
    rows = []
    for endpoint in endpoints:
        try:
            served = EXTENSION in endpoint.served_extensions.capabilities
        except ValueError:  # an endpoint naming something that is not an extension: check E122
            served = False
        for name, tool in apps_of(endpoint).items():
            rows.append(
                {
                    "endpoint": endpoint.name,
                    "tool": name,
                    "uri": tool.app.uri,
                    "template": tool.app.template,
                    "owner": tool.owner,
                    "visibility": ", ".join(tool.app.visibility or ("model", "app")),
                    "served": served,
                }
            )
    return rows


@dataclasses.dataclass
class _Bucket:
    start: Any
    ok: int = 0
    failed: int = 0


def _buckets(now: Any) -> list[_Bucket]:
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=CHART_HOURS - 1)
    buckets = [_Bucket(start + timedelta(hours=index)) for index in range(CHART_HOURS)]
    rows = ToolCallRecord.objects.filter(created__gte=start).values_list("created", "outcome")
    for created, outcome in rows:
        index = int((created - start).total_seconds() // 3600)
        if 0 <= index < CHART_HOURS:
            if outcome == ToolCallRecord.Outcome.OK:
                buckets[index].ok += 1
            else:
                buckets[index].failed += 1
    return buckets


def tool_call_chart(now: Any = None) -> SafeString:
    """An SVG bar chart of tool calls per hour over the last day: successes grey-blue, errors and refusals red."""
    buckets = _buckets(now or timezone.now())
    width, height, pad, bar = 720, 180, 24, 720 // CHART_HOURS
    top = max([bucket.ok + bucket.failed for bucket in buckets] + [1])
    scale = (height - 2 * pad) / top
    bars = []
    for index, bucket in enumerate(buckets):
        x = index * bar + 2
        ok_height, failed_height = bucket.ok * scale, bucket.failed * scale
        base = height - pad
        label = f"{bucket.start:%H}:00 — {bucket.ok} ok, {bucket.failed} failed"
        bars.append(
            format_html(
                '<g><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" fill="#79aec8"/>'
                '<rect class="mcp-failed" x="{}" y="{}" width="{}" height="{}" fill="#ba2121"/></g>',
                label,
                x,
                f"{base - ok_height:.1f}",
                bar - 4,
                f"{ok_height:.1f}",
                x,
                f"{base - ok_height - failed_height:.1f}",
                bar - 4,
                f"{failed_height:.1f}",
            )
        )
        if index % 3 == 0:
            bars.append(
                format_html(
                    '<text x="{}" y="{}" font-size="10" fill="#666">{}</text>', x, height - 6, f"{bucket.start:%H}h"
                )
            )
    total_ok = sum(bucket.ok for bucket in buckets)
    total_failed = sum(bucket.failed for bucket in buckets)
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {} {}" width="{}" height="{}" '
        'aria-label="{}"><line x1="0" y1="{}" x2="{}" y2="{}" stroke="#ccc"/>'
        '<text x="4" y="14" font-size="11" fill="#333">{}</text>{}</svg>',
        width,
        height,
        width,
        height,
        f"Tool calls in the last {CHART_HOURS} hours: {total_ok} ok, {total_failed} failed",
        height - pad,
        width,
        height - pad,
        f"max {top} per hour · {total_ok} ok · {total_failed} failed",
        mark_safe("".join(bars)),  # every piece was escaped by format_html above
    )


def event_counts() -> dict[str, int] | None:
    """The events extension's webhook deliveries by status and its live subscriptions (None: not installed)."""
    from django.apps import apps

    if not apps.is_installed("mcp_django.events"):
        return None
    from mcp_django.events.store import delivery_counts

    return delivery_counts()


def dashboard_context() -> dict[str, Any]:
    """Everything the dashboard template renders."""
    control_state.refresh_sync()
    provider_rows = {row.provider_id: row for row in ProviderState.objects.all()}
    providers = []
    for provider in code_providers():
        row = provider_rows.get(provider.id)
        providers.append(
            {
                "id": provider.id,
                "name": provider.name,
                "serves": ", ".join(method.split("/")[1] for method in list_changed_methods(provider)),
                "enabled": row.enabled if row else True,
                "scope": Scope(row.min_scope).label if row and row.min_scope is not None else provider.scope.label,
                "endpoints": ", ".join(endpoint.name for endpoint in endpoints_serving(provider.id)),
            }
        )
    interceptor_rows = {row.name: row for row in InterceptorState.objects.all()}
    interceptors = []
    for name, entry in code_interceptors().items():
        istate = interceptor_rows.get(name)
        interceptors.append(
            {
                "name": name,
                "class": type(entry.interceptor).__name__,
                "type": entry.type,
                "enabled": istate.enabled if istate else True,
                "mode": (istate.mode if istate and istate.mode else entry.mode),
                "fail_open": istate.fail_open if istate and istate.fail_open is not None else entry.fail_open,
                "priority": istate.priority if istate and istate.priority is not None else entry.priority_hint,
            }
        )
    endpoints = []
    mounted = mounted_endpoints()
    for endpoint in mounted:
        counts = tool_counts(endpoint)
        endpoints.append(
            {
                "name": endpoint.name,
                "path": "/" + endpoint.path,
                "mode": endpoint.mode,
                "anonymous": endpoint.allow_anonymous,
                "counts": [counts[scope] for scope in Scope],
            }
        )
    since = timezone.now() - timedelta(hours=CHART_HOURS)
    recent = ToolCallRecord.objects.filter(created__gte=since)
    errors = list(recent.exclude(outcome=ToolCallRecord.Outcome.OK).select_related("user")[:10])
    by_outcome = dict(recent.values_list("outcome").annotate(n=Count("id")).values_list("outcome", "n"))
    return {
        "endpoints": endpoints,
        "scopes": [scope.label for scope in Scope],
        "providers": providers,
        "apps": app_rows(mounted),
        "interceptors": interceptors,
        "chart": tool_call_chart(),
        "errors": errors,
        "by_outcome": by_outcome,
        "audit": audit_status(),
        "events": event_counts(),
        "disabled_tools": sorted(control_state.snapshot.disabled_tools),
        "stale_providers": [row.provider_id for row in provider_rows.values() if not row.present_in_code],
        "stale_interceptors": [row.name for row in interceptor_rows.values() if not row.present_in_code],
    }
