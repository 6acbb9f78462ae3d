"""The MCP client: connections to remote MCP servers over Streamable HTTP or stdio (`connection`, `http`,
`stdio`), the bounds on what they may send (`limits`), their OAuth client (`auth/`), and `MCPClient` /
`SyncMCPClient`, which run the interceptor chain around their own requests (`mcpclient`). docs/client.md.
"""

from mcp_django.client.auth.authorization import ClientKey
from mcp_django.client.auth.oauth import AuthorizationCode, ClientCredentials, EnterpriseManaged, OAuthClientAuth
from mcp_django.client.config import ClientAuth, ElicitationHandler
from mcp_django.client.connection import BackendUnavailable, RemoteError, connect
from mcp_django.client.mcpclient import MCPClient, SyncMCPClient

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
    "RemoteError",
    "SyncMCPClient",
    "connect",
]
