"""How an HTTP connection to a remote MCP server authenticates itself with OAuth: the `ClientAuth` seam.

::

    from mcp_django.client import ClientCredentials, MCPClient, OAuthClientAuth

    auth = OAuthClientAuth(ClientCredentials("my-client", secret="..."))
    client = MCPClient({"URL": "https://mcp.example/mcp"}, auth=auth)

A connection with an `auth` (`ServerConfig.auth`; `MCPClient(auth=...)`; a `SERVERS` entry's `"AUTH":
{"TYPE": "client_credentials", ...}`) sends `await auth.authorization(server)` as its `Authorization`
header. When the server answers 401, or 403 with `error="insufficient_scope"`, the connection gives the
challenge to `await auth.challenged(server, challenge)` and, if it says a new token is there, sends the
request once more. `OAuthClientAuth` is the implementation on `client.auth.authorization` (Authlib): it
discovers the authorization server from the challenge, registers the client, runs its grant, caches the
token (refreshed when it expires), and steps up on 403 by asking for the union of the scopes it had and
the challenged ones, a bounded number of times. The grants:

- `AuthorizationCode(user_agent)`: code + PKCE S256; `user_agent(url)` takes the person (or a headless
  agent) to the authorization URL and returns the redirect URL the server sent them back to;
- `ClientCredentials(client_id, secret=... | key=ClientKey(pem))`: the client itself (SEP-1046),
  with `client_secret_basic` or `private_key_jwt`;
- `EnterpriseManaged(...)`: a person's ID token from the enterprise IdP exchanged there for an identity
  assertion grant (RFC 8693), then the JWT bearer grant (RFC 7523) at the server's authorization server (SEP-990).

docs/client.md, "Authenticating with OAuth".
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
import weakref
from collections.abc import Callable
from typing import Any, Final, Protocol

from mcp_django.client.auth import authorization
from mcp_django.client.auth.authorization import ClientKey, Discovery, Registration, UpstreamAuthError
from mcp_django.client.config import Challenge, ServerConfig, UpstreamOAuth
from mcp_django.exceptions import BackendUnavailable
from mcp_django.runtime.executor import run_sync

_LEEWAY_S: Final = 30
"""A token this close to expiry is refreshed before it is sent: it could expire on its way."""
DEFAULT_REDIRECT_URI: Final = "http://127.0.0.1/callback"


class Grant(Protocol):
    """How `OAuthClientAuth` gets a token, once the authorization server is known (runs off the event loop)."""

    def token(self, server: ServerConfig, discovery: Discovery, scopes: tuple[str, ...]) -> dict[str, Any]:
        """A token endpoint answer (`access_token`, `expires_at`?, `refresh_token`?) for `scopes` (none: unsaid).

        Raises:
            UpstreamAuthError: a step failed.
        """
        ...

    def registration(self, server: ServerConfig, discovery: Discovery) -> Registration:
        """The client the grant's tokens were issued to (what a refresh authenticates as)."""
        ...


@dataclasses.dataclass
class AuthorizationCode:
    """The authorization code grant with PKCE S256, the person (or agent) driven by `user_agent`.

    `user_agent(url)` gets the authorization URL and returns the URL the authorization server redirected
    back to (`redirect_uri` with `code`, `state`, `iss`); it runs in a worker thread and may block until the
    person is done. The client is `client_id` (with `client_secret`) when pre-registered, else the client ID
    metadata document at `client_metadata_url` where the server takes one, else registered (RFC 7591).
    """

    user_agent: Callable[[str], str]
    redirect_uri: str = DEFAULT_REDIRECT_URI
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    _registrations: dict[str, Registration] = dataclasses.field(default_factory=dict, repr=False)

    def registration(self, server: ServerConfig, discovery: Discovery) -> Registration:
        """This grant's client at `discovery`'s authorization server (one per issuer, never reused at another)."""
        known = self._registrations.get(discovery.issuer)
        if known is None:
            oauth = UpstreamOAuth(self.client_id, self.client_secret, (), self.client_metadata_url)
            known = self._registrations[discovery.issuer] = authorization.register(
                server, discovery, self.redirect_uri, oauth
            )
        return known

    def token(self, server: ServerConfig, discovery: Discovery, scopes: tuple[str, ...]) -> dict[str, Any]:
        """Send the user agent to authorize, check the answer (state, RFC 9207 `iss`), exchange the code."""
        registration = self.registration(server, discovery)
        state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(48)
        url = authorization.authorization_url(
            server, discovery, registration, self.redirect_uri, state, verifier, scopes
        )
        answer = authorization.query_of(self.user_agent(url))
        code = authorization.authorization_code(discovery, answer, state)
        return authorization.exchange_code(
            server,
            discovery.token_endpoint,
            registration,
            code=code,
            redirect_uri=self.redirect_uri,
            verifier=verifier,
            resource=discovery.resource,
        )


@dataclasses.dataclass(frozen=True)
class ClientCredentials:
    """The client credentials grant (SEP-1046): `secret` for `client_secret_basic`, or `key` for `private_key_jwt`."""

    client_id: str
    secret: str | None = None
    key: ClientKey | None = None

    def registration(self, server: ServerConfig, discovery: Discovery) -> Registration:
        """The configured client."""
        return Registration(self.client_id, self.secret, None if self.key else "client_secret_basic")

    def token(self, server: ServerConfig, discovery: Discovery, scopes: tuple[str, ...]) -> dict[str, Any]:
        """A token for the client itself."""
        scope = authorization.scope_for(discovery, scopes, refreshable=False)
        return authorization.client_credentials(
            server, discovery, self.registration(server, discovery), scope, self.key
        )


