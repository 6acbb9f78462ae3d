"""What an MCP endpoint's RFC 9728 metadata says about this authorization server."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from oauth2_provider.settings import oauth2_settings

from mcp_django.oauth.authentication import accepts_oauth
from mcp_django.oauth.grants import OAUTH_SCOPES


def resource_metadata(request: HttpRequest, endpoint: Any) -> dict[str, Any]:
    """`authorization_servers` (this site's issuer) and `scopes_supported`, for an endpoint that accepts
    this site's OAuth tokens, when the URLconf mounts `mcp_django.oauth.urls`; else nothing."""
    servers = list(oauth2_settings.oauth2_resource_authorization_servers(request)) if accepts_oauth(endpoint) else []
    if not servers:  # the endpoint takes no OAuth token, or the URLconf serving it mounts no authorization server
        return {}
    return {"authorization_servers": servers, "scopes_supported": list(OAUTH_SCOPES)}
