"""Remote MCP servers as sources: gateways (one remote) and hubs (many, beside local sources).

The client side every part shares is `mcp_django.client` (one pooled connection per remote MCP server,
named in `MCP_DJANGO["SERVERS"]`); `source.RemoteSource` serves one as a source of `CompositeBackend`;
`remote_chain` runs the interceptors of remote interceptor servers in a chain. It is a Django app,
`"mcp_django.gateway"` in `INSTALLED_APPS` (label `mcp_django_gateway`): `models` holds the admin's one
row per remote server and each user's upstream tokens, `admin` their pages, `urls` where users connect
their accounts, `apps` registers the gateway's checks. docs/gateway.md, docs/federation.md.
"""
