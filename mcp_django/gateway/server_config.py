"""What a remote MCP server entry of `MCP_DJANGO["SERVERS"]` says, resolved: `RemoteServer` and its `UpstreamOAuth`.

`gateway.connection.remote_server` builds one from a name or a dict; the connections read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UpstreamOAuth:
    """How the site signs each of its users in to a remote server's authorization server (`"AUTH": "oauth"`).

    `client_id` (and `client_secret`) when the site was registered by hand; None registers it
    dynamically (RFC 7591). `scopes` are asked for; none asks for those of the server's 401 challenge, else
    for all its metadata lists.
    """

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RemoteServer:
    """Where a remote MCP server is and how to talk to it: a Streamable HTTP `url`, or a stdio `command`.

    `headers` and `token` (sent as `Authorization: Bearer <token>`) are the gateway's own credentials
    for the server, from settings; a caller's credentials are never sent. `protocol_version` pins a
    revision; None tries 2026-07-28 (`server/discover`) first and falls back to `initialize`. With
    `oauth`, each caller's own token for the server (`gateway.upstream`) is the `token` of a copy.
    """

    name: str
    url: str | None = None
    command: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    token: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    protocol_version: str | None = None
    oauth: UpstreamOAuth | None = None

    @property
    def transport(self) -> str:
        """`"http"` or `"stdio"`."""
        return "http" if self.url else "stdio"

    @property
    def http_headers(self) -> dict[str, str]:
        """The configured headers, with the token as a bearer `Authorization` header."""
        headers = dict(self.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers
