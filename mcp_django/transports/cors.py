"""CORS for browser-based MCP clients: the preflight, and the headers an answer to a browser page carries.

A page on another origin may call an endpoint when its `Origin` is one admission admits
(`MCP_DJANGO["ALLOWED_ORIGINS"]`, and localhost on any port: `mcp_django.endpoints.admission.origin_allowed`).
Its preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered before admission, since a
browser sends no credentials with it; the actual request is admitted as any other, and its answer
(a 401 included, so the page can read `WWW-Authenticate`) names the origin and exposes the headers
MCP clients read. Credentials are headers (`Authorization`), never cookies: no
`Access-Control-Allow-Credentials`. Any other origin gets no CORS header at all, and admission
answers its requests 403. Framework-free, like `transports.http`, which calls it for the fast path
and the Django view alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mcp_django.endpoints.admission import Refused, allowed_origins, check_host, origin_allowed

ALLOWED_METHODS: Final = "GET, POST, DELETE"
ALLOWED_HEADERS: Final = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "idempotency-key",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
    }
)
"""The request headers an MCP client sends (besides `Mcp-Param-*`, which a preflight may name as well)."""
EXPOSED_HEADERS: Final = "Mcp-Session-Id, WWW-Authenticate, Retry-After"
MAX_AGE: Final = "600"
"""Seconds a browser may reuse a preflight's answer."""


def is_preflight(method: str, headers: Mapping[str, str]) -> bool:
    """True for a CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`."""
    return method == "OPTIONS" and "origin" in headers and "access-control-request-method" in headers


def _admitted(origin: str, host: str | None) -> bool:
    """Whether admission lets a page of `origin` in at `host` (the Host and Origin rules; no credentials)."""
    try:
        check_host(host)
    except Refused:
        return False
    return origin_allowed(origin, allowed_origins())


def preflight_headers(headers: Mapping[str, str], host: str | None) -> dict[str, str] | None:
    """The headers of a 204 answering this preflight, or None when its origin (or Host) is not admitted."""
    origin = headers["origin"]
    if not _admitted(origin, host):
        return None
    requested = [name.strip().lower() for name in headers.get("access-control-request-headers", "").split(",")]
    allowed = [name for name in requested if name in ALLOWED_HEADERS or name.startswith("mcp-param-")]
    answer = {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": ALLOWED_METHODS,
        "Access-Control-Max-Age": MAX_AGE,
        "Vary": "Origin",
    }
    if allowed:
        answer["Access-Control-Allow-Headers"] = ", ".join(allowed)
    return answer


def cors_headers(origin: str | None, host: str | None) -> dict[str, str] | None:
    """The CORS headers of an answer to a request from `origin`; None without one, or for one not admitted."""
    if origin is None or not _admitted(origin, host):
        return None
    return {"Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS, "Vary": "Origin"}
