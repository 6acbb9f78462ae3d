"""The OAuth2 validator of an MCP authorization server (`OAUTH2_PROVIDER["OAUTH2_VALIDATOR_CLASS"]`).

django-oauth-toolkit's `OAuth2Validator`, with two rules it leaves out:

- **a replayed authorization code revokes what its first exchange got** (RFC 6749 §4.1.2, RFC 9700
  §4.2.4: someone else holds the code). The tokens of a code's exchange are one refresh token
  family, named after the code (`code_family`), so the replay finds them once the code itself is gone.
- **a deactivated user's grants end**: neither a code nor a refresh token issued to them is exchanged
  any more (their access tokens are already refused at every request, `OAuth2Authentication`).
- **machine clients** (`mcp_django.oauth.machines`) authenticate only as they were created to
  (`client_secret_basic` in the `Authorization` header, or a `private_key_jwt` assertion), get tokens
  with the client credentials grant as their service user, for the MCP endpoints named by `resource`
  (RFC 8707, required, as for people), with the requested scopes their service user has.
- **identity assertions** (`mcp_django.oauth.enterprise`, through `mcp_django.oauth.server.MCPServer`):
  a machine client allowed to presents an ID-JAG of a trusted identity provider and gets a token for
  the user it names, bound to the assertion's `resource`, within its `scope` and the user's scope.

Check `mcp_django_oauth.W073` says when `OAUTH2_VALIDATOR_CLASS` names a class that is not this one (or a subclass).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749 import errors, utils

from mcp_django.oauth.authentication import addressed_host, target_problem
from mcp_django.oauth.enterprise import GrantRefused, redeem
from mcp_django.oauth.grants import granted_scopes
from mcp_django.oauth.machines import ASSERTION_TYPE, AssertionRefused, verify_assertion
from mcp_django.scopes import get_scope_policy

log = logging.getLogger("mcp_django.oauth")

_CODE_FAMILIES: Final = uuid.UUID("3e0b6f5e-6a8f-4c4e-9a61-7d1f1c2b9c4d")


def code_family(code: str) -> uuid.UUID:
    """The refresh token family of the tokens an authorization code is exchanged for."""
    return uuid.uuid5(_CODE_FAMILIES, hashlib.sha256(code.encode("utf-8", "surrogateescape")).hexdigest())


def _revoke_exchange_of(code: str) -> None:
    get_refresh_token_model().revoke_family(code_family(code))


def _machine_client(application: Any) -> Any:
    try:
        return application.machine_client
    except AttributeError:  # the reverse one-to-one raises a subclass of it when there is none
        return None


def _issuer_audiences(request: Any) -> list[str]:
    """This server's issuer URL, with and without a trailing slash, as the token request addressed it."""
    host = addressed_host(request.headers)
    if not host:
        return []  # addressed to no host: no audience to name
    issuer = str(oauth2_settings.OIDC_ISS_ENDPOINT or f"{_scheme(request)}://{host}").rstrip("/")
    return [issuer, issuer + "/"]


def _scheme(request: Any) -> str:
    # The toolkit marks a request that came over https.
    return "https" if request.headers.get("X_DJANGO_OAUTH_TOOLKIT_SECURE") else "http"


def _token_endpoint_audiences(request: Any) -> list[str]:
    """What a client assertion's `aud` may name: this server's issuer (with or without a slash) or token URL."""
    issuers = _issuer_audiences(request)
    if not issuers:
        return []
    # The toolkit passes the path alone.
    token_url = urlunsplit((_scheme(request), addressed_host(request.headers), urlsplit(request.uri).path, "", ""))
    return [token_url, *issuers]


def _body_values(request: Any, name: str) -> list[str]:
    return [value for key, value in (request.decoded_body or []) if key == name]


