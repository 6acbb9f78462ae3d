"""Server Cards (SEP-2127) and the AI Catalog: a site says which MCP servers it has before anyone connects.

An app, `"mcp_django.discovery"` in `INSTALLED_APPS`: `include("mcp_django.urls")` then serves, for every
published endpoint, its card at `<endpoint>/server-card`, the domain's AI Catalog at
`/.well-known/ai-catalog.json`, and the legacy `/.well-known/mcp/server-card.json`. A card is built from
the endpoint as it is mounted (its URL, who may call it, the revisions it speaks, what `server/discover`
names it), never from its tools. Every wire name is in `wire.py`. docs/discovery.md.
"""
