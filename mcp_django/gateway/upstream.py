"""Each user's own credentials for a remote MCP server whose `SERVERS` entry says `"AUTH": "oauth"`.

A user connects once (`gateway.upstream_views`, the page `mcp-upstream`); their tokens are kept in an
`UpstreamCredential` row, encrypted with Fernet under a key derived from `SECRET_KEY` (keys from
`SECRET_KEY_FALLBACKS` still decrypt, so the secret can be rotated). `RemoteSource` asks
`connection_for(remote, principal)` for the connection of each call: the remote's own, or, for such a
server, one that carries the caller's access token, refreshed first when it has expired. A caller who
has not connected (or whose refresh the authorization server refused: the row is deleted) gets
`NotConnected`, which names the page. docs/federation.md.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import datetime
import json
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from mcp_django.conf import mcp_settings
from mcp_django.executor import run_sync
from mcp_django.gateway.connection import BackendUnavailable, RemoteConnection, RemoteServer, connect, pool
from mcp_django.protocol.jsonrpc import MCPError

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

    from mcp_django.gateway.upstream_oauth import Discovery, Registration
    from mcp_django.models import UpstreamCredential

CONNECT_PAGE: Final = "mcp-upstream"
"""The URL name of the page where a user connects their accounts (`mcp_django.urls`)."""
_LEEWAY: Final = datetime.timedelta(seconds=30)
"""A token this close to expiry is refreshed first: it could expire on its way to the remote."""


class NotConnected(BackendUnavailable):
    """The caller has no usable token for the server: they must connect their account on the site's page."""

    def __init__(self, server: str, why: str = "is not connected") -> None:
        page = connect_page()
        message = f"{server!r} needs your own account, which {why}: connect it at {page} on this site, then call again."
        MCPError.__init__(self, message, data={"backend": server, "reason": "not_connected", "connect": page})
        self.server = server
        self.reason = "not_connected"


def connect_page() -> str:
    """The path of the connect page (where `mcp_django.urls` is included; `/mcp/upstream/` by default)."""
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse(CONNECT_PAGE)
    except NoReverseMatch:  # check mcp_django.E169
        return "/mcp/upstream/"


def _fernet() -> MultiFernet:
    from cryptography.fernet import Fernet, MultiFernet

    keys = mcp_settings.signing_keys("upstream-credentials")
    return MultiFernet([Fernet(base64.urlsafe_b64encode(key)) for key in keys])


def encrypt(secrets: Mapping[str, Any]) -> str:
    """`secrets` as a Fernet token under the key of `SECRET_KEY`."""
    return _fernet().encrypt(json.dumps(dict(secrets)).encode()).decode()


def decrypt(token: str) -> dict[str, Any] | None:
    """What `encrypt` made, under `SECRET_KEY` or one of `SECRET_KEY_FALLBACKS`; None when no key opens it."""
    from cryptography.fernet import InvalidToken

    try:
        secrets = json.loads(_fernet().decrypt(token.encode()))
    except (InvalidToken, ValueError):
        return None
    return secrets if isinstance(secrets, dict) else None


def _expiry(token: Mapping[str, Any]) -> datetime.datetime | None:
    expires_at = token.get("expires_at")
    if isinstance(expires_at, (int, float)) and not isinstance(expires_at, bool):
        return datetime.datetime.fromtimestamp(expires_at, tz=datetime.UTC)
    return None


def save_tokens(
    user: Any,
    server: str,
    discovery: Discovery,
    registration: Registration,
    token: Mapping[str, Any],
) -> UpstreamCredential:
    """Store (or replace) `user`'s tokens for `server`, as the token endpoint gave them."""
    from mcp_django.models import UpstreamCredential

    secrets = {
        "access_token": token["access_token"],
        "refresh_token": token.get("refresh_token"),
        "client_secret": registration.client_secret,
        "auth_method": registration.auth_method,
        "resource": discovery.resource,
    }
    credential, _created = UpstreamCredential.objects.update_or_create(
        user=user,
        server=server,
        defaults={
            "issuer": discovery.issuer,
            "token_endpoint": discovery.token_endpoint,
            "client_id": registration.client_id,
            "scope": str(token.get("scope") or "")[:500],
            "secret": encrypt(secrets),
            "expires_at": _expiry(token),
        },
    )
    return credential


def _access_token(server: RemoteServer, user_pk: Any) -> tuple[str, str | None]:
    """The caller's access token for `server`, refreshed when expired: `(token, the one it replaced)`.

    Raises:
        NotConnected: no row, a row no key decrypts, or a refresh the authorization server refused.
        BackendUnavailable: the authorization server could not be reached to refresh.
    """
    from django.utils import timezone

    from mcp_django.gateway import upstream_oauth
    from mcp_django.models import UpstreamCredential

    credential = UpstreamCredential.objects.filter(user_id=user_pk, server=server.name).first()
    if credential is None:
        raise NotConnected(server.name)
    secrets = decrypt(credential.secret)
    if secrets is None or not isinstance(secrets.get("access_token"), str):
        credential.delete()
        raise NotConnected(server.name, "needs connecting again")
    access = str(secrets["access_token"])
    if credential.expires_at is None or credential.expires_at - _LEEWAY > timezone.now():
        return access, None
    refresh_token = secrets.get("refresh_token")
    if not isinstance(refresh_token, str):
        credential.delete()
        raise NotConnected(server.name, "has an expired token")
    registration = upstream_oauth.Registration(
        credential.client_id, secrets.get("client_secret"), secrets.get("auth_method")
    )
    resource = str(secrets.get("resource") or server.url)
    try:
        token = upstream_oauth.refresh(server, credential.token_endpoint, registration, refresh_token, resource)
    except upstream_oauth.RefreshRefused:
        credential.delete()
        raise NotConnected(server.name, "has an expired token the server would not renew") from None
    except upstream_oauth.UpstreamAuthError as error:
        raise BackendUnavailable(server.name, "unreachable", f"the token could not be renewed: {error}") from None
    secrets = {**secrets, "access_token": token["access_token"]}
    if isinstance(token.get("refresh_token"), str):  # rotated; else the old one stays valid
        secrets["refresh_token"] = token["refresh_token"]
    credential.secret = encrypt(secrets)
    credential.expires_at = _expiry(token)
    credential.scope = str(token.get("scope") or credential.scope)[:500]
    credential.save(update_fields=["secret", "expires_at", "scope", "updated"])
    return str(token["access_token"]), access


_refreshing: weakref.WeakValueDictionary[tuple[Any, ...], asyncio.Lock] = weakref.WeakValueDictionary()


async def connection_for(server: RemoteServer, principal: Any) -> RemoteConnection:
    """The pooled connection to `server` for the caller `principal`: with their own token when it uses OAuth.

    Raises:
        NotConnected: the caller has not connected their account (or must again).
        BackendUnavailable: the token could not be renewed for now.
    """
    if server.oauth is None:
        return connect(server)
    user_pk = getattr(principal, "pk", None) if getattr(principal, "is_authenticated", False) else None
    if user_pk is None:
        raise NotConnected(server.name, "cannot be connected while you are anonymous")
    # One refresh at a time per user and server in this process: a second would spend a rotated refresh token.
    key = (id(asyncio.get_running_loop()), user_pk, server.name)
    lock = _refreshing.get(key)
    if lock is None:
        lock = _refreshing[key] = asyncio.Lock()
    async with lock:
        token, replaced = await run_sync(_access_token, server, user_pk)
    if replaced is not None:
        await pool.drop(dataclasses.replace(server, token=replaced))
    return connect(dataclasses.replace(server, token=token))


def _forget(server: RemoteServer, user_pk: Any) -> None:
    from mcp_django.models import UpstreamCredential

    UpstreamCredential.objects.filter(user_id=user_pk, server=server.name).delete()


async def refused(
    server: RemoteServer, principal: Any, connection: RemoteConnection, error: BackendUnavailable
) -> None:
    """After `error` on the caller's own connection: a server that refused their token (revoked, or not
    enough) makes them connect again; anything else is left to the caller.

    Raises:
        NotConnected: the server refused the token; it is forgotten.
    """
    if server.oauth is None or error.reason != "refused":
        return
    await run_sync(_forget, server, getattr(principal, "pk", None))
    await pool.drop(connection.server)
    raise NotConnected(server.name, "the server refused") from None
