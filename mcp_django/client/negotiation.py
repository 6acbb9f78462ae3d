"""Which revision a remote connection speaks, and what it tells the server about itself.

`Negotiation` is the half of `remote.RemoteConnection` that agrees on the protocol: the opening
handshake in either era (`server/discover` in 2026-07-28, else `initialize`), switching to another
2026 revision when the server refuses ours (-32022), and the per-request `_meta` of the stateless era
(the protocol version, the client capabilities declared for this request, our client info).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.client.config import ServerConfig
from mcp_django.client.streams import NotificationListener, SessionExpired
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.protocol import jsonrpc
from mcp_django.protocol.context import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)
from mcp_django.protocol.versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_STATELESS_VERSION,
    STATELESS_VERSIONS,
    Era,
)
from mcp_django.version import __version__

logger = logging.getLogger("mcp_django.client")

CLIENT_INFO: Final[Mapping[str, str]] = {"name": "mcp-django", "version": __version__}
_PROTOCOL_META_PREFIX: Final = "io.modelcontextprotocol/"


class Negotiation:
    """The protocol a connection speaks: negotiated on opening, renegotiated on -32022, stamped on each request.

    After the handshake, `protocol_version`, `capabilities`, `server_info` and `instructions` describe
    what the server negotiated. What it needs from the connection (`_exchange`, `_notify`,
    `unavailable`) is declared below and provided by `remote.RemoteConnection`.
    """

    server: ServerConfig
    protocol_version: str | None
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    instructions: str | None

    @property
    def era(self) -> Era:
        """The era the server speaks to us (valid once open)."""
        return Era.STATELESS if self.protocol_version in STATELESS_VERSIONS else Era.HANDSHAKE

    async def _handshake(self) -> None:
        pinned = self.server.protocol_version
        if pinned is None or pinned in STATELESS_VERSIONS:
            version = pinned or LATEST_STATELESS_VERSION
            self.protocol_version = version
            try:
                result = await self._discover()
            except (RemoteError, SessionExpired, BackendUnavailable) as error:
                if pinned is not None or (isinstance(error, BackendUnavailable) and error.reason != "protocol"):
                    raise
                logger.debug("Remote MCP server %r does not speak %s; trying initialize", self.server.name, version)
            else:
                supported = result.get("supportedVersions")
                if not isinstance(supported, list) or version in supported or pinned is not None:
                    self._describe(result, result.get("_meta", {}).get(META_SERVER_INFO))
                    return
        self.protocol_version = None
        requested = pinned if pinned in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION
        result = await self._exchange(
            "initialize",
            {
                "protocolVersion": requested,
                "capabilities": self.server.client_capabilities,
                "clientInfo": dict(CLIENT_INFO),
            },
            None,
        )
        negotiated = result.get("protocolVersion")
        if negotiated not in HANDSHAKE_VERSIONS:
            raise self.unavailable("protocol", f"the server answered initialize with version {negotiated!r}")
        self.protocol_version = negotiated
        self._describe(result, result.get("serverInfo"))
        await self._notify("notifications/initialized", None)

    async def _discover(self) -> dict[str, Any]:
        """`server/discover`, sent once more in a version both sides speak if the server refuses ours (-32022)."""
        try:
            return await self._exchange("server/discover", {"_meta": self._stateless_meta()}, None)
        except RemoteError as error:
            if not self._renegotiate(error):
                raise
        return await self._exchange("server/discover", {"_meta": self._stateless_meta()}, None)

    def _renegotiate(self, error: RemoteError) -> bool:
        """Switch to the newest stateless version the server's -32022 error lists; False when we share none.

        A server refuses the version a request carries with `UnsupportedProtocolVersionError`, its
        `data.supported` the versions it speaks: the request goes once more in the newest one we share
        (only the pinned one, when the entry pins a version).
        """
        if error.code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION or self.era is not Era.STATELESS:
            return False
        supported = error.data.get("supported") if isinstance(error.data, dict) else None
        if not isinstance(supported, list):
            return False
        pinned = self.server.protocol_version
        shared = [version for version in ([pinned] if pinned else STATELESS_VERSIONS[::-1]) if version in supported]
        if not shared:
            return False
        logger.info(
            "Remote MCP server %r refused %s; retrying in %s", self.server.name, self.protocol_version, shared[0]
        )
        self.protocol_version = shared[0]
        return True

    def _describe(self, result: Mapping[str, Any], server_info: Any) -> None:
        capabilities = result.get("capabilities")
        self.capabilities = dict(capabilities) if isinstance(capabilities, dict) else {}
        self.server_info = dict(server_info) if isinstance(server_info, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None

    def _stateless_meta(self, client_capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: dict(
                self.server.client_capabilities if client_capabilities is None else client_capabilities
            ),
            META_CLIENT_INFO: dict(CLIENT_INFO),
        }

    def _params(
        self,
        params: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None,
        client_capabilities: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        out = {key: value for key, value in (params or {}).items() if key != "_meta"}
        extra = {key: value for key, value in (meta or {}).items() if not key.startswith(_PROTOCOL_META_PREFIX)}
        if self.era is Era.STATELESS:
            extra.update(self._stateless_meta(client_capabilities))
            if meta and isinstance(meta.get(META_LOG_LEVEL), str):
                extra[META_LOG_LEVEL] = meta[META_LOG_LEVEL]
        if extra:
            out["_meta"] = extra
        return out

    # -- provided by the connection ----------------------------------------------------------------

    async def _exchange(
        self, method: str, params: dict[str, Any], on_notification: NotificationListener | None
    ) -> dict[str, Any]:
        """Send one request and return its result (`RemoteConnection._exchange`)."""
        raise NotImplementedError

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        """Send one notification (the transport's)."""
        raise NotImplementedError

    def unavailable(self, reason: str, detail: str) -> BackendUnavailable:
        """A `BackendUnavailable` naming this server (`RemoteConnection.unavailable`)."""
        raise NotImplementedError
