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
import uuid
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode, urljoin, urlsplit

from mcp_django.client.config import ServerConfig
from mcp_django.client.connection import CallerConnections, connect, pool
from mcp_django.client.remote import RemoteConnection
from mcp_django.conf import mcp_settings
from mcp_django.exceptions import BackendUnavailable
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import MCPError
from mcp_django.runtime.executor import run_sync

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

    from mcp_django.client.auth.authorization import Discovery, Registration
    from mcp_django.gateway.models import UpstreamCredential

CONNECT_PAGE: Final = "mcp-upstream"
"""The URL name of the page where a user connects their accounts (`mcp_django.urls`)."""
_LEEWAY: Final = datetime.timedelta(seconds=30)
"""A token this close to expiry is refreshed first: it could expire on its way to the remote."""
CONNECT_ASKS: Final = 3
"""How many times one call asks a 2026 client to send its user to the connect page before it answers the error."""
_ASKED: Final = "mcp_django.upstream.connect-"
"""The keys of those questions in the call's input responses (`-0`, `-1`, ...)."""


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
    except NoReverseMatch:  # check mcp_django_gateway.E169
        return "/mcp/upstream/"


def connect_url(server: str, site: str | None) -> str | None:
    """The absolute URL of the connect page, pointing at `server`: under `site` (the request's
    `https://host/`), else `SITE_URL`; None when neither says where the site is."""
    base = site or mcp_settings.SITE_URL
    if not isinstance(base, str) or urlsplit(base).scheme not in ("http", "https"):
        return None
    return urljoin(base, f"{connect_page()}?{urlencode({'server': server})}")


async def ask_to_connect(error: NotConnected, ctx: RequestContext) -> None:
    """Ask a client that supports URL-mode elicitation to send its user to the connect page for `error.server`.

    A 2026-07-28 client gets an `input_required` result and retries the call once the user agreed to
    open the page (the retried call tries the user's token again, and asks again while there is none,
    `CONNECT_ASKS` times at most); a 2025-11-25 one gets `URLElicitationRequired` (-32042) and retries
    by itself. Returns (without asking) when the call should answer `error` instead: the client cannot
    open URLs, the site's address is unknown (stdio without `SITE_URL`), the user declined or cancelled,
    or the questions ran out.

    Raises:
        InputRequired, URLElicitationRequired: the question, in the caller's era.
    """
    if not ctx.can_elicit_url():
        return
    url = connect_url(error.server, ctx.connection.site)
    asked = sum(1 for key in ctx.answers if key.startswith(_ASKED))
    last = ctx.answers.get(f"{_ASKED}{asked - 1}")
    if url is None or asked >= CONNECT_ASKS or (isinstance(last, Mapping) and last.get("action") != "accept"):
        return
    message = f"{error.server!r} needs your own account. Connect it on this site, then come back here."
    await ctx.elicit_url(message, url, elicitation_id=uuid.uuid4().hex, key=f"{_ASKED}{asked}")


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
    from mcp_django.gateway.models import UpstreamCredential

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


def _access_token(server: ServerConfig, user_pk: Any) -> tuple[str, str | None]:
    """The caller's access token for `server`, refreshed when expired: `(token, the one it replaced)`.

    Raises:
        NotConnected: no row, a row no key decrypts, or a refresh the authorization server refused.
        BackendUnavailable: the authorization server could not be reached to refresh.
    """
    from mcp_django.gateway.models import UpstreamCredential

    credential = UpstreamCredential.objects.filter(user_id=user_pk, server=server.name).first()
    access = _usable(server, credential)
    if access is not None:
        return access, None
    assert credential is not None  # _usable raised otherwise
    return _refreshed(server, credential.pk)


def _usable(server: ServerConfig, credential: UpstreamCredential | None) -> str | None:
    """`credential`'s access token while it has not expired; None when it must be refreshed.

    Raises:
        NotConnected: no row, or one no key decrypts (it is deleted).
    """
    from django.utils import timezone

    if credential is None:
        raise NotConnected(server.name)
    secrets = decrypt(credential.secret)
    if secrets is None or not isinstance(secrets.get("access_token"), str):
        credential.delete()
        raise NotConnected(server.name, "needs connecting again")
    if credential.expires_at is None or credential.expires_at - _LEEWAY > timezone.now():
        return str(secrets["access_token"])
    return None