@dataclasses.dataclass(frozen=True)
class EnterpriseManaged:
    """Enterprise-managed authorization (SEP-990): the IdP's ID token exchanged for an ID-JAG, then a token for it.

    `id_token()` returns the person's current ID token from the enterprise IdP (the site's sign-in keeps
    it); `idp_client_id` is the site's client there. `client_id`/`client_secret` are the site's client at
    the MCP server's authorization server (`client_secret_basic`).
    """

    id_token: Callable[[], str]
    idp_token_endpoint: str
    idp_client_id: str
    client_id: str
    client_secret: str | None = None
    idp_client_secret: str | None = None

    def registration(self, server: ServerConfig, discovery: Discovery) -> Registration:
        """The configured client at the MCP server's authorization server."""
        return Registration(self.client_id, self.client_secret)

    def token(self, server: ServerConfig, discovery: Discovery, scopes: tuple[str, ...]) -> dict[str, Any]:
        """Exchange the ID token at the IdP, then present the ID-JAG at the authorization server."""
        assertion = authorization.identity_assertion(
            server,
            discovery,
            idp_token_endpoint=self.idp_token_endpoint,
            idp_client=Registration(self.idp_client_id, self.idp_client_secret),
            id_token=self.id_token(),
        )
        scope = authorization.scope_for(discovery, scopes, refreshable=False)
        return authorization.jwt_bearer(server, discovery, self.registration(server, discovery), assertion, scope)


class OAuthClientAuth:
    """`ClientAuth` on `client.auth.authorization`: discovery from the challenge, `grant` for tokens, refresh, step-up.

    Args:
        grant: how tokens are got (`AuthorizationCode`, `ClientCredentials`, `EnterpriseManaged`).
        scopes: the scopes to ask for; none: the challenge's, else those the resource metadata lists.
        max_step_ups: how many times one token may be replaced for a 403 `insufficient_scope` (a server
            that never grants enough is not asked forever).

    One object is one cached token: share it between connections that may use the same token.
    """

    def __init__(self, grant: Grant, *, scopes: tuple[str, ...] = (), max_step_ups: int = 2) -> None:
        self.grant = grant
        self.scopes = tuple(scopes)
        self.max_step_ups = max_step_ups
        self._token: dict[str, Any] | None = None
        self._discovery: Discovery | None = None
        self._asked: tuple[str, ...] = ()
        self._step_ups = 0
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def _lock(self) -> asyncio.Lock:
        # One token request at a time per loop: two would spend a rotated refresh token twice.
        return self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())

    async def authorization(self, server: ServerConfig) -> str | None:
        """`Bearer <token>` once there is a token (refreshed first when it is about to expire); else None."""
        async with self._lock():
            token, discovery = self._token, self._discovery
            if token is None or discovery is None:
                return None
            expires_at = token.get("expires_at")
            if isinstance(expires_at, (int, float)) and expires_at - _LEEWAY_S <= time.time():
                self._token = token = await self._run(server, self._refreshed, server, discovery, token)
            return None if token is None else f"Bearer {token['access_token']}"

    async def challenged(self, server: ServerConfig, challenge: Challenge, status: int) -> bool:
        """Get a token the challenge asks for: a first one, a new one after a 401, a wider one after a 403."""
        async with self._lock():
            if status == 403:
                if challenge.error != "insufficient_scope" or self._step_ups >= self.max_step_ups:
                    return False
                wanted = tuple(dict.fromkeys((*self._asked, *challenge.scopes)))
                if set(wanted) <= set(self._asked):
                    return False  # a wider token would not be wider: the server will never be satisfied
                self._step_ups += 1
            else:
                wanted = self.scopes or challenge.scopes
                self._step_ups = 0  # a new token from scratch: its own step-ups are still to come
            self._token = await self._run(server, self._fetch, server, challenge, wanted)
            return True

    async def _run(self, server: ServerConfig, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await run_sync(fn, *args)
        except UpstreamAuthError as error:
            raise BackendUnavailable(server.name, "refused", f"OAuth: {error}") from None

    def _fetch(self, server: ServerConfig, challenge: Challenge, wanted: tuple[str, ...]) -> dict[str, Any]:
        discovery = authorization.discover(server, challenge)
        previous, token = self._discovery, self._token
        if wanted:
            discovery = dataclasses.replace(discovery, scopes=wanted)
        self._discovery, self._asked = discovery, discovery.scopes
        if (
            token is not None
            and previous is not None
            and previous.issuer == discovery.issuer  # a refresh token is never shown to another server
            and set(discovery.scopes) <= set(previous.scopes)
            and isinstance(token.get("refresh_token"), str)
        ):
            refreshed = self._refreshed(server, discovery, token)
            if refreshed is not None:
                return refreshed
        return self.grant.token(server, discovery, discovery.scopes)

    def _refreshed(self, server: ServerConfig, discovery: Discovery, token: dict[str, Any]) -> dict[str, Any] | None:
        refresh_token = token.get("refresh_token")
        if not isinstance(refresh_token, str):
            return None
        registration = self.grant.registration(server, discovery)
        try:
            fresh = authorization.refresh(
                server, discovery.token_endpoint, registration, refresh_token, discovery.resource
            )
        except authorization.RefreshRefused:
            return None  # the next 401 runs the grant again
        if not isinstance(fresh.get("refresh_token"), str):
            fresh["refresh_token"] = refresh_token  # not rotated: the old one stays valid
        return fresh
