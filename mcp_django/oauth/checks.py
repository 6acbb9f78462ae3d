"""System checks of the `oauth` extra (IDs `mcp_django_oauth.E070`-`E099`, `W070`-`W099`; see docs/checks.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig, apps
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.urls import NoReverseMatch, reverse

from mcp_django.checks.support import is_int
from mcp_django.oauth.conf import oauth_settings

AUTHENTICATION = "mcp_django.oauth.authentication.OAuth2Authentication"
FETCHER = "mcp_django.oauth.cimd.MCPMetadataFetcher"
VALIDATOR = "mcp_django.oauth.validators.MCPOAuth2Validator"


@register(Tags.security, Tags.urls)
def check_oauth(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """django-oauth-toolkit installed, PKCE S256 enforced, metadata mounted, an endpoint accepting the tokens."""
    if not apps.is_installed("oauth2_provider"):
        return [
            Error(
                "mcp_django.oauth needs django-oauth-toolkit installed.",
                hint="pip install 'django-mcp-host[oauth]'; add 'oauth2_provider' to INSTALLED_APPS.",
                id="mcp_django_oauth.E070",
            )
        ]
    from oauth2_provider.settings import oauth2_settings

    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.oauth.authentication import OAuth2Authentication, accepts_oauth
    from mcp_django.oauth.cimd import MCPMetadataFetcher
    from mcp_django.oauth.throttling import rate_problem
    from mcp_django.oauth.validators import MCPOAuth2Validator

    messages: list[CheckMessage] = []
    for name, check_id in (
        ("OAUTH_REGISTRATION_RATE", "mcp_django_oauth.E074"),
        ("OAUTH_LOGIN_RATE", "mcp_django_oauth.E075"),
        ("OAUTH_TOKEN_RATE", "mcp_django_oauth.E090"),
    ):
        problem = rate_problem(name, getattr(oauth_settings, name))
        if problem is not None:
            messages.append(
                Error(problem, hint="Write '<count>/<second|minute|hour|day>', e.g. '30/hour'.", id=check_id)
            )
    max_age = oauth_settings.OAUTH_CLIENT_ASSERTION_MAX_AGE
    if not (is_int(max_age) and 0 < max_age <= 3600):
        messages.append(
            Error(
                f"OAUTH_CLIENT_ASSERTION_MAX_AGE {max_age!r} is not 1 to 3600 seconds.",
                hint="Client assertions are short-lived: set it to a few minutes, e.g. 300.",
                id="mcp_django_oauth.E091",
            )
        )
    messages.extend(_enterprise_messages(oauth_settings.OAUTH_TRUSTED_ISSUERS, oauth2_settings.OAUTH2_SERVER_CLASS))
    jwks_max_age = oauth_settings.OAUTH_JWKS_MAX_AGE
    if not (is_int(jwks_max_age) and 0 < jwks_max_age <= 86400):
        messages.append(
            Error(
                f"OAUTH_JWKS_MAX_AGE {jwks_max_age!r} is not 1 to 86400 seconds.",
                hint="Set how long a fetched JWKS is kept at most, e.g. 3600.",
                id="mcp_django_oauth.E097",
            )
        )
    if not oauth2_settings.PKCE_REQUIRED or not oauth2_settings.COMPLIANT_BCP_RFC9700_PKCE_METHOD:
        messages.append(
            Error(
                "OAuth for MCP needs PKCE required, with S256 only.",
                hint="Set PKCE_REQUIRED and COMPLIANT_BCP_RFC9700_PKCE_METHOD to True in OAUTH2_PROVIDER.",
                id="mcp_django_oauth.E071",
            )
        )
    if getattr(oauth2_settings.ACCESS_TOKEN_GENERATOR, "__module__", None) != "mcp_django.oauth.tokens":
        messages.append(
            Error(
                "MCP endpoints do not recognise tokens from this ACCESS_TOKEN_GENERATOR.",
                hint="Set OAUTH2_PROVIDER['ACCESS_TOKEN_GENERATOR'] to 'mcp_django.oauth.tokens.access_token'.",
                id="mcp_django_oauth.E073",
            )
        )
    if not _is_subclass(oauth2_settings.OAUTH2_VALIDATOR_CLASS, MCPOAuth2Validator):
        messages.append(
            Warning(
                "OAUTH2_VALIDATOR_CLASS does not end the grants MCP clients must lose.",
                hint=f"Set OAUTH2_PROVIDER['OAUTH2_VALIDATOR_CLASS'] to '{VALIDATOR}' or a subclass.",
                id="mcp_django_oauth.W073",
            )
        )
    fetcher = oauth2_settings.CIMD_METADATA_FETCHER
    if oauth2_settings.CIMD_ENABLED and not _is_subclass(fetcher, MCPMetadataFetcher):
        messages.append(
            Warning(
                "CIMD_METADATA_FETCHER does not apply the rules of MCP clients.",
                hint=f"Set OAUTH2_PROVIDER['CIMD_METADATA_FETCHER'] to '{FETCHER}' or a subclass.",
                id="mcp_django_oauth.W072",
            )
        )
    try:
        metadata = reverse("oauth2_provider:oauth-server-metadata")
    except NoReverseMatch:
        metadata = None
    if metadata != "/.well-known/oauth-authorization-server":
        messages.append(
            Error(
                "The OAuth authorization server metadata is not at the site root.",
                hint='Add path("", include("mcp_django.oauth.urls")) to the root URLconf.',
                id="mcp_django_oauth.E072",
            )
        )
    endpoints = [endpoint for endpoint in mounted_endpoints() if not endpoint.allow_anonymous]
    if endpoints and not any(accepts_oauth(endpoint) for endpoint in endpoints):
        messages.append(
            Warning(
                "No MCP endpoint accepts the OAuth tokens this site issues.",
                hint=f"Put '{AUTHENTICATION}' first in DEFAULT_AUTHENTICATION_CLASSES.",
                id="mcp_django_oauth.W070",
            )
        )
    for endpoint in endpoints:
        classes = [type(authenticator) for authenticator in endpoint.authenticators]
        position = next((i for i, cls in enumerate(classes) if issubclass(cls, OAuth2Authentication)), None)
        if position is not None and any(_reads_bearer(cls) for cls in classes[:position]):
            messages.append(
                Warning(
                    f"Endpoint {endpoint.name!r} runs a token class before OAuth2Authentication.",
                    hint="It refuses OAuth tokens as unknown keys: list OAuth2Authentication first.",
                    id="mcp_django_oauth.W071",
                )
            )
    return messages


def _enterprise_messages(issuers: Any, server_class: Any) -> list[CheckMessage]:
    from collections.abc import Mapping

    from mcp_django.oauth.enterprise import issuer_problem
    from mcp_django.oauth.server import MCPServer

    if not isinstance(issuers, Mapping):
        return [
            Error(
                "OAUTH_TRUSTED_ISSUERS is not a dict of issuer URLs to their settings.",
                hint='Write {"https://idp.example.com": {"JWKS_URI": "https://idp.example.com/keys"}}.',
                id="mcp_django_oauth.E092",
            )
        ]
    hints = {
        "mcp_django_oauth.E093": (
            "Name the issuer by its URL; keys: JWKS, JWKS_URI, AUDIENCE, USERS, CREATE_USERS, MAX_AGE."
        ),
        "mcp_django_oauth.E094": (
            "Give the identity provider's public keys: JWKS (a dict) or JWKS_URI (https), not both."
        ),
        "mcp_django_oauth.E095": (
            "Map subjects to users by 'email' (the email claim) or 'linked' (LinkedIdentity rows)."
        ),
        "mcp_django_oauth.E096": "Identity assertions are short-lived: set MAX_AGE to a few minutes, e.g. 300.",
    }
    messages: list[CheckMessage] = []
    for issuer, entry in issuers.items():
        problem = issuer_problem(issuer, entry)
        if problem is not None:
            check_id, message = problem
            messages.append(Error(message, hint=hints[check_id], id=check_id))
    if issuers and not _is_subclass(server_class, MCPServer):
        messages.append(
            Warning(
                "OAUTH2_SERVER_CLASS does not take the identity assertion grant.",
                hint="Set OAUTH2_PROVIDER['OAUTH2_SERVER_CLASS'] to 'mcp_django.oauth.server.MCPServer'.",
                id="mcp_django_oauth.W092",
            )
        )
    return messages


def _reads_bearer(cls: type) -> bool:
    from rest_framework.authentication import TokenAuthentication

    return issubclass(cls, TokenAuthentication)


def _is_subclass(cls: Any, base: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, base)
