"""The MCP client: connections to remote MCP servers (`connection`), each of the kind its `SERVERS` entry's
`BACKEND` names (`servers`; Streamable HTTP in `http`, stdio in `stdio`, or a `RemoteConnection` of your
own), the bounds on what they may send (`limits`), their OAuth client (`auth/`), and `MCPClient` /
`SyncMCPClient`, which run the interceptor chain around their own requests (`mcpclient`) with the methods
every client here shares (`methods`). docs/client.md.
"""

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
