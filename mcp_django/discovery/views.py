"""The views serving the cards and the catalog: public, cacheable (ETag and 304), readable from any origin.

Each answers GET (and HEAD) with its document under its own media type, `Cache-Control: public` for
`SERVER_CARD_MAX_AGE` seconds and a strong ETag of the body, `304` when `If-None-Match` names it, and
OPTIONS (the preflight a browser sends before a GET with `If-None-Match`) with the CORS headers alone.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.views.decorators.http import require_http_methods

from mcp_django.discovery.cards import card_of, catalog, published_endpoints
from mcp_django.discovery.conf import discovery_settings
from mcp_django.discovery.wire import CARD_MEDIA_TYPE, CARD_SUFFIX, CATALOG_MEDIA_TYPE, CORS_HEADERS
from mcp_django.endpoints import canonical_path

DEFAULT_ENDPOINT = "server"


def _document(request: HttpRequest, document: dict[str, Any] | None, media_type: str) -> HttpResponse:
    if document is None:
        response: HttpResponse = JsonResponse({"error": "not_found"}, status=404)
    elif request.method == "OPTIONS":
        response = HttpResponse(status=204)
    else:
        body = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
        etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
        named = {tag.strip().removeprefix("W/") for tag in request.headers.get("If-None-Match", "").split(",")}
        if etag in named or "*" in named:
            response = HttpResponseNotModified()
        else:
            response = HttpResponse(body, content_type=media_type)
        response["ETag"] = etag
        response["Cache-Control"] = f"public, max-age={discovery_settings.SERVER_CARD_MAX_AGE}"
    for header, value in CORS_HEADERS.items():
        response[header] = value
    return response


@require_http_methods(["GET", "HEAD", "OPTIONS"])
def server_card(request: HttpRequest, route: str = "") -> HttpResponse:
    """The card of the endpoint this path is `<endpoint>/server-card` of; 404 when none is published there."""
    path = canonical_path(request.path_info.removesuffix("/").removesuffix(CARD_SUFFIX))
    found = next(((at, endpoint) for at, endpoint in published_endpoints(request) if at == path), None)
    return _document(request, None if found is None else card_of(request, *found), CARD_MEDIA_TYPE)


@require_http_methods(["GET", "HEAD", "OPTIONS"])
def ai_catalog(request: HttpRequest) -> HttpResponse:
    """The site's AI Catalog, `/.well-known/ai-catalog.json`: an entry per published endpoint."""
    return _document(request, catalog(request), CATALOG_MEDIA_TYPE)


@require_http_methods(["GET", "HEAD", "OPTIONS"])
def legacy_server_card(request: HttpRequest) -> HttpResponse:
    """`/.well-known/mcp/server-card.json`, where earlier drafts put one card per site.

    The card of the default endpoint (`server`, the one `include("mcp_django.urls")` mounts at `/mcp`) when
    it is published, else of the first published one in path order.
    """
    published = sorted(published_endpoints(request), key=lambda found: found[1].name != DEFAULT_ENDPOINT)
    return _document(request, card_of(request, *published[0]) if published else None, CARD_MEDIA_TYPE)
