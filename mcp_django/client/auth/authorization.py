"""The site as an OAuth client of a remote MCP server's authorization server, on Authlib's httpx2 client.

One implementation serves both uses: each user connecting their account to a server with
`"AUTH": "oauth"` (`gateway.upstream`, docs/federation.md), and a connection that answers a 401 itself
(`client.auth.oauth`, docs/client.md). What it takes:

1. **discovery**: the server's 401 names its RFC 9728 metadata (`WWW-Authenticate: Bearer
   resource_metadata="…"`; else the well-known URLs are tried), which names the authorization server,
   whose RFC 8414 metadata (or OpenID configuration) gives the endpoints; the metadata's `issuer` must be
   exactly the one it was looked up for, and the resource exactly the server's;
2. **registration**: a configured client id, else the client ID metadata document URL where the
   authorization server takes one, else RFC 7591 dynamic registration (kept in the cache per issuer);
3. **a grant**: authorization code + PKCE S256 (the RFC 9207 `iss` of the answer checked), client
   credentials, or an enterprise identity assertion (RFC 8693 exchange at the IdP, then RFC 7523), with the
   resource metadata's `resource` as the RFC 8707 `resource`;
4. **refresh** when the access token expired.

Every request goes through `auth.http`'s guarded transport (checked URLs, pinned addresses, bounded
answers); the token requests are `auth.tokens`'.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import httpx2

from mcp_django.client.auth.http import (
    LOCAL_HOSTS,
    AnswerTooLarge,
    ClientKey,
    Discovery,
    RefreshRefused,
    Registration,
    UpstreamAuthError,
    check_url,
    first_document,
    json_object,
    oauth_client,
    origin,
)
from mcp_django.client.auth.tokens import (
    client_credentials,
    exchange_code,
    identity_assertion,
    jwt_bearer,
    refresh,
)
from mcp_django.client.config import Challenge, ServerConfig, UpstreamOAuth
from mcp_django.client.negotiation import CLIENT_INFO
from mcp_django.protocol.versions import LATEST_HANDSHAKE_VERSION

__all__ = [
    "AnswerTooLarge",
    "Challenge",
    "ClientKey",
    "Discovery",
    "RefreshRefused",
    "Registration",
    "UpstreamAuthError",
    "authorization_code",
    "authorization_url",
    "check_url",
    "client_credentials",
    "discover",
    "discovery_of",
    "exchange_code",
    "identity_assertion",
    "jwt_bearer",
    "query_of",
    "refresh",
    "register",
    "scope_for",
]

_SECRET_METHODS: Final = ("client_secret_basic", "client_secret_post")


def discovery_of(fields: Mapping[str, Any]) -> Discovery:
    """A `Discovery` from `dataclasses.asdict` of one, after a JSON round trip (lists back to tuples)."""
    known = {field.name for field in dataclasses.fields(Discovery)}
    values: dict[str, Any] = {
        key: tuple(value) if isinstance(value, list) else value for key, value in fields.items() if key in known
    }
    return Discovery(**values)


def _well_known(url: str, name: str) -> list[str]:
    """RFC 8615 locations for `url`: the path after the well-known name, then at the root."""
    parts = urlsplit(url)
    root = f"{parts.scheme}://{parts.netloc}/.well-known/{name}"
    path = parts.path.rstrip("/")
    return [f"{root}{path}", root] if path else [root]


def _metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in MCP's order: RFC 8414 and OpenID Connect, path inserted, then appended."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _covers(resource: str, url: str) -> bool:
    """Whether the protected resource `resource` is the server at `url`: its origin, and its path or a parent of it."""
    if origin(resource) != origin(url):
        return False
    path, under = urlsplit(resource).path.rstrip("/"), urlsplit(url).path.rstrip("/")
    return under == path or under.startswith(f"{path}/")


def challenge_of(server: ServerConfig) -> Challenge:
    """Ask `server` unauthenticated (an `initialize`) and return its 401's challenge (empty if it has none)."""
    assert server.url is not None
    probe = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }
    headers = {"Accept": "application/json, text/event-stream", **dict(server.headers)}
    with oauth_client(server) as client:
        try:
            answer = client.request("POST", server.url, json=probe, headers=headers, withhold_token=True)
        except httpx2.HTTPError as error:
            raise UpstreamAuthError(f"the server cannot be reached: {error}") from None
    return Challenge.parse(answer.headers.get("www-authenticate", "") if answer.status_code == 401 else "")


