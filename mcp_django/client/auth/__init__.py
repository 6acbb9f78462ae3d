"""The MCP client's OAuth client: `oauth.OAuthClientAuth` and its grants (what a connection answers a 401 with),
`authorization` (discovery, registration, the authorization URL and code), its token requests (`tokens`) and
its guarded HTTP transport (`http`). docs/client.md, "Authenticating with OAuth"; docs/federation.md.
"""
