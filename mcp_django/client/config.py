"""What a remote MCP server entry of `MCP_DJANGO["SERVERS"]` says, resolved: `ServerConfig`, its `UpstreamOAuth`,
and the `ClientAuth` seam its HTTP connection authenticates through (with the `Challenge` it is given).

`client.servers` builds one from a name or a dict; the connections read it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

_RESOURCE_METADATA: Final = re.compile(r'resource_metadata\s*=\s*"([^"]+)"')
_SCOPE: Final = re.compile(r'(?<![\w-])scope\s*=\s*"([^"]*)"')
_ERROR: Final = re.compile(r'(?<![\w-])error\s*=\s*"([^"]*)"')

ElicitationHandler = Callable[[Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Answers a server's `elicitation/create`: called with its params, returns the `ElicitResult`
(`{"action": "accept", "content": {...}}`, or `"decline"` / `"cancel"`)."""


@dataclass(frozen=True)
class UpstreamOAuth:
    """How the site signs each of its users in to a remote server's authorization server (`"AUTH": "oauth"`).

    `client_id` (and `client_secret`) when the site was registered by hand; else `client_metadata_url`
    (the URL of the site's client ID metadata document) where the authorization server takes one; else it
    is registered dynamically (RFC 7591). `scopes` are asked for; none asks for those of the server's 401
    challenge, else for all its metadata lists. `client.auth.oauth`'s grants take the same settings.
    """

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None


@dataclass(frozen=True)
class Challenge:
    """What a `WWW-Authenticate: Bearer ...` header asks: where the resource metadata is, which scopes, why."""

    resource_metadata: str | None = None
    scopes: tuple[str, ...] = ()
    error: str | None = None

    @classmethod
    def parse(cls, header: str) -> Challenge:
        """The challenge of a `WWW-Authenticate` value (its Bearer parameters; none is an empty challenge)."""
        named, scope, error = (pattern.search(header) for pattern in (_RESOURCE_METADATA, _SCOPE, _ERROR))
        return cls(
            resource_metadata=named.group(1) if named else None,
            scopes=tuple(scope.group(1).split()) if scope else (),
            error=error.group(1) if error else None,
        )


RELAYED_CAPABILITIES: Final[Mapping[str, Mapping[str, Any]]] = {
    "elicitation": {"form": {}, "url": {}},
    "roots": {},
    "sampling": {},
}
"""What a gateway declares to a handshake-era remote, always: the questions it may pass on to its callers.

A session's capabilities are fixed by its `initialize` and one pooled session serves every caller of a
worker, so they are declared whatever the caller, and a question its caller cannot answer (it did not
declare the capability, or cannot be asked) is refused then, with an error the remote sees. The plain
forms only: sampling without `tools` or `context`, roots without `listChanged` (a caller's change of roots
is not passed on).
"""

HTTP_BACKEND: Final = "mcp_django.client.http.HTTPConnection"
"""The `BACKEND` of a `SERVERS` entry with a `URL` and none of its own: Streamable HTTP."""
STDIO_BACKEND: Final = "mcp_django.client.stdio.StdioConnection"
"""The `BACKEND` of a `SERVERS` entry with a `COMMAND` and none of its own: a subprocess over stdio."""
COMMON_KEYS: Final = frozenset(
    {"BACKEND", "HEADERS", "TOKEN", "AUTH", "CONNECT_TIMEOUT", "READ_TIMEOUT", "PROTOCOL_VERSION"}
)
"""The keys every kind of remote reads; a backend adds its own (`RemoteConnection.config_keys`)."""
POLICY_KEYS: Final = frozenset({"FAIL_OPEN", "TIMEOUT"})
"""The other keys of a `SERVERS` entry: how an interceptor chain treats the server (`gateway.interceptor_servers`)."""


@dataclass(frozen=True)
class ServerConfig:
    """Where a remote MCP server is and how to talk to it: a resolved `MCP_DJANGO["SERVERS"]` entry.

    `backend` is the import path of the `RemoteConnection` class that talks to it (the entry's `BACKEND`,
    else Streamable HTTP at `url` or a stdio subprocess running `command`); `url`, `command`, `env` and
    `cwd` are the built-in kinds' own, `options` another kind's. `headers` and `token` (sent as
    `Authorization: Bearer <token>`) are the gateway's own credentials for the server, from settings; a
    caller's credentials are never sent.
    `protocol_version` pins a revision; None tries 2026-07-28 (`server/discover`) first and falls back to
    `initialize`. With `oauth`, each caller's own token for the server (`gateway.upstream`) is the `token`
    of a copy. With `auth` (a `ClientAuth`), the connection answers the server's 401 and 403 challenges
    itself: it asks `auth` for a token and sends the request again.
    With `elicitation` (an `MCPClient`'s handler), the connection declares the `elicitation` capability
    and the handler answers the server's questions. With `relays_questions` (a gateway's connections),
    it declares `RELAYED_CAPABILITIES` and each question the server asks during a request goes to the
    caller of that request (`streams.ServerStream.dispatch`); others declare nothing and refuse them.
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
    auth: ClientAuth | None = field(default=None, compare=True)
    elicitation: ElicitationHandler | None = None
    relays_questions: bool = False
    """Whether the connection declares `RELAYED_CAPABILITIES` on behalf of the callers it forwards for (a gateway's)."""
    backend: str = ""
    """The import path of its connection class; left out, the one its `url` or `command` says, as for an entry."""
    options: tuple[tuple[str, Any], ...] = ()
    """A third-party `BACKEND`'s own keys of the entry (what its `configure` keeps), as sorted pairs."""

    def __post_init__(self) -> None:
        if not self.backend:
            object.__setattr__(self, "backend", STDIO_BACKEND if self.command and not self.url else HTTP_BACKEND)

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The client capabilities the connection declares: a gateway's `RELAYED_CAPABILITIES`, `elicitation`
        (form mode) with a handler, else none."""
        if self.relays_questions:
            return {key: dict(value) for key, value in RELAYED_CAPABILITIES.items()}
        return {"elicitation": {}} if self.elicitation is not None else {}

    @property
    def http_headers(self) -> dict[str, str]:
        """The configured headers, with the token as a bearer `Authorization` header."""
        headers = dict(self.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers


@runtime_checkable
class ClientAuth(Protocol):
    """What an HTTP connection asks for its `Authorization` header, and tells when the server challenges it.

    `client.auth.oauth.OAuthClientAuth` is the package's implementation.
    """

    async def authorization(self, server: ServerConfig) -> str | None:
        """The `Authorization` header value for the next request to `server`; None sends none."""
        ...

    async def challenged(self, server: ServerConfig, challenge: Challenge, status: int) -> bool:
        """`server` answered `status` (401 or 403) with `challenge`: True when a new token is there to retry with.

        Raises:
            BackendUnavailable: getting a token failed (`reason = "refused"`), with what went wrong.
        """
        ...
