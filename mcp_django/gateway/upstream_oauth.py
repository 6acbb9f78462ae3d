"""The site as an OAuth client of a remote MCP server's authorization server, on Authlib's httpx2 client.

What connecting one user to a server with `"AUTH": "oauth"` takes (docs/federation.md):

1. **discovery**: the server's 401 names its RFC 9728 metadata (`WWW-Authenticate: Bearer
   resource_metadata="…"`; else the well-known URLs are tried), which names the authorization server,
   whose RFC 8414 metadata (or OpenID configuration) gives the endpoints; the server must speak PKCE S256;
2. **registration**: the entry's `CLIENT_ID`, else RFC 7591 dynamic registration (kept in the cache);
3. **authorization code + PKCE S256**, with the server's URL as the RFC 8707 `resource`;
4. **refresh** when the access token expired (`gateway.upstream`).

Every request goes through one guard: no redirects, no proxies from the environment, and a URL that is
not on the configured server's own origin must be https and resolve only to public addresses (the rules
the client ID metadata fetcher applies to documents from outside, `mcp_django.oauth.cimd`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import re
import socket
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import httpx2

from mcp_django.gateway.remote import CLIENT_INFO, RemoteServer
from mcp_django.protocol.versions import LATEST_HANDSHAKE_VERSION

_RESOURCE_METADATA: Final = re.compile(r'resource_metadata\s*=\s*"([^"]+)"')
_SCOPE: Final = re.compile(r'(?<![\w-])scope\s*=\s*"([^"]*)"')
_MAX_DOCUMENT_BYTES: Final = 64 * 1024


class UpstreamAuthError(Exception):
    """The remote server or its authorization server cannot be used to connect (shown on the connect page)."""


class RefreshRefused(UpstreamAuthError):
    """The authorization server refused to refresh the token: the user has to connect again."""


@dataclasses.dataclass(frozen=True)
class Discovery:
    """What the remote server and its authorization server said about themselves."""

    resource: str
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    scopes: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Registration:
    """The site's client at the authorization server."""

    client_id: str
    client_secret: str | None = None


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def check_url(url: str, server: RemoteServer) -> None:
    """Refuse a URL the site must not fetch for `server`: see the module docstring.

    Raises:
        UpstreamAuthError: the URL is not acceptable.
    """
    assert server.url is not None
    if _origin(url) == _origin(server.url):
        return  # the administrator named this origin in SERVERS
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise UpstreamAuthError(f"{url!r} is neither on the server's origin nor an https URL")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or 443)}
    except OSError as error:
        raise UpstreamAuthError(f"{parts.hostname!r} does not resolve: {error}") from None
    for address in addresses:
        if not ipaddress.ip_address(str(address).partition("%")[0]).is_global:
            raise UpstreamAuthError(f"{parts.hostname!r} resolves to a non-public address")


def _client(server: RemoteServer, **kwargs: Any) -> Any:
    """Authlib's OAuth 2 client on httpx2, every request passing `check_url` first."""
    from authlib.integrations.httpx_client import OAuth2Client

    def guard(request: httpx2.Request) -> None:
        check_url(str(request.url), server)

    return OAuth2Client(
        timeout=httpx2.Timeout(server.read_timeout, connect=server.connect_timeout),
        follow_redirects=False,
        trust_env=False,
        event_hooks={"request": [guard]},
        **kwargs,
    )


def _json_object(response: httpx2.Response, what: str) -> dict[str, Any]:
    if response.status_code != 200 or len(response.content) > _MAX_DOCUMENT_BYTES:
        raise UpstreamAuthError(f"{what}: HTTP {response.status_code}")
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise UpstreamAuthError(f"{what} is not a JSON object")
    return document


def _first_document(client: Any, urls: list[str], what: str) -> dict[str, Any]:
    problem = f"no {what} found"
    for url in urls:
        try:
            return _json_object(
                client.request("GET", url, headers={"Accept": "application/json"}, withhold_token=True),
                f"{what} at {url}",
            )
        except (UpstreamAuthError, httpx2.HTTPError) as error:
            problem = str(error)
    raise UpstreamAuthError(problem)