def _locked(pk: Any) -> UpstreamCredential | None:
    """The row `pk`, locked until the transaction ends: `SELECT ... FOR UPDATE` where the database has row
    locks, else (SQLite) the database's write lock, taken by writing the row before reading it."""
    from django.db import connections, router
    from django.utils import timezone

    from mcp_django.gateway.models import UpstreamCredential

    rows = UpstreamCredential.objects.filter(pk=pk)
    if not connections[router.db_for_write(UpstreamCredential)].features.has_select_for_update:
        rows.update(updated=timezone.now())  # a deferred SQLite transaction would let two readers refresh at once
    return rows.select_for_update().first()


def _refreshed(server: ServerConfig, pk: Any) -> tuple[str, str | None]:
    """Refresh the row `pk`'s token once across every worker: under the row's lock, read again first (another
    worker may have just refreshed it, spending the refresh token this one holds).

    Raises:
        NotConnected, BackendUnavailable: as `_access_token`; raised once the transaction is over, so that
            a row deleted on the way stays deleted.
    """
    from django.db import router, transaction

    from mcp_django.gateway.models import UpstreamCredential

    with transaction.atomic(using=router.db_for_write(UpstreamCredential)):
        outcome = _refresh_locked(server, pk)
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _refresh_locked(server: ServerConfig, pk: Any) -> tuple[str, str | None] | MCPError:
    """`_refreshed`'s work inside its transaction: the tokens, or the error to raise after it."""
    from mcp_django.client.auth import authorization

    credential = _locked(pk)
    try:
        access = _usable(server, credential)
    except NotConnected as error:
        return error
    if access is not None:
        return access, None  # renewed by another worker while this one waited for the lock
    assert credential is not None
    secrets = decrypt(credential.secret) or {}
    access = str(secrets["access_token"])
    refresh_token = secrets.get("refresh_token")
    if not isinstance(refresh_token, str):
        credential.delete()
        return NotConnected(server.name, "has an expired token")
    registration = authorization.Registration(
        credential.client_id, secrets.get("client_secret"), secrets.get("auth_method")
    )
    resource = str(secrets.get("resource") or server.url)
    try:
        token = authorization.refresh(server, credential.token_endpoint, registration, refresh_token, resource)
    except authorization.RefreshRefused:
        credential.delete()
        return NotConnected(server.name, "has an expired token the server would not renew")
    except authorization.UpstreamAuthError as error:
        return BackendUnavailable(server.name, "unreachable", f"the token could not be renewed: {error}")
    secrets = {**secrets, "access_token": token["access_token"]}
    if isinstance(token.get("refresh_token"), str):  # rotated; else the old one stays valid
        secrets["refresh_token"] = token["refresh_token"]
    credential.secret = encrypt(secrets)
    credential.expires_at = _expiry(token)
    credential.scope = str(token.get("scope") or credential.scope)[:500]
    credential.save(update_fields=["secret", "expires_at", "scope", "updated"])
    return str(token["access_token"]), access


_refreshing: weakref.WeakValueDictionary[tuple[Any, ...], asyncio.Lock] = weakref.WeakValueDictionary()


async def connection_for(server: ServerConfig, principal: Any) -> RemoteConnection:
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
    # One refresh at a time per user and server in this process (the row's lock serialises the processes):
    # the threads of one worker then queue here rather than on the database.
    key = (id(asyncio.get_running_loop()), user_pk, server.name)
    lock = _refreshing.get(key)
    if lock is None:
        lock = _refreshing[key] = asyncio.Lock()
    async with lock:
        token, replaced = await run_sync(_access_token, server, user_pk)
    if replaced is not None:
        await pool.drop(dataclasses.replace(server, token=replaced))
    return connect(dataclasses.replace(server, token=token))


def _forget(server: ServerConfig, user_pk: Any) -> None:
    from mcp_django.gateway.models import UpstreamCredential

    UpstreamCredential.objects.filter(user_id=user_pk, server=server.name).delete()


async def refused(
    server: ServerConfig, principal: Any, connection: RemoteConnection, error: BackendUnavailable
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


class UpstreamConnections(CallerConnections):
    """The connections `MCPClient` uses when the gateway app is installed: for a server with `"AUTH": "oauth"`,
    each user's own (`connection_for`), and a refused token forgotten (`refused`)."""

    async def connection(self, server: ServerConfig, principal: Any) -> RemoteConnection:
        return await connection_for(server, principal)

    async def refused(
        self, server: ServerConfig, principal: Any, connection: RemoteConnection, error: BackendUnavailable
    ) -> None:
        await refused(server, principal, connection, error)
