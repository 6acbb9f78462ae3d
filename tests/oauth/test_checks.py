"""The system checks of the oauth extra: one test per ID, asserting the whole message."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.oauth.checks import check_oauth
from mcp_django.oauth.defaults import OAUTH2_PROVIDER

OAUTH = "mcp_django.oauth.authentication.OAuth2Authentication"


def with_mcp(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


def test_the_example_project_passes() -> None:
    assert check_oauth() == []


def test_e070_without_django_oauth_toolkit() -> None:
    apps_without = [app for app in settings.INSTALLED_APPS if app != "oauth2_provider"]
    with override_settings(INSTALLED_APPS=apps_without):
        assert check_oauth() == [
            Error(
                "mcp_django.oauth needs django-oauth-toolkit installed.",
                hint="pip install 'django-mcp-host[oauth]'; add 'oauth2_provider' to INSTALLED_APPS.",
                id="mcp_django_oauth.E070",
            )
        ]


@pytest.mark.parametrize("setting", ["PKCE_REQUIRED", "COMPLIANT_BCP_RFC9700_PKCE_METHOD"])
def test_e071_without_pkce_s256_only(setting: str) -> None:
    with override_settings(OAUTH2_PROVIDER={**OAUTH2_PROVIDER, setting: False}):
        assert check_oauth() == [
            Error(
                "OAuth for MCP needs PKCE required, with S256 only.",
                hint="Set PKCE_REQUIRED and COMPLIANT_BCP_RFC9700_PKCE_METHOD to True in OAUTH2_PROVIDER.",
                id="mcp_django_oauth.E071",
            )
        ]


def test_e072_without_the_metadata_at_the_site_root() -> None:
    with override_settings(ROOT_URLCONF="tests.access_urls"):
        assert check_oauth() == [
            Error(
                "The OAuth authorization server metadata is not at the site root.",
                hint='Add path("", include("mcp_django.oauth.urls")) to the root URLconf.',
                id="mcp_django_oauth.E072",
            )
        ]


def test_e073_with_a_token_generator_endpoints_do_not_recognise() -> None:
    provider = {key: value for key, value in OAUTH2_PROVIDER.items() if key != "ACCESS_TOKEN_GENERATOR"}
    with override_settings(OAUTH2_PROVIDER=provider):
        assert check_oauth() == [
            Error(
                "MCP endpoints do not recognise tokens from this ACCESS_TOKEN_GENERATOR.",
                hint="Set OAUTH2_PROVIDER['ACCESS_TOKEN_GENERATOR'] to 'mcp_django.oauth.tokens.access_token'.",
                id="mcp_django_oauth.E073",
            )
        ]


@pytest.mark.parametrize("rate", ["30", "0/hour", "30/fortnight", "thirty/hour", 30, ["30/hour"]])
def test_e074_with_a_registration_rate_that_is_no_rate(rate: Any) -> None:
    with with_mcp(OAUTH_REGISTRATION_RATE=rate):
        assert check_oauth() == [
            Error(
                f"OAUTH_REGISTRATION_RATE {rate!r} is not a rate like '30/hour' or None.",
                hint="Write '<count>/<second|minute|hour|day>', e.g. '30/hour'.",
                id="mcp_django_oauth.E074",
            )
        ]


@pytest.mark.parametrize("rate", ["30", "0/minute", "5/fortnight", 5])
def test_e075_with_a_login_rate_that_is_no_rate(rate: Any) -> None:
    with with_mcp(OAUTH_LOGIN_RATE=rate):
        assert check_oauth() == [
            Error(
                f"OAUTH_LOGIN_RATE {rate!r} is not a rate like '30/hour' or None.",
                hint="Write '<count>/<second|minute|hour|day>', e.g. '30/hour'.",
                id="mcp_django_oauth.E075",
            )
        ]


@pytest.mark.parametrize("rate", ["1/s", "30/hour", "5/minute", "100/day", None])
def test_registration_and_login_rates_that_pass(rate: Any) -> None:
    with with_mcp(OAUTH_REGISTRATION_RATE=rate, OAUTH_LOGIN_RATE=rate):
        assert check_oauth() == []


def test_w070_when_no_endpoint_accepts_the_tokens() -> None:
    with with_mcp(DEFAULT_AUTHENTICATION_CLASSES=["mcp_django.auth.TokenAuthentication"]):
        assert check_oauth() == [
            Warning(
                "No MCP endpoint accepts the OAuth tokens this site issues.",
                hint=f"Put '{OAUTH}' first in DEFAULT_AUTHENTICATION_CLASSES.",
                id="mcp_django_oauth.W070",
            )
        ]


def test_w071_when_a_token_class_runs_first() -> None:
    with with_mcp(DEFAULT_AUTHENTICATION_CLASSES=["mcp_django.auth.TokenAuthentication", OAUTH]):
        assert check_oauth() == [
            Warning(
                f"Endpoint {name!r} runs a token class before OAuth2Authentication.",
                hint="It refuses OAuth tokens as unknown keys: list OAuth2Authentication first.",
                id="mcp_django_oauth.W071",
            )
            for name in ("guarded", "server", "adapter")  # the example endpoints that need credentials
        ]


def test_w072_with_a_metadata_fetcher_that_skips_the_rules_of_mcp_clients() -> None:
    provider = {**OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "oauth2_provider.cimd.SafeMetadataFetcher"}
    with override_settings(OAUTH2_PROVIDER=provider):
        assert check_oauth() == [
            Warning(
                "CIMD_METADATA_FETCHER does not apply the rules of MCP clients.",
                hint="Set OAUTH2_PROVIDER['CIMD_METADATA_FETCHER'] to "
                "'mcp_django.oauth.cimd.MCPMetadataFetcher' or a subclass.",
                id="mcp_django_oauth.W072",
            )
        ]


def test_w073_with_a_validator_that_keeps_the_grants_mcp_clients_must_lose() -> None:
    provider = {**OAUTH2_PROVIDER, "OAUTH2_VALIDATOR_CLASS": "oauth2_provider.oauth2_validators.OAuth2Validator"}
    with override_settings(OAUTH2_PROVIDER=provider):
        assert check_oauth() == [
            Warning(
                "OAUTH2_VALIDATOR_CLASS does not end the grants MCP clients must lose.",
                hint="Set OAUTH2_PROVIDER['OAUTH2_VALIDATOR_CLASS'] to "
                "'mcp_django.oauth.validators.MCPOAuth2Validator' or a subclass.",
                id="mcp_django_oauth.W073",
            )
        ]


def test_e090_with_a_token_rate_that_is_no_rate() -> None:
    with with_mcp(OAUTH_TOKEN_RATE="lots"):
        assert check_oauth() == [
            Error(
                "OAUTH_TOKEN_RATE 'lots' is not a rate like '30/hour' or None.",
                hint="Write '<count>/<second|minute|hour|day>', e.g. '30/hour'.",
                id="mcp_django_oauth.E090",
            )
        ]


@pytest.mark.parametrize("max_age", [0, 7200, "300", True])
def test_e091_with_a_client_assertion_max_age_out_of_bounds(max_age: Any) -> None:
    with with_mcp(OAUTH_CLIENT_ASSERTION_MAX_AGE=max_age):
        assert check_oauth() == [
            Error(
                f"OAUTH_CLIENT_ASSERTION_MAX_AGE {max_age!r} is not 1 to 3600 seconds.",
                hint="Client assertions are short-lived: set it to a few minutes, e.g. 300.",
                id="mcp_django_oauth.E091",
            )
        ]


LONG_ISSUER = "https://login.example-enterprise.com/tenant/42"
KEYS = {
    "keys": [
        {
            "kty": "EC",
            "crv": "P-256",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
            "kid": "k",
        }
    ]
}


@pytest.mark.parametrize(
    ("issuers", "message", "hint", "check_id"),
    [
        pytest.param(
            ["https://idp.example.com"],
            "OAUTH_TRUSTED_ISSUERS is not a dict of issuer URLs to their settings.",
            'Write {"https://idp.example.com": {"JWKS_URI": "https://idp.example.com/keys"}}.',
            "mcp_django_oauth.E092",
            id="E092",
        ),
        pytest.param(
            {"idp": {"JWKS": KEYS}},
            "Trusted issuer 'idp' is no URL with a dict of settings.",
            "Name the issuer by its URL; keys: JWKS, JWKS_URI, AUDIENCE, USERS, CREATE_USERS, MAX_AGE.",
            "mcp_django_oauth.E093",
            id="E093-not-a-url",
        ),
        pytest.param(
            {LONG_ISSUER: {"JWKS": KEYS, "JWKS_URL": "https://x"}},
            "Trusted issuer 'https://login.example-en' has unknown keys: JWKS_URL.",
            "Name the issuer by its URL; keys: JWKS, JWKS_URI, AUDIENCE, USERS, CREATE_USERS, MAX_AGE.",
            "mcp_django_oauth.E093",
            id="E093-unknown-key",
        ),
        pytest.param(
            {LONG_ISSUER: {"JWKS": KEYS, "JWKS_URI": "https://idp.example.com/keys"}},
            "Trusted issuer 'https://login.example-en' needs one usable JWKS or JWKS_URI.",
            "Give the identity provider's public keys: JWKS (a dict) or JWKS_URI (https), not both.",
            "mcp_django_oauth.E094",
            id="E094",
        ),
        pytest.param(
            {LONG_ISSUER: {"JWKS": KEYS, "USERS": "username"}},
            "Trusted issuer 'https://login.example-en': USERS must be 'email' or 'linked'.",
            "Map subjects to users by 'email' (the email claim) or 'linked' (LinkedIdentity rows).",
            "mcp_django_oauth.E095",
            id="E095",
        ),
        pytest.param(
            {LONG_ISSUER: {"JWKS": KEYS, "MAX_AGE": 86400}},
            "Trusted issuer 'https://login.example-en': MAX_AGE is not 1 to 3600 seconds.",
            "Identity assertions are short-lived: set MAX_AGE to a few minutes, e.g. 300.",
            "mcp_django_oauth.E096",
            id="E096",
        ),
    ],
)
def test_e092_to_e096_trusted_issuers_that_cannot_be_used(issuers: Any, message: str, hint: str, check_id: str) -> None:
    with with_mcp(OAUTH_TRUSTED_ISSUERS=issuers):
        assert check_oauth() == [Error(message, hint=hint, id=check_id)]
    assert len(message) < 80


def test_e097_a_jwks_max_age_out_of_range() -> None:
    with with_mcp(OAUTH_JWKS_MAX_AGE=0):
        assert check_oauth() == [
            Error(
                "OAUTH_JWKS_MAX_AGE 0 is not 1 to 86400 seconds.",
                hint="Set how long a fetched JWKS is kept at most, e.g. 3600.",
                id="mcp_django_oauth.E097",
            )
        ]


def test_w092_trusted_issuers_with_a_server_class_without_the_grant() -> None:
    provider = {**OAUTH2_PROVIDER, "OAUTH2_SERVER_CLASS": "oauthlib.oauth2.Server"}
    with with_mcp(OAUTH_TRUSTED_ISSUERS={LONG_ISSUER: {"JWKS": KEYS}}), override_settings(OAUTH2_PROVIDER=provider):
        assert check_oauth() == [
            Warning(
                "OAUTH2_SERVER_CLASS does not take the identity assertion grant.",
                hint="Set OAUTH2_PROVIDER['OAUTH2_SERVER_CLASS'] to 'mcp_django.oauth.server.MCPServer'.",
                id="mcp_django_oauth.W092",
            )
        ]
