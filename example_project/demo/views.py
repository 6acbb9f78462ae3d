"""The demo's landing page at `/`: the endpoints this project mounts and how to connect to them."""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mcp_django.endpoints import mounted_endpoints

MODES = {
    "server": "a registry of declared tools, resources and prompts",
    "adapter": "the providers' tools (books, authors, models, the bus)",
    "combined": "a registry and the providers together",
    "gateway": "a remote MCP server, fronted with this site's auth, scopes and interceptors",
}
"""What each endpoint mode serves, in a phrase; a mode missing here is shown by its name alone."""

DOCS_URL = f"http://127.0.0.1:{os.environ.get('DOCS_PORT', '8008')}/"
"""Where `make docs-serve` serves the documentation site."""


def home(request: HttpRequest) -> HttpResponse:
    """List every mounted endpoint (from the endpoint registry) with its mode, and the ways in."""
    endpoints = [
        {
            "name": endpoint.name,
            "url": request.build_absolute_uri("/" + endpoint.path),
            "mode": endpoint.mode,
            "serves": MODES.get(endpoint.mode, ""),
            "anonymous": endpoint.allow_anonymous,
        }
        for endpoint in mounted_endpoints()
    ]
    context = {"endpoints": endpoints, "base_url": request.build_absolute_uri("/").rstrip("/"), "docs_url": DOCS_URL}
    return render(request, "demo/home.html", context)
