"""The remote MCP connection: one pooled client connection per remote server, over Streamable HTTP or stdio.

::

    from mcp_django.client.connection import connect, remote_server

    server = remote_server("github")            # an entry of MCP_DJANGO["SERVERS"], a dict, or a RemoteServer
    connection = connect(server)                # pooled: the same object for the same server on this loop
    result = await connection.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})

`request` returns the result dict, raises `RemoteError` (the server's JSON-RPC error, unchanged) or
`BackendUnavailable` (down, timed out, refused the gateway, broke the protocol). The connection opens
on first use in the newest era the server speaks, re-opens when the server forgot the session, and
`add_listener` receives the server's notifications. Only the gateway's own credentials (`HEADERS`,
`TOKEN` from settings) are ever sent, or, for an entry with `AUTH`, a caller's own token for the server
(`gateway.upstream` pools one connection per caller's token). docs/gateway.md.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.client.conf import client_settings
from mcp_django.client.config import ClientAuth
from mcp_django.client.http import HTTPConnection
from mcp_django.client.remote import (
    CLIENT_INFO,
    BackendUnavailable,
    NotForwardable,
    NotificationListener,
    RemoteConnection,
    RemoteError,
    RemoteServer,
    SessionExpired,
    UpstreamOAuth,
)
from mcp_django.client.stdio import StdioConnection

__all__ = [
    "CLIENT_INFO",
    "CONFIG_KEYS",
    "POLICY_KEYS",
    "SERVER_KEYS",
    "BackendUnavailable",
    "ClientAuth",
    "ConnectionPool",
    "NotForwardable",
    "NotificationListener",
    "RemoteConnection",
    "RemoteError",
    "RemoteServer",
    "SessionExpired",
    "UpstreamOAuth",
    "config_problems",
    "connect",
    "oauth_of",
    "pool",
    "remote_server",
]

CONFIG_KEYS: Final = frozenset(
    {"URL", "HEADERS", "TOKEN", "COMMAND", "ENV", "CWD", "CONNECT_TIMEOUT", "READ_TIMEOUT", "PROTOCOL_VERSION", "AUTH"}
)
"""The connection's keys of one `MCP_DJANGO["SERVERS"]` entry (or of a `backend=` dict)."""


def sends_own_authorization(config: Mapping[str, Any]) -> bool:
    """Whether a server entry carries an `Authorization` of its own: a `TOKEN`, or such a header in `HEADERS`."""
    headers = config.get("HEADERS") or {}
    return bool(config.get("TOKEN")) or (
        isinstance(headers, Mapping) and "authorization" in {str(key).lower() for key in headers}
    )