def discover(server: ServerConfig, challenge: Challenge | None = None) -> Discovery:
    """Find the authorization server of `server` and what it supports (RFC 9728, then RFC 8414).

    Args:
        server: the remote server.
        challenge: its 401's challenge, when a connection has one; None asks the server first.

    Raises:
        UpstreamAuthError: a step failed; the message says which.
    """
    assert server.url is not None
    if challenge is None:
        challenge = challenge_of(server)
    with oauth_client(server) as client:
        metadata_urls = _well_known(server.url, "oauth-protected-resource")
        if challenge.resource_metadata:
            metadata_urls = [challenge.resource_metadata]
        resource_metadata = first_document(client, metadata_urls, "protected resource metadata")
        resource = resource_metadata.get("resource")
        if not isinstance(resource, str) or not _covers(resource, server.url):
            raise UpstreamAuthError(f"the metadata is for resource {resource!r}, not {server.url!r}")
        servers = resource_metadata.get("authorization_servers")
        if not (isinstance(servers, list) and servers and isinstance(servers[0], str)):
            raise UpstreamAuthError("the protected resource metadata names no authorization server")
        issuer = servers[0]
        metadata = first_document(client, _metadata_urls(issuer), "authorization server metadata")
    scopes = challenge.scopes or _words(resource_metadata.get("scopes_supported"))
    return _discovery(metadata, issuer, resource, scopes)


def _words(value: Any) -> tuple[str, ...]:
    return tuple(word for word in value if isinstance(word, str)) if isinstance(value, list) else ()


def _discovery(metadata: Mapping[str, Any], issuer: str, resource: str, scopes: tuple[str, ...]) -> Discovery:
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

    checked = AuthorizationServerMetadata(metadata)
    try:  # Authlib's checks of the fields the flow uses (not the https rule: a loopback test server has none)
        checked.validate_response_types_supported()
        checked.validate_grant_types_supported()
        checked.validate_code_challenge_methods_supported()
    except ValueError as error:
        raise UpstreamAuthError(f"authorization server metadata: {error}") from None
    if metadata.get("issuer") != issuer:  # exactly: a mix-up attack would hand over another's metadata
        raise UpstreamAuthError(f"the authorization server metadata is for {metadata.get('issuer')!r}, not {issuer!r}")
    endpoints = [metadata.get(key) for key in ("authorization_endpoint", "token_endpoint")]
    if not (isinstance(endpoints[1], str) and endpoints[1].startswith(("https://", "http://"))):
        raise UpstreamAuthError("the authorization server metadata lacks its token endpoint")
    registration = metadata.get("registration_endpoint")
    return Discovery(
        resource=resource,
        issuer=issuer,
        authorization_endpoint=str(endpoints[0] or ""),
        token_endpoint=str(endpoints[1]),
        registration_endpoint=registration if isinstance(registration, str) else None,
        scopes=scopes,
        iss_supported=metadata.get("authorization_response_iss_parameter_supported") is True,
        auth_methods=_words(metadata.get("token_endpoint_auth_methods_supported")) or ("client_secret_basic",),
        cimd_supported=metadata.get("client_id_metadata_document_supported") is True,
        server_scopes=_words(metadata.get("scopes_supported")),
        pkce="S256" in _words(metadata.get("code_challenge_methods_supported")),
    )


def _secret_method(discovery: Discovery) -> str:
    """How a client with a secret authenticates where `discovery`'s server says what it takes: basic first."""
    return next((method for method in _SECRET_METHODS if method in discovery.auth_methods), "client_secret_basic")


