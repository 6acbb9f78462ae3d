"""Token values with a prefix, so an MCP endpoint tells this site's OAuth tokens from DRF tokens without a query.

`OAuth2Authentication` looks up only bearer values starting with `ACCESS_TOKEN_PREFIX`; any other value
(a DRF token key) goes straight to the next authentication class. The defaults
(`mcp_django.oauth.defaults.OAUTH2_PROVIDER`) name these generators; check `mcp_django_oauth.E073` says when
the settings name others.
"""

from __future__ import annotations

import secrets
from typing import Any, Final

ACCESS_TOKEN_PREFIX: Final = "mcp_at_"
REFRESH_TOKEN_PREFIX: Final = "mcp_rt_"


def access_token(request: Any, refresh_token: bool = False) -> str:
    """A new access token: the prefix and 256 random bits (django-oauth-toolkit's `ACCESS_TOKEN_GENERATOR`)."""
    return ACCESS_TOKEN_PREFIX + secrets.token_urlsafe(32)


def refresh_token(request: Any, refresh_token: bool = True) -> str:
    """A new refresh token (`REFRESH_TOKEN_GENERATOR`)."""
    return REFRESH_TOKEN_PREFIX + secrets.token_urlsafe(32)
