"""OAuth 2.1 for MCP clients, with the Django site as the authorization server (the `oauth` extra).

Built on django-oauth-toolkit (`oauth2_provider`): add `"oauth2_provider"` and `"mcp_django.oauth"`
to `INSTALLED_APPS`, `OAUTH2_PROVIDER = mcp_django.oauth.defaults.OAUTH2_PROVIDER` (or your own
dict built on it), `path("", include("mcp_django.oauth.urls"))` to the root URLconf, and
`"mcp_django.oauth.authentication.OAuth2Authentication"` first in the endpoints' authentication
classes. Then:

- `/.well-known/oauth-authorization-server` serves RFC 8414 metadata, and every endpoint that
  accepts these tokens lists this site in the `authorization_servers` of its RFC 9728 metadata;
- `/oauth/register/` registers public clients (RFC 7591: `token_endpoint_auth_method: none`,
  redirect URIs on https or a loopback address); a client may instead use the HTTPS URL of its
  client ID metadata document as its `client_id`;
- `/oauth/authorize/` (authorization code with PKCE S256, after a Django login and a consent page),
  `/oauth/token/` (and refresh tokens), `/oauth/revoke_token/`;
- a token is bound to the endpoint it was asked for (RFC 8707 `resource`) and reaches at most the
  scope it was granted (`mcp:user`, `mcp:team`, `mcp:system`) and its user's scope.

See docs/oauth.md. Without this app nothing changes: DRF tokens stay the zero-setup default.
"""
