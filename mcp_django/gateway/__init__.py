"""Seed 004's gateway: an endpoint mode that fronts another MCP server through the interceptor chain.

`connection` is the client side every part of the gateway shares: one pooled connection per remote
MCP server (Streamable HTTP or a stdio subprocess). docs/gateway.md.
"""
