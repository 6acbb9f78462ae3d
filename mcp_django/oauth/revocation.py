"""Revocation takes effect at once: a deleted or changed access token drops the cached credentials.

Admission keeps an accepted token's user in `mcp_django.endpoints.auth_cache` (never past the token's expiry).
Revoking a token (the revocation endpoint, the admin's actions, deleting its client) deletes the
access token row; these receivers then call `forget_credentials()`, which drops this process's cache
at once and every other worker's within `MCP_DJANGO["STATE_CHECK_INTERVAL"]`.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from oauth2_provider.models import get_access_token_model

from mcp_django.endpoints.auth_cache import forget_credentials


def _saved(sender: Any, created: bool = False, **kwargs: Any) -> None:
    if not created:  # a new token names no cached credential
        forget_credentials()


def _deleted(sender: Any, **kwargs: Any) -> None:
    forget_credentials()


def connect() -> None:
    """Connect the receivers (from `MCPOAuthConfig.ready()`)."""
    model = get_access_token_model()
    uid = "mcp_django.oauth.revocation"
    post_save.connect(_saved, sender=model, dispatch_uid=uid)
    post_delete.connect(_deleted, sender=model, dispatch_uid=uid)
