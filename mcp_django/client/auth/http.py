"""The HTTP side of the site as an OAuth client (`client.auth.authorization`): what it keeps, and how it fetches.

Every request goes through one transport: no redirects, no proxies from the environment; a URL that is
not on the configured server's own origin must be https and resolve only to public addresses (the rules
the client ID metadata fetcher applies, `mcp_django.oauth.cimd`; with `REMOTE_OAUTH_ALLOW_LOOPBACK`, a
server on a loopback name may use loopback ones, for development); the connection goes to the address
that was checked, so a name cannot resolve to another one between the check and the connect. An answer
is read as it streams and cut past `REMOTE_OAUTH_MAX_BYTES`; compressed answers are not accepted.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import urlsplit

import httpx2

from mcp_django.client.conf import client_settings
from mcp_django.client.config import ServerConfig

LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})


class UpstreamAuthError(Exception):
    """The remote server or its authorization server cannot be used to connect (shown on the connect page)."""


class AnswerTooLarge(UpstreamAuthError):
    """An answer of the authorization server (or metadata host) was cut: too large, or compressed."""


class RefreshRefused(UpstreamAuthError):
    """The authorization server refused to refresh the token: the user has to connect again."""


@dataclasses.dataclass(frozen=True)
class Discovery:
    """What the remote server and its authorization server said about themselves.

    `scopes` are the ones to ask for, as MCP says: the challenge's, else all the resource metadata lists
    (none: the scope is left out).
    """

    resource: str
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    scopes: tuple[str, ...]
    iss_supported: bool = False
    auth_methods: tuple[str, ...] = ()
    cimd_supported: bool = False
    server_scopes: tuple[str, ...] = ()
    """The authorization server's own `scopes_supported` (where `offline_access` is looked for)."""
    pkce: bool = True
    """Whether it speaks PKCE with S256 (the code flow needs it)."""


@dataclasses.dataclass(frozen=True)
class Registration:
    """The site's client at the authorization server, and how it authenticates at the token endpoint."""

    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None
    """`client_secret_basic`, `client_secret_post` or `none`; None: basic with a secret, else none."""

    @property
    def method(self) -> str:
        """The token endpoint authentication method to use."""
        return self.auth_method or ("client_secret_basic" if self.client_secret else "none")


@dataclasses.dataclass(frozen=True)
class ClientKey:
    """A private key the client signs its `private_key_jwt` assertions with (PEM, the JWS algorithm, its `kid`)."""

    pem: str
    algorithm: str = "ES256"
    key_id: str | None = None
    """The `kid` the assertions name, where the authorization server holds more than one of the client's keys."""

    def load(self) -> Any:
        """The key as the JOSE library's key object of the algorithm's family (Authlib would assume RSA).

        Raises:
            UpstreamAuthError: the PEM is not a private key of that family.
        """
        from joserfc.errors import JoseError
        from joserfc.jwk import ECKey, OKPKey, RSAKey

        family: Any = {"ES": ECKey, "RS": RSAKey, "PS": RSAKey, "Ed": OKPKey}.get(self.algorithm[:2], RSAKey)
        try:
            return family.import_key(self.pem)
        except (ValueError, JoseError) as error:
            raise UpstreamAuthError(f"the private key is not a {self.algorithm} key: {error}") from None


class NonPublicAddress(Exception):
    """A host the site must not connect to: it does not resolve, or resolves to an address that is not public."""


