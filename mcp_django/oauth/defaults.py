"""The django-oauth-toolkit settings MCP clients need: `OAUTH2_PROVIDER = {**OAUTH2_PROVIDER, ...}` in settings.

Imports nothing of Django, so a settings module can import it. The system checks of `mcp_django.oauth`
(`mcp_django_oauth.E070`...) refuse a configuration that drops what MCP requires (PKCE S256, public clients).
"""

from __future__ import annotations

from typing import Any, Final

from mcp_django.oauth.grants import OAUTH_SCOPES

__all__ = ["OAUTH2_PROVIDER"]

OAUTH2_PROVIDER: Final[dict[str, Any]] = {
    "SCOPES": dict(OAUTH_SCOPES),
    "DEFAULT_SCOPES": ["mcp:user"],
    # OAuth 2.1: authorization code with PKCE, S256 only; no implicit or password grant.
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    # RFC 9207: the authorization response names its issuer (a mix-up defence MCP clients check).
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    # Machine clients (SEP-1046): client credentials, authenticated by a secret or a signed JWT.
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token", "client_credentials"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "private_key_jwt"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
    "ROTATE_REFRESH_TOKEN": True,
    # Prefixed values: MCP endpoints tell these tokens from DRF tokens without a query (mcp_django.oauth.tokens).
    "ACCESS_TOKEN_GENERATOR": "mcp_django.oauth.tokens.access_token",
    "REFRESH_TOKEN_GENERATOR": "mcp_django.oauth.tokens.refresh_token",
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # RFC 9700 §4: only a checksum of each token is stored, never the token (lookups use the checksum).
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    # A replayed code revokes its first exchange; an inactive user's grants end (mcp_django.oauth.validators).
    "OAUTH2_VALIDATOR_CLASS": "mcp_django.oauth.validators.MCPOAuth2Validator",
    # The token endpoint also takes identity assertions of trusted identity providers (mcp_django.oauth.enterprise).
    "OAUTH2_SERVER_CLASS": "mcp_django.oauth.server.MCPServer",
    # MCP clients register themselves (RFC 7591) or name their metadata document (CIMD), unauthenticated:
    # the user's login and consent is what authorizes them. mcp_django.oauth.views.RegistrationView
    # admits only public clients with https or loopback redirect URIs.
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    # The toolkit's fetcher, with a deadline for the whole fetch and the registration rules (mcp_django.oauth.cimd).
    "CIMD_METADATA_FETCHER": "mcp_django.oauth.cimd.MCPMetadataFetcher",
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_MAX_DOCUMENT_SIZE": 16 * 1024,
}
"""django-oauth-toolkit settings for an MCP authorization server."""
