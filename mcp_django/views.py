"""Plain JSON views beside the MCP endpoints: the endpoint manifest and RFC 9728 resource metadata.

Both are public (they describe where and how to authenticate, nothing behind it) and read
the endpoint registry of the URLconf serving the request. A page on any origin may read them
(`Access-Control-Allow-Origin: *`): a browser-based client discovers how to sign in from them
before it holds credentials (docs/cors.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from mcp_django.conf import mcp_settings
from mcp_django.endpoints import canonical_path, endpoint_registry


def _readable_from_any_origin(view: Callable[..., JsonResponse]) -> Callable[..., JsonResponse]:
    @functools.wraps(view)
    def public(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        response = view(request, *args, **kwargs)
        response["Access-Control-Allow-Origin"] = "*"
        return response

    return public


@require_GET
@_readable_from_any_origin
def endpoint_manifest(request: HttpRequest) -> JsonResponse:
    """`{"endpoints": [{"name", "path", "mode", "anonymous"}, ...]}` for every mounted endpoint, sorted by path."""
    return JsonResponse(endpoint_registry(getattr(request, "urlconf", None)).manifest())


@require_GET
@_readable_from_any_origin
def protected_resource_metadata(request: HttpRequest, resource: str = "") -> JsonResponse:
    """RFC 9728 protected resource metadata of the endpoint mounted at `/<resource>`.

    404 when no endpoint is mounted exactly there, or when it lets anonymous callers in
    (there is then nothing to authorize).
    """
    path = canonical_path(resource)
    endpoint = endpoint_registry(getattr(request, "urlconf", None)).at(path)
    if endpoint is None or endpoint.allow_anonymous:
        return JsonResponse(
            {"error": "not_found", "error_description": f"No protected MCP endpoint at {path}"}, status=404
        )
    metadata: dict[str, object] = {
        "resource": request.build_absolute_uri(path),
        "bearer_methods_supported": ["header"],
        "resource_name": mcp_settings.SERVER_INFO.get("name", "mcp-django"),
    }
    servers = list(mcp_settings.AUTHORIZATION_SERVERS or ())
    if apps.is_installed("mcp_django.oauth"):  # the site is an authorization server (the `oauth` extra)
        from mcp_django.oauth.metadata import resource_metadata

        extra = resource_metadata(request, endpoint)
        servers += [server for server in extra.pop("authorization_servers", ()) if server not in servers]
        metadata.update(extra)
    if servers:
        metadata["authorization_servers"] = servers
    return JsonResponse(metadata)