def _well_known(url: str, name: str) -> list[str]:
    """RFC 8615 locations for `url`: the path after the well-known name, then at the root."""
    parts = urlsplit(url)
    root = f"{parts.scheme}://{parts.netloc}/.well-known/{name}"
    path = parts.path.rstrip("/")
    return [f"{root}{path}", root] if path else [root]


def _same_resource(left: str, right: str) -> bool:
    return left.rstrip("/") == right.rstrip("/")


def discover(server: RemoteServer) -> Discovery:
    """Find the authorization server of `server` and what it supports (RFC 9728, then RFC 8414).

    Raises:
        UpstreamAuthError: a step failed; the message says which.
    """
    assert server.url is not None
    with _client(server) as client:
        metadata_urls = _well_known(server.url, "oauth-protected-resource")
        probe = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
        headers = {"Accept": "application/json, text/event-stream", **dict(server.headers)}
        try:
            answer = client.request("POST", server.url, json=probe, headers=headers, withhold_token=True)
        except httpx2.HTTPError as error:
            raise UpstreamAuthError(f"the server cannot be reached: {error}") from None
        challenge = answer.headers.get("www-authenticate", "") if answer.status_code == 401 else ""
        named, asked = _RESOURCE_METADATA.search(challenge), _SCOPE.search(challenge)
        if named:
            metadata_urls = [named.group(1)]
        resource_metadata = _first_document(client, metadata_urls, "protected resource metadata")
        resource = resource_metadata.get("resource")
        if not isinstance(resource, str) or not _same_resource(resource, server.url):
            raise UpstreamAuthError(f"the metadata is for resource {resource!r}, not {server.url!r}")
        servers = resource_metadata.get("authorization_servers")
        if not (isinstance(servers, list) and servers and isinstance(servers[0], str)):
            raise UpstreamAuthError("the protected resource metadata names no authorization server")
        issuer = servers[0]
        urls = [*_well_known(issuer, "oauth-authorization-server"), *_well_known(issuer, "openid-configuration")]
        metadata = _first_document(client, urls, "authorization server metadata")
    # The scopes to ask for, as MCP says: those of the challenge, else all the resource metadata lists.
    scopes = asked.group(1).split() if asked else resource_metadata.get("scopes_supported")
    return _discovery(metadata, issuer, resource, scopes)


def _discovery(metadata: Mapping[str, Any], issuer: str, resource: str, scopes: Any) -> Discovery:
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

    checked = AuthorizationServerMetadata(metadata)
    try:  # Authlib's checks of the fields the flow uses (not the https rule: a loopback test server has none)
        checked.validate_response_types_supported()
        checked.validate_grant_types_supported()
        checked.validate_code_challenge_methods_supported()
    except ValueError as error:
        raise UpstreamAuthError(f"authorization server metadata: {error}") from None
    if metadata.get("issuer") != issuer:
        raise UpstreamAuthError(f"the authorization server metadata is for {metadata.get('issuer')!r}, not {issuer!r}")
    if "S256" not in (metadata.get("code_challenge_methods_supported") or ()):
        raise UpstreamAuthError("the authorization server does not support PKCE with S256")
    endpoints = [metadata.get(key) for key in ("authorization_endpoint", "token_endpoint")]
    if not all(isinstance(url, str) and url.startswith(("https://", "http://")) for url in endpoints):
        raise UpstreamAuthError("the authorization server metadata lacks its endpoints")
    registration = metadata.get("registration_endpoint")
    supported = scopes if isinstance(scopes, list) else metadata.get("scopes_supported")
    return Discovery(
        resource=resource,
        issuer=issuer,
        authorization_endpoint=str(endpoints[0]),
        token_endpoint=str(endpoints[1]),
        registration_endpoint=registration if isinstance(registration, str) else None,
        scopes=tuple(scope for scope in supported or () if isinstance(scope, str)),
    )