class MCPOAuth2Validator(OAuth2Validator):
    """The toolkit's validator; a replayed code revokes its first exchange, an inactive user's grants end,
    machine clients get client credentials tokens as their service user."""

    def client_authentication_required(self, request: Any, *args: Any, **kwargs: Any) -> bool:
        if getattr(request, "client_assertion", None) is not None:
            return True
        return bool(super().client_authentication_required(request, *args, **kwargs))

    def authenticate_client(self, request: Any, *args: Any, **kwargs: Any) -> bool:
        assertion = getattr(request, "client_assertion", None)
        if assertion is not None or getattr(request, "client_assertion_type", None) is not None:
            return self._authenticate_assertion(request, assertion)
        if not super().authenticate_client(request, *args, **kwargs):
            return False
        machine = _machine_client(request.client)
        if machine is None:
            return True
        # A machine client authenticates as it was created to: a private_key_jwt client's secret is
        # never a way in, and client_secret_basic means the header (not the body, RFC 6749 §2.3.1).
        return bool(machine.auth_method == machine.SECRET_BASIC and self._extract_basic_auth(request))

    def _authenticate_assertion(self, request: Any, assertion: Any) -> bool:
        if getattr(request, "client_assertion_type", None) != ASSERTION_TYPE or not isinstance(assertion, str):
            return False
        if self._extract_basic_auth(request) or getattr(request, "client_secret", None):
            return False  # one way of authenticating per request (RFC 6749 §2.3)
        try:
            application = verify_assertion(assertion, _token_endpoint_audiences(request))
        except AssertionRefused as refused:
            log.info("Client assertion refused: %s", refused)
            return False
        if request.client_id and request.client_id != application.client_id:
            return False
        if not application.is_usable(request):
            return False
        request.client = application
        return True

    def validate_scopes(
        self, client_id: str, scopes: list[str], client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_scopes(client_id, scopes, client, request, *args, **kwargs):
            return False
        if request.grant_type != "client_credentials":
            return True
        user = client.user
        if _machine_client(client) is None or user is None or not user.is_active:
            return False
        granted = granted_scopes(scopes, get_scope_policy().scope_of(user))
        if not granted:
            return False
        request.scopes = granted  # capped by the service user's scope, as a person's consent is
        problem = target_problem(_body_values(request, "resource"), addressed_host(request.headers))
        if problem is not None:
            raise errors.CustomOAuth2Error(error="invalid_target", description=problem, request=request)
        return True

    def validate_identity_assertion(self, request: Any) -> None:
        """Check the ID-JAG of an authenticated client's JWT bearer grant; set its user, scopes and resource.

        Raises:
            oauthlib.oauth2.rfc6749.errors.OAuth2Error: the error the token endpoint answers with.
        """
        machine = _machine_client(request.client)
        if machine is None or not machine.identity_assertions:
            raise errors.UnauthorizedClientError(
                description="This client may not present identity assertions.", request=request
            )
        try:
            user, claims = redeem(request.assertion, request.client.client_id, _issuer_audiences(request))
        except GrantRefused as refused:
            raise errors.CustomOAuth2Error(
                error=refused.error, description=refused.description, request=request
            ) from None
        resource = claims["resource"]
        asked = _body_values(request, "resource")
        if asked and asked != [resource]:
            raise errors.CustomOAuth2Error(
                error="invalid_target", description="resource must be the assertion's resource.", request=request
            )
        problem = target_problem([resource], addressed_host(request.headers))
        if problem is not None:
            raise errors.CustomOAuth2Error(error="invalid_target", description=problem, request=request)
        allowed = str(claims.get("scope") or "").split()
        requested = (
            utils.scope_to_list(request.scope) if request.scope else allowed or list(oauth2_settings.DEFAULT_SCOPES)
        )
        if "scope" in claims:
            requested = [name for name in requested if name in allowed]  # the identity provider's policy bounds it
        request.user = user
        granted = granted_scopes(requested, get_scope_policy().scope_of(user)) if requested else []
        if not granted or not self.validate_scopes(request.client.client_id, granted, request.client, request):
            raise errors.InvalidScopeError(description="No scope asked for is granted to this user.", request=request)
        request.scopes = granted  # capped by the user's scope, as a person's consent is
        request.resource = [resource]  # RFC 8707: the token is for the endpoint the identity provider named

    def _create_access_token(self, expires: Any, request: Any, token: Any, source_refresh_token: Any = None) -> Any:
        if request.grant_type == "client_credentials":
            request.user = request.client.user  # the toolkit issues these to no user: MCP needs the service user
        return super()._create_access_token(expires, request, token, source_refresh_token)

    def validate_code(self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            if not get_grant_model().objects.filter(code=code, application=client).exists():
                _revoke_exchange_of(code)  # exchanged already (or never issued: then there is nothing to revoke)
            return False
        return bool(request.user is not None and request.user.is_active)

    def invalidate_authorization_code(self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any) -> None:
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        except errors.InvalidGrantError:
            _revoke_exchange_of(code)  # two exchanges at once: neither keeps its tokens
            raise

    def validate_refresh_token(self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        return bool(request.user is not None and request.user.is_active)

    def _create_refresh_token(
        self, request: Any, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        if previous_refresh_token is None and request.grant_type == "authorization_code":
            family = code_family(request.code)
            type(refresh_token).objects.filter(pk=refresh_token.pk).update(token_family=family)
            refresh_token.token_family = family
        return refresh_token
