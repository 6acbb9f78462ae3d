"""The `MCP_DJANGO` keys of the OAuth authorization server (docs/oauth.md), read through `oauth_settings`.

Named on `MCPOAuthConfig.mcp_settings`; their checks are the app's (mcp_django_oauth.E074 to E097).
"""

from __future__ import annotations

from typing import Final

from mcp_django.conf import MCPSettings

oauth_settings: Final = MCPSettings(
    {
        # Client registrations one address may make, failed logins, token requests.
        "OAUTH_REGISTRATION_RATE": "30/hour",
        "OAUTH_LOGIN_RATE": "5/minute",
        "OAUTH_TOKEN_RATE": "60/minute",
        # Seconds a client's signed assertion may live, and a JWKS fetched by URL is kept at most.
        "OAUTH_CLIENT_ASSERTION_MAX_AGE": 300,
        "OAUTH_JWKS_MAX_AGE": 3600,
        # Enterprise sign-in: identity providers whose ID-JAGs are exchanged for tokens, by issuer.
        "OAUTH_TRUSTED_ISSUERS": {},
    },
    owner="mcp_django.oauth",
)