def register(server: RemoteServer, discovery: Discovery, redirect_uri: str) -> Registration:
    """The site's client at the authorization server: the configured one, else registered (RFC 7591) and cached.

    Raises:
        UpstreamAuthError: no client id configured and no registration endpoint, or registration failed.
    """
    from django.core.cache import cache

    assert server.oauth is not None
    if server.oauth.client_id:
        return Registration(server.oauth.client_id, server.oauth.client_secret)
    if discovery.registration_endpoint is None:
        raise UpstreamAuthError("the authorization server has no registration endpoint: set AUTH's CLIENT_ID")
    key = "mcp_django.upstream.client." + hashlib.sha256(f"{discovery.issuer} {redirect_uri}".encode()).hexdigest()
    cached = cache.get(key)
    if isinstance(cached, Registration):
        return cached
    request = {
        "client_name": f"{CLIENT_INFO['name']} ({server.name})",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    with _client(server) as client:
        try:
            answer = client.request("POST", discovery.registration_endpoint, json=request, withhold_token=True)
        except httpx2.HTTPError as error:
            raise UpstreamAuthError(f"registration failed: {error}") from None
    if answer.status_code not in (200, 201):
        raise UpstreamAuthError(f"registration refused: HTTP {answer.status_code}")
    answer.status_code = 200
    document = _json_object(answer, "the registration")
    client_id, secret = document.get("client_id"), document.get("client_secret")
    if not isinstance(client_id, str) or not client_id:
        raise UpstreamAuthError("the registration gave no client_id")
    registration = Registration(client_id, secret if isinstance(secret, str) and secret else None)
    cache.set(key, registration, None)
    return registration


def _scope(server: RemoteServer, discovery: Discovery) -> str | None:
    assert server.oauth is not None
    scopes = server.oauth.scopes or discovery.scopes
    return " ".join(scopes) or None


def authorization_url(
    server: RemoteServer, discovery: Discovery, registration: Registration, redirect_uri: str, state: str, verifier: str
) -> str:
    """Where to send the user's browser: the authorization endpoint with PKCE S256 and the resource."""
    with _client(
        server,
        client_id=registration.client_id,
        redirect_uri=redirect_uri,
        scope=_scope(server, discovery),
        code_challenge_method="S256",
    ) as client:
        url, _state = client.create_authorization_url(
            discovery.authorization_endpoint, state=state, code_verifier=verifier, resource=discovery.resource
        )
    return str(url)


def _token(server: RemoteServer, registration: Registration, call: str, url: str, **kwargs: Any) -> dict[str, Any]:
    from authlib.integrations.base_client import OAuthError

    with _client(server, client_id=registration.client_id, client_secret=registration.client_secret) as client:
        try:
            token = dict(getattr(client, call)(url, **kwargs))
        except OAuthError as error:
            refused = RefreshRefused if call == "refresh_token" else UpstreamAuthError
            raise refused(f"the authorization server refused: {error.error}") from None
        except (httpx2.HTTPError, ValueError) as error:
            raise UpstreamAuthError(f"the token endpoint failed: {error}") from None
    if not isinstance(token.get("access_token"), str) or str(token.get("token_type", "")).lower() != "bearer":
        raise UpstreamAuthError("the token endpoint gave no bearer access token")
    return token


def exchange_code(
    server: RemoteServer,
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


def refresh(
    server: RemoteServer, token_endpoint: str, registration: Registration, refresh_token: str, resource: str
) -> dict[str, Any]:
    """New tokens for a refresh token.

    Raises:
        RefreshRefused: the authorization server refused (the user must connect again).
        UpstreamAuthError: it could not be reached or broke the protocol.
    """
    return _token(server, registration, "refresh_token", token_endpoint, refresh_token=refresh_token, resource=resource)
