"""Remote MCP servers as sources: gateways (one remote) and hubs (many, beside local sources).

The client side every part shares is `mcp_django.client` (one pooled connection per remote MCP server,
named in `MCP_DJANGO["SERVERS"]`); `source.RemoteSource` serves one as a source of `CompositeBackend`;
`remote_chain` runs the interceptors of remote interceptor servers in a chain. docs/gateway.md,
docs/federation.md.
"""