def public_addresses(hostname: str, port: int, *, loopback: bool = False, private: bool = False) -> list[str]:
    """Every address `hostname` resolves to, sorted, when all of them are public (global unicast).

    Connect to one of these, not to the name again, so that it cannot resolve elsewhere in between.
    `loopback` also lets loopback addresses through, `private` every address (a host the administrator
    named for development). The site's outbound fetches share it: the OAuth client's here, the webhook
    deliveries of `mcp_django.events`.

    Raises:
        NonPublicAddress: it does not resolve, or one of its addresses is not allowed.
    """
    try:
        infos = socket.getaddrinfo(hostname, port)
    except OSError as error:
        raise NonPublicAddress(f"{hostname!r} does not resolve: {error}") from None
    addresses = sorted({str(info[4][0]).partition("%")[0] for info in infos})
    for address in addresses:
        ip = ipaddress.ip_address(address)
        if not (private or ip.is_global or (loopback and ip.is_loopback)):
            raise NonPublicAddress(f"{hostname!r} resolves to a non-public address")
    return addresses


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def check_url(url: str, server: ServerConfig) -> str | None:
    """Refuse a URL the site must not fetch for `server`: the address to connect to, None for the server's origin.

    Raises:
        UpstreamAuthError: the URL is not acceptable.
    """
    assert server.url is not None
    if origin(url) == origin(server.url):
        return None  # the administrator named this origin in SERVERS
    parts = urlsplit(url)
    # Development and tests: a server on a loopback name may use a local authorization server, if allowed.
    local = bool(client_settings.REMOTE_OAUTH_ALLOW_LOOPBACK) and origin(server.url)[1] in LOCAL_HOSTS
    if not parts.hostname or not (parts.scheme == "https" or (local and parts.scheme == "http")):
        raise UpstreamAuthError(f"{url!r} is neither on the server's origin nor an https URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return public_addresses(parts.hostname, port, loopback=local)[0]
    except NonPublicAddress as error:
        raise UpstreamAuthError(str(error)) from None


class _Bounded(httpx2.SyncByteStream):
    """A response body read as it streams, refused once past `limit` bytes."""

    def __init__(self, stream: Any, limit: int, url: str) -> None:
        self._stream, self._limit, self._url = stream, limit, url

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        for part in self._stream:
            size += len(part)
            if size > self._limit:
                raise AnswerTooLarge(f"the answer of {self._url} is over {self._limit} bytes (REMOTE_OAUTH_MAX_BYTES)")
            yield part

    def close(self) -> None:
        self._stream.close()


class _GuardedTransport(httpx2.HTTPTransport):
    """Every OAuth request: its URL checked, its connection pinned to the checked address, its answer bounded."""

    def __init__(self, server: ServerConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._server = server

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        url = str(request.url)
        address = check_url(url, self._server)
        if address is not None:
            # Connect to the address that passed the check (Host and TLS SNI keep the name): no second lookup.
            request.extensions = {**request.extensions, "sni_hostname": request.url.host}
            request.url = request.url.copy_with(host=address)
        response = super().handle_request(request)
        if response.headers.get("content-encoding", "identity").lower() != "identity":
            response.close()
            raise AnswerTooLarge(f"the answer of {url} is compressed ({response.headers['content-encoding']})")
        limit = int(client_settings.REMOTE_OAUTH_MAX_BYTES)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            response.close()
            raise AnswerTooLarge(f"the answer of {url} is over {limit} bytes (REMOTE_OAUTH_MAX_BYTES)")
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_Bounded(response.stream, limit, url),
            extensions=response.extensions,
        )


def oauth_client(server: ServerConfig, **kwargs: Any) -> Any:
    """Authlib's OAuth 2 client on httpx2, every request through `_GuardedTransport`."""
    from authlib.integrations.httpx_client import OAuth2Client

    return OAuth2Client(
        timeout=httpx2.Timeout(server.read_timeout, connect=server.connect_timeout),
        follow_redirects=False,
        trust_env=False,
        headers={"Accept-Encoding": "identity"},
        transport=_GuardedTransport(server),
        **kwargs,
    )


def json_object(response: httpx2.Response, what: str, statuses: tuple[int, ...] = (200,)) -> dict[str, Any]:
    if response.status_code not in statuses:
        raise UpstreamAuthError(f"{what}: HTTP {response.status_code}")
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise UpstreamAuthError(f"{what} is not a JSON object")
    return document


def first_document(client: Any, urls: list[str], what: str) -> dict[str, Any]:
    problem = f"no {what} found"
    for url in urls:
        try:
            return json_object(
                client.request("GET", url, headers={"Accept": "application/json"}, withhold_token=True),
                f"{what} at {url}",
            )
        except httpx2.HTTPError as error:
            problem = str(error)
        except AnswerTooLarge:
            raise
        except UpstreamAuthError as error:
            problem = str(error)
    raise UpstreamAuthError(problem)
