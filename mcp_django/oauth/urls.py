"""The authorization server's URLs: `path("", include("mcp_django.oauth.urls"))` in the root URLconf.

RFC 8414 metadata belongs at the site root (`/.well-known/oauth-authorization-server`), so include
these at the root. The namespace is django-oauth-toolkit's (`oauth2_provider`): its views reverse
their URLs there; do not also include `oauth2_provider.urls`.
"""

from __future__ import annotations

from django.urls import path
from oauth2_provider import views as toolkit

from mcp_django.oauth.views import ConsentView, LoginView, RegistrationView

app_name = "oauth2_provider"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        toolkit.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path("oauth/authorize/", ConsentView.as_view(), name="authorize"),
    path("oauth/token/", toolkit.TokenView.as_view(), name="token"),
    path("oauth/revoke_token/", toolkit.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", RegistrationView.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        toolkit.DynamicClientRegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
    path("oauth/login/", LoginView.as_view(), name="login"),
]
