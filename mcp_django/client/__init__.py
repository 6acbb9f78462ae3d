"""The MCP client: connections to remote MCP servers (`connection`), each of the kind its `SERVERS` entry's
`BACKEND` names (`servers`; Streamable HTTP in `http`, stdio in `stdio`, or a `RemoteConnection` of your
own), the bounds on what they may send (`limits`), their OAuth client (`auth/`), and `MCPClient` /
`SyncMCPClient`, which run the interceptor chain around their own requests (`mcpclient`) with the methods
every client here shares (`methods`). docs/client.md.

Each name is imported from its module when first asked for: `mcp_django.client.conf` (the
settings, which the admin and the checks read at start-up) loads without the client.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_django.client.auth.authorization import ClientKey
    from mcp_django.client.auth.oauth import AuthorizationCode, ClientCredentials, EnterpriseManaged, OAuthClientAuth
    from mcp_django.client.config import ClientAuth, ElicitationHandler, ServerConfig
    from mcp_django.client.connection import connect
    from mcp_django.client.mcpclient import MCPClient, SyncMCPClient
    from mcp_django.client.remote import RemoteConnection
    from mcp_django.exceptions import BackendUnavailable, RemoteError

__all__ = [
    "AuthorizationCode",
    "BackendUnavailable",
    "ClientAuth",
    "ClientCredentials",
    "ClientKey",
    "ElicitationHandler",
    "EnterpriseManaged",
    "MCPClient",
    "OAuthClientAuth",
    "RemoteConnection",
    "RemoteError",
    "ServerConfig",
    "SyncMCPClient",
    "connect",
]

_HOMES = {
    "AuthorizationCode": "mcp_django.client.auth.oauth",
    "BackendUnavailable": "mcp_django.exceptions",
    "ClientAuth": "mcp_django.client.config",
    "ClientCredentials": "mcp_django.client.auth.oauth",
    "ClientKey": "mcp_django.client.auth.authorization",
    "ElicitationHandler": "mcp_django.client.config",
    "EnterpriseManaged": "mcp_django.client.auth.oauth",
    "MCPClient": "mcp_django.client.mcpclient",
    "OAuthClientAuth": "mcp_django.client.auth.oauth",
    "RemoteConnection": "mcp_django.client.remote",
    "RemoteError": "mcp_django.exceptions",
    "ServerConfig": "mcp_django.client.config",
    "SyncMCPClient": "mcp_django.client.mcpclient",
    "connect": "mcp_django.client.connection",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module (`_HOMES`) when first asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value
