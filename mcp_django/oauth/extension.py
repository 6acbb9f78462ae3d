"""The MCP extensions of the authorization server: machine clients and enterprise sign-in.

- `io.modelcontextprotocol/oauth-client-credentials` (SEP-1046): an endpoint takes tokens a machine
  client gets with the client credentials grant (`mcp_django.oauth.machines`), while the authorization
  server grants `client_credentials`.
- `io.modelcontextprotocol/enterprise-managed-authorization` (SEP-990): an endpoint takes tokens got
  with identity assertions of trusted identity providers (`mcp_django.oauth.enterprise`), while an
  issuer is trusted and the token endpoint takes the grant.

Named in `MCPOAuthConfig.mcp_extensions`, so installing `mcp_django.oauth` installs them. They bring no
method: they say so under `capabilities.extensions`, on the endpoints that take this site's OAuth
tokens and are not anonymous (no token is issued for those).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from oauth2_provider.settings import oauth2_settings

from mcp_django.extensions import Extension
from mcp_django.oauth.authentication import accepts_oauth

CLIENT_CREDENTIALS: Final = "io.modelcontextprotocol/oauth-client-credentials"
ENTERPRISE_MANAGED_AUTHORIZATION: Final = "io.modelcontextprotocol/enterprise-managed-authorization"


class ClientCredentialsExtension(Extension):
    """Advertises client credentials on the endpoints that take this site's OAuth tokens."""

    identifier = CLIENT_CREDENTIALS

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        if endpoint.allow_anonymous or not accepts_oauth(endpoint):
            return None
        if "client_credentials" not in oauth2_settings.OAUTH2_GRANT_TYPES_SUPPORTED:
            return None
        return {}


class EnterpriseManagedAuthorizationExtension(Extension):
    """Advertises enterprise sign-in on the endpoints that take this site's OAuth tokens, while an issuer is trusted."""

    identifier = ENTERPRISE_MANAGED_AUTHORIZATION

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        from mcp_django.oauth.server import takes_identity_assertions

        if endpoint.allow_anonymous or not accepts_oauth(endpoint) or not takes_identity_assertions():
            return None
        return {}
