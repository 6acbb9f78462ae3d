"""The MCP extension of machine clients, `io.modelcontextprotocol/oauth-client-credentials` (SEP-1046).

Named in `MCPOAuthConfig.mcp_extensions`, so installing `mcp_django.oauth` installs it. It brings no
method: it says, under `capabilities.extensions`, that an endpoint takes tokens a machine client gets
with the client credentials grant (`mcp_django.oauth.machines`). Served on the endpoints that take
this site's OAuth tokens and are not anonymous (no token is issued for those), while the
authorization server grants `client_credentials`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from oauth2_provider.settings import oauth2_settings

from mcp_django.extensions import Extension
from mcp_django.oauth.authentication import accepts_oauth

__all__ = ["CLIENT_CREDENTIALS", "ClientCredentialsExtension"]

CLIENT_CREDENTIALS: Final = "io.modelcontextprotocol/oauth-client-credentials"


class ClientCredentialsExtension(Extension):
    """Advertises client credentials on the endpoints that take this site's OAuth tokens."""

    identifier = CLIENT_CREDENTIALS

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        if endpoint.allow_anonymous or not accepts_oauth(endpoint):
            return None
        if "client_credentials" not in oauth2_settings.OAUTH2_GRANT_TYPES_SUPPORTED:
            return None
        return {}
