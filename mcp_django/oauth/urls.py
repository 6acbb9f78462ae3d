"""The authorization server's URLs: `path("", include("mcp_django.oauth.urls"))` in the root URLconf.

RFC 8414 metadata belongs at the site root (`/.well-known/oauth-authorization-server`), so include
these at the root. The namespace is django-oauth-toolkit's (`oauth2_provider`): its views reverse
their URLs there; do not also include `oauth2_provider.urls`. Every view takes bodies from anyone:
`public_view` holds them to `MAX_PUBLIC_REQUEST_BYTES` (`mcp_django.transports.public`).
"""

from __future__ import annotations

from django.urls import path
from oauth2_provider import views as toolkit

from mcp_django.oauth.views import (
    ConsentView,
    LoginView,
    RateLimitedTokenView,
    RegistrationManagementView,
    RegistrationView,
    ServerMetadataView,
)
from mcp_django.transports.public import public_view

app_name = "oauth2_provider"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        public_view(ServerMetadataView.as_view()),
        name="oauth-server-metadata",
    ),
    path("oauth/authorize/", public_view(ConsentView.as_view()), name="authorize"),
    path("oauth/token/", public_view(RateLimitedTokenView.as_view()), name="token"),
    path("oauth/revoke_token/", public_view(toolkit.RevokeTokenView.as_view()), name="revoke-token"),
    path("oauth/register/", public_view(RegistrationView.as_view()), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        public_view(RegistrationManagementView.as_view()),
        name="dcr-register-management",
    ),
    path("oauth/login/", public_view(LoginView.as_view()), name="login"),
]
