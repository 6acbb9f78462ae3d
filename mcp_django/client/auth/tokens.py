"""The token requests of the site as an OAuth client (`client.auth.authorization`), one function per grant.

Authlib makes each request (client authentication `client_secret_basic`, `client_secret_post`, `none` or
`private_key_jwt`), through `auth.http`'s guarded transport.
"""

from __future__ import annotations

import time
from typing import Any, Final

import httpx2

from mcp_django.client.auth.http import (
    ClientKey,
    Discovery,
    RefreshRefused,
    Registration,
    UpstreamAuthError,
    oauth_client,
)
from mcp_django.client.config import ServerConfig

TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"
_ASSERTION_LIFETIME_S: Final = 60


def _token_auth(registration: Registration, discovery: Discovery | None, key: ClientKey | None) -> Any:
    if key is None:
        return registration.method
    from authlib.oauth2.rfc7523 import PrivateKeyJWT

    # SEP-1046: the assertion's audience is the authorization server's issuer.
    audience = discovery.issuer if discovery is not None else None
    # Short-lived (Authlib's default is an hour; servers cap an assertion's lifetime, RFC 7523 §3), made per request.
    claims = {"exp": int(time.time()) + _ASSERTION_LIFETIME_S}
    headers = {"kid": key.key_id} if key.key_id else None
    return PrivateKeyJWT(audience, claims=claims, headers=headers, alg=key.algorithm)


def _token(
    server: ServerConfig,
    registration: Registration,
    call: str,
    url: str,
    *,
    discovery: Discovery | None = None,
    key: ClientKey | None = None,
    bearer: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    from authlib.integrations.base_client import OAuthError

    secret = key.load() if key is not None else registration.client_secret
    method = _token_auth(registration, discovery, key)
    with oauth_client(
        server, client_id=registration.client_id, client_secret=secret, token_endpoint_auth_method=method
    ) as client:
        try:
            token = dict(getattr(client, call)(url, **kwargs))
        except OAuthError as error:
            refused = RefreshRefused if call == "refresh_token" else UpstreamAuthError
            raise refused(f"the authorization server refused: {error.error}") from None
        except (httpx2.HTTPError, ValueError) as error:
            raise UpstreamAuthError(f"the token endpoint failed: {error}") from None
    if not isinstance(token.get("access_token"), str):
        raise UpstreamAuthError("the token endpoint gave no access token")
    if bearer and str(token.get("token_type", "")).lower() != "bearer":
        raise UpstreamAuthError("the token endpoint gave no bearer access token")
    if "expires_at" not in token and isinstance(token.get("expires_in"), int):
        token["expires_at"] = int(time.time()) + token["expires_in"]
    return token


def exchange_code(
    server: ServerConfig,
    token_endpoint: str,
    registration: Registration,
    *,
    code: str,
    redirect_uri: str,
    verifier: str,
    resource: str,
) -> dict[str, Any]:
    """The tokens for an authorization code (with its PKCE verifier): `access_token`, `expires_at`, ...

    Raises:
        UpstreamAuthError: the token endpoint refused or failed.
    """
    return _token(
        server,
        registration,
        "fetch_token",
        token_endpoint,
        grant_type="authorization_code",
        code=code,
        redirect_uri=redirect_uri,
        code_verifier=verifier,
        resource=resource,
    )


def client_credentials(
    server: ServerConfig,
    discovery: Discovery,
    registration: Registration,
    scope: str | None,
    key: ClientKey | None = None,
) -> dict[str, Any]:
    """A token for the client itself (the client credentials grant), with its secret or a `private_key_jwt`.

    Raises:
        UpstreamAuthError: the token endpoint refused or failed.
    """
    return _granted(server, discovery, registration, "client_credentials", scope, key=key, resource=discovery.resource)


def identity_assertion(
    server: ServerConfig,
    discovery: Discovery,
    *,
    idp_token_endpoint: str,
    idp_client: Registration,
    id_token: str,
) -> str:
    """An ID-JAG for `discovery`'s server from the enterprise IdP: RFC 8693 exchange of the user's ID token.

    Raises:
        UpstreamAuthError: the IdP refused or failed.
    """
    token = _token(
        server,
        idp_client,
        "fetch_token",
        idp_token_endpoint,
        bearer=False,
        grant_type=TOKEN_EXCHANGE,
        subject_token=id_token,
        subject_token_type=ID_TOKEN,
        requested_token_type=ID_JAG,
        audience=discovery.issuer,
        resource=discovery.resource,
    )
    if token.get("issued_token_type") != ID_JAG:
        raise UpstreamAuthError("the identity provider did not issue an identity assertion grant (ID-JAG)")
    return str(token["access_token"])


def jwt_bearer(
    server: ServerConfig, discovery: Discovery, registration: Registration, assertion: str, scope: str | None
) -> dict[str, Any]:
    """A token for an identity assertion grant (RFC 7523 JWT bearer) at the authorization server.

    Raises:
        UpstreamAuthError: the token endpoint refused or failed.
    """
    return _granted(server, discovery, registration, JWT_BEARER, scope, assertion=assertion)


def _granted(
    server: ServerConfig,
    discovery: Discovery,
    registration: Registration,
    grant_type: str,
    scope: str | None,
    **params: Any,
) -> dict[str, Any]:
    """A token from `discovery`'s token endpoint for `grant_type`, asking for `scope` when there is one."""
    if scope:
        params["scope"] = scope
    return _token(
        server,
        registration,
        "fetch_token",
        discovery.token_endpoint,
        discovery=discovery,
        grant_type=grant_type,
        **params,
    )


def refresh(
    server: ServerConfig, token_endpoint: str, registration: Registration, refresh_token: str, resource: str
) -> dict[str, Any]:
    """New tokens for a refresh token.

    Raises:
        RefreshRefused: the authorization server refused (the user must connect again).
        UpstreamAuthError: it could not be reached or broke the protocol.
    """
    return _token(server, registration, "refresh_token", token_endpoint, refresh_token=refresh_token, resource=resource)
