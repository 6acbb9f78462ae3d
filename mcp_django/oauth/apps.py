"""The Django app of the `oauth` extra: `"mcp_django.oauth"` in `INSTALLED_APPS`, after `"oauth2_provider"`."""

from __future__ import annotations

from django.apps import AppConfig


class MCPOAuthConfig(AppConfig):
    """Registers the OAuth checks, the receivers that end cached OAuth credentials when a token goes, and the
    client credentials (SEP-1046) and enterprise-managed authorization (SEP-990) extensions."""

    name = "mcp_django.oauth"
    label = "mcp_django_oauth"
    default_auto_field = "django.db.models.BigAutoField"
    mcp_settings = ["mcp_django.oauth.conf.oauth_settings"]
    mcp_extensions = [
        "mcp_django.oauth.extension.ClientCredentialsExtension",
        "mcp_django.oauth.extension.EnterpriseManagedAuthorizationExtension",
    ]
    verbose_name = "MCP OAuth"

    def ready(self) -> None:
        from django.apps import apps

        from mcp_django.oauth import checks  # noqa: F401  # registers the system checks

        if apps.is_installed("oauth2_provider"):  # else check E070 says so
            from mcp_django.oauth.cimd import connect_application_type
            from mcp_django.oauth.revocation import connect

            connect()
            connect_application_type()