def register(
    server: ServerConfig, discovery: Discovery, redirect_uri: str, oauth: UpstreamOAuth | None = None
) -> Registration:
    """The site's client at the authorization server: configured, a metadata document URL, or registered.

    In that order: `oauth`'s `client_id` (and secret); its `client_metadata_url` where the authorization
    server takes client ID metadata documents; else RFC 7591 registration, cached per issuer and redirect URI.

    Raises:
        UpstreamAuthError: no client id configured and no way to register, or registration failed.
    """
    from django.core.cache import cache

    oauth = oauth or server.oauth or UpstreamOAuth()
    if oauth.client_id:
        method = _secret_method(discovery) if oauth.client_secret else "none"
        return Registration(oauth.client_id, oauth.client_secret, method)
    if oauth.client_metadata_url and discovery.cimd_supported:
        return Registration(oauth.client_metadata_url, None, "none")
    if discovery.registration_endpoint is None:
        raise UpstreamAuthError("the authorization server has no registration endpoint: set AUTH's CLIENT_ID")
    key = "mcp_django.upstream.client." + hashlib.sha256(f"{discovery.issuer} {redirect_uri}".encode()).hexdigest()
    cached = cache.get(key)
    if isinstance(cached, Registration):
        return cached
    wanted = "none" if "none" in discovery.auth_methods else _secret_method(discovery)
    local = (urlsplit(redirect_uri).hostname or "") in LOCAL_HOSTS
    request = {
        "client_name": f"{CLIENT_INFO['name']} ({server.name})",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": "native" if local else "web",  # SEP-837: a loopback redirect is a native app's
    }
    with oauth_client(server) as client:
        try:
            answer = client.request("POST", discovery.registration_endpoint, json=request, withhold_token=True)
        except httpx2.HTTPError as error:
            raise UpstreamAuthError(f"registration failed: {error}") from None
    document = json_object(answer, "the registration", (200, 201))
    client_id, secret = document.get("client_id"), document.get("client_secret")
    if not isinstance(client_id, str) or not client_id:
        raise UpstreamAuthError("the registration gave no client_id")
    secret = secret if isinstance(secret, str) and secret else None
    answered = document.get("token_endpoint_auth_method")
    taken = answered if isinstance(answered, str) and answered in ("none", *_SECRET_METHODS) else None
    registration = Registration(client_id, secret, taken or (_secret_method(discovery) if secret else "none"))
    cache.set(key, registration, None)
    return registration


def scope_for(discovery: Discovery, configured: tuple[str, ...] = (), *, refreshable: bool = True) -> str | None:
    """The `scope` to ask for: the configured scopes, else the discovered ones; None leaves it out.

    With `refreshable`, `offline_access` is added where the authorization server lists it (SEP-2207),
    never where it does not.
    """
    scopes = list(configured or discovery.scopes)
    if refreshable and scopes and "offline_access" in discovery.server_scopes and "offline_access" not in scopes:
        scopes.append("offline_access")
    return " ".join(scopes) or None


def authorization_url(
    server: ServerConfig,
    discovery: Discovery,
    registration: Registration,
    redirect_uri: str,
    state: str,
    verifier: str,
    scopes: tuple[str, ...] | None = None,
) -> str:
    """Where to send the user's browser: the authorization endpoint with PKCE S256 and the resource.

    `scopes` are asked for (with `offline_access` where listed); None: the entry's `SCOPES`, else the discovered.

    Raises:
        UpstreamAuthError: the authorization server has no authorization endpoint or no PKCE S256.
    """
    if not discovery.pkce:
        raise UpstreamAuthError("the authorization server does not support PKCE with S256")
    if not discovery.authorization_endpoint.startswith(("https://", "http://")):
        raise UpstreamAuthError("the authorization server metadata lacks its authorization endpoint")
    if scopes is None:
        scopes = server.oauth.scopes if server.oauth is not None else ()
    with oauth_client(
        server,
        client_id=registration.client_id,
        redirect_uri=redirect_uri,
        scope=scope_for(discovery, scopes),
        code_challenge_method="S256",
    ) as client:
        url, _state = client.create_authorization_url(
            discovery.authorization_endpoint, state=state, code_verifier=verifier, resource=discovery.resource
        )
    return str(url)


def authorization_code(discovery: Discovery, answer: Mapping[str, Any], state: str) -> str:
    """The code of an authorization response (its query parameters), after RFC 6749 and RFC 9207's checks.

    The `state` must be the one sent; an `iss` must be exactly the issuer (no normalisation), and must be
    there when the authorization server says it sends one: else it could be another server's answer.

    Raises:
        UpstreamAuthError: an error answer, or one that fails a check.
    """
    if answer.get("state") != state:
        raise UpstreamAuthError("the answer is not for this authorization request (state)")
    if answer.get("error"):
        raise UpstreamAuthError(f"the authorization server refused: {str(answer['error'])[:200]}")
    if "iss" in answer and answer["iss"] != discovery.issuer:
        raise UpstreamAuthError("the answer came from another authorization server (iss)")
    if "iss" not in answer and discovery.iss_supported:
        raise UpstreamAuthError("the answer lacks the iss its authorization server promises")
    code = answer.get("code")
    if not isinstance(code, str) or not code:
        raise UpstreamAuthError("the answer carries no code")
    return code


def query_of(url: str) -> dict[str, str]:
    """The query parameters of a redirect URL, one value each."""
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