OAUTH_KEYS: Final = frozenset({"TYPE", "CLIENT_ID", "CLIENT_SECRET", "SCOPES"})
"""The keys of an `AUTH` dict (`{"TYPE": "oauth", ...}`); `"AUTH": "oauth"` is `{"TYPE": "oauth"}`."""
CLIENT_CREDENTIALS_KEYS: Final = frozenset(
    {"TYPE", "CLIENT_ID", "CLIENT_SECRET", "PRIVATE_KEY", "SIGNING_ALGORITHM", "SCOPES"}
)
"""The keys of an `AUTH` dict with `"TYPE": "client_credentials"`: the site's own client at the remote's server."""
SIGNING_ALGORITHMS: Final = frozenset({"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "EdDSA"})
_client_auths: dict[tuple[str, str], ClientAuth] = {}
POLICY_KEYS: Final = frozenset({"FAIL_OPEN", "TIMEOUT"})
"""The other keys of a `SERVERS` entry: how an interceptor chain treats the server (`interceptor_servers`)."""
SERVER_KEYS: Final = CONFIG_KEYS | POLICY_KEYS
"""Every key a `SERVERS` entry may have."""


def config_problems(config: Any) -> list[str]:
    """What is wrong with one backend configuration dict, in words a system check can show (empty if fine)."""
    if not isinstance(config, Mapping):
        return ["must be a dict with URL or COMMAND"]
    problems = [f"unknown key {key!r}" for key in config if key not in CONFIG_KEYS]
    url, command = config.get("URL"), config.get("COMMAND")
    if bool(url) == bool(command):
        problems.append("needs exactly one of URL and COMMAND")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        problems.append("URL must be an http:// or https:// URL")
    if command is not None and not (
        isinstance(command, (list, tuple)) and command and all(isinstance(part, str) for part in command)
    ):
        problems.append("COMMAND must be a non-empty list of strings")
    for key in ("HEADERS", "ENV"):
        value = config.get(key, {})
        if not (isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())):
            problems.append(f"{key} must be a dict of strings")
    for key in ("CONNECT_TIMEOUT", "READ_TIMEOUT"):
        value = config.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            problems.append(f"{key} must be a positive number of seconds")
    return problems


def oauth_of(auth: Any) -> UpstreamOAuth | None:
    """The `UpstreamOAuth` an entry's `AUTH` value asks for: None without one.

    Raises:
        ValueError: a malformed `AUTH` (checks `mcp_django_gateway.E165` and `E168` say what).
    """
    if auth is None:
        return None
    if auth == "oauth":
        return UpstreamOAuth()
    if isinstance(auth, Mapping) and auth.get("TYPE") == "client_credentials":
        return None  # the connection's own client: `client_auth_of`
    if not (isinstance(auth, Mapping) and auth.get("TYPE") == "oauth" and set(auth) <= OAUTH_KEYS):
        raise ValueError("AUTH must be 'oauth' or a dict with TYPE 'oauth'")
    client_id, secret, scopes = auth.get("CLIENT_ID"), auth.get("CLIENT_SECRET"), auth.get("SCOPES", ())
    if not (
        (client_id is None or (isinstance(client_id, str) and client_id))
        and (secret is None or (isinstance(secret, str) and client_id))
        and isinstance(scopes, (list, tuple))
        and all(isinstance(scope, str) and scope and " " not in scope for scope in scopes)
    ):
        raise ValueError("AUTH has a bad CLIENT_ID, CLIENT_SECRET or SCOPES")
    return UpstreamOAuth(client_id=client_id, client_secret=secret, scopes=tuple(scopes))


def client_credentials_problem(auth: Mapping[str, Any]) -> str | None:
    """What is wrong with a `{"TYPE": "client_credentials", ...}` `AUTH` dict, in words; None if nothing."""
    unknown = sorted(str(key) for key in auth if key not in CLIENT_CREDENTIALS_KEYS)
    if unknown:
        return f"unknown key {unknown[0]!r}"
    client_id, secret, key = auth.get("CLIENT_ID"), auth.get("CLIENT_SECRET"), auth.get("PRIVATE_KEY")
    if not (isinstance(client_id, str) and client_id):
        return "CLIENT_ID must be a non-empty string"
    if (secret is None) == (key is None) or not isinstance(secret if key is None else key, str):
        return "needs one of CLIENT_SECRET and PRIVATE_KEY (a string)"
    if auth.get("SIGNING_ALGORITHM", "ES256") not in SIGNING_ALGORITHMS:
        return f"SIGNING_ALGORITHM must be one of {', '.join(sorted(SIGNING_ALGORITHMS))}"
    scopes = auth.get("SCOPES", ())
    if not (isinstance(scopes, (list, tuple)) and all(isinstance(s, str) and s and " " not in s for s in scopes)):
        return "SCOPES must be a list of words"
    return None


def client_auth_of(auth: Any, url: str | None) -> ClientAuth | None:
    """The `ClientAuth` an entry's `AUTH` value gives its connections (client credentials); None for others.

    The same configuration gives the same object, so its connections share one cached token.

    Raises:
        ValueError: a malformed client credentials `AUTH` (check `mcp_django_gateway.E240` says what).
    """
    if not (isinstance(auth, Mapping) and auth.get("TYPE") == "client_credentials"):
        return None
    problem = client_credentials_problem(auth)
    if problem is not None:
        raise ValueError(f"AUTH client_credentials: {problem}")
    marker = (str(url), repr(sorted((str(key), repr(value)) for key, value in auth.items())))
    known = _client_auths.get(marker)
    if known is None:
        from mcp_django.client.auth.authorization import ClientKey
        from mcp_django.client.auth.oauth import ClientCredentials, OAuthClientAuth

        key = auth.get("PRIVATE_KEY")
        grant = ClientCredentials(
            auth["CLIENT_ID"],
            secret=auth.get("CLIENT_SECRET"),
            key=ClientKey(key, auth.get("SIGNING_ALGORITHM", "ES256")) if key else None,
        )
        known = _client_auths[marker] = OAuthClientAuth(grant, scopes=tuple(auth.get("SCOPES", ())))
    return known


def remote_server(spec: str | Mapping[str, Any] | RemoteServer, *, name: str | None = None) -> RemoteServer:
    """The `RemoteServer` a name, a config dict or itself describes: a name is an `MCP_DJANGO["SERVERS"]` entry.

    Timeouts left out come from `REMOTE_CONNECT_TIMEOUT` and `REMOTE_READ_TIMEOUT`.

    Raises:
        LookupError: a name that `MCP_DJANGO["SERVERS"]` does not have.
        ValueError: a configuration with problems (`config_problems`).
    """
    if isinstance(spec, RemoteServer):
        return spec
    if isinstance(spec, str):
        servers = client_settings.SERVERS
        if spec not in servers:
            raise LookupError(f"No server named {spec!r} in MCP_DJANGO['SERVERS']")
        name, spec = name or spec, servers[spec]
        if isinstance(spec, Mapping):
            spec = {key: value for key, value in spec.items() if key not in POLICY_KEYS}
    problems = config_problems(spec)
    if problems:
        raise ValueError(f"Remote server {name or '(unnamed)'}: {'; '.join(problems)}")
    assert isinstance(spec, Mapping)
    url = spec.get("URL")
    return RemoteServer(
        name=name or url or " ".join(spec["COMMAND"]),
        url=url,
        command=tuple(spec.get("COMMAND") or ()),
        env=tuple(sorted((spec.get("ENV") or {}).items())),
        cwd=spec.get("CWD"),
        headers=tuple(sorted((spec.get("HEADERS") or {}).items())),
        token=spec.get("TOKEN"),
        connect_timeout=float(spec.get("CONNECT_TIMEOUT") or client_settings.REMOTE_CONNECT_TIMEOUT),
        read_timeout=float(spec.get("READ_TIMEOUT") or client_settings.REMOTE_READ_TIMEOUT),
        protocol_version=spec.get("PROTOCOL_VERSION"),
        oauth=oauth_of(spec.get("AUTH")),
        auth=client_auth_of(spec.get("AUTH"), url),
    )


class ConnectionPool:
    """One `RemoteConnection` per remote server and event loop, reused by every caller on that loop.

    A connection belongs to the loop it was opened on (its sockets, its process pipes); a worker has
    one loop, so in practice one connection per server per worker process.
    """

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[RemoteServer, RemoteConnection]]
        self._by_loop = weakref.WeakKeyDictionary()

    def get(self, server: RemoteServer) -> RemoteConnection:
        """The connection to `server` on the running loop, created (not yet opened) on first use."""
        connections = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        connection = connections.get(server)
        if connection is None:
            kind = HTTPConnection if server.transport == "http" else StdioConnection
            connection = connections[server] = kind(server)
        return connection

    async def drop(self, server: RemoteServer) -> None:
        """Close and forget the connection to `server` on the running loop, if there is one (a replaced token's)."""
        connection = self._by_loop.get(asyncio.get_running_loop(), {}).pop(server, None)
        if connection is not None:
            await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection of the running loop (stops stdio processes, ends HTTP sessions)."""
        connections = self._by_loop.pop(asyncio.get_running_loop(), {})
        await asyncio.gather(*(connection.aclose() for connection in connections.values()), return_exceptions=True)


pool: Final = ConnectionPool()


def connect(server: str | Mapping[str, Any] | RemoteServer) -> RemoteConnection:
    """The pooled connection to `server` (see `remote_server` for what it may be), opened on first request."""
    return pool.get(remote_server(server))
