"""The oauthlib server of an MCP authorization server (`OAUTH2_PROVIDER["OAUTH2_SERVER_CLASS"]`).

oauthlib's `Server`, whose token endpoint also takes the JWT bearer grant (RFC 7523 §2.1) for identity
assertions of trusted identity providers (`mcp_django.oauth.enterprise`). The grant answers as RFC 6749
§5.2 says: `invalid_request` without exactly one assertion, `invalid_client` (401) when the client does
not authenticate, `unauthorized_client` when it is not allowed identity assertions, `invalid_grant` for
an assertion refused, `invalid_target` for a `resource` other than the assertion's, `invalid_scope` when
no scope asked for is left. A token and no refresh token.

Check `mcp_django_oauth.W092` says when trusted issuers are set and `OAUTH2_SERVER_CLASS` is not this one.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2 import Server
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.grant_types.base import GrantTypeBase

from mcp_django.oauth.enterprise import JWT_BEARER, trusted_issuers

log = logging.getLogger("mcp_django.oauth")


class IdentityAssertionGrant(GrantTypeBase):
    """The JWT bearer grant for identity assertions; the validator (`MCPOAuth2Validator`) decides."""

    def create_token_response(self, request: Any, token_handler: Any) -> tuple[dict[str, str], str, int]:
        """The token response, or the error response for a request refused."""
        headers: dict[str, str] = self._get_default_headers()
        try:
            self.validate_token_request(request)
        except errors.OAuth2Error as error:
            log.info("Identity assertion grant refused: %s %s", error.error, error.description)
            headers.update(error.headers)
            return headers, error.json, error.status_code
        token = token_handler.create_token(request, refresh_token=False)
        for modifier in self._token_modifiers:
            token = modifier(token)
        self.request_validator.save_token(token, request)
        return headers, json.dumps(token), 200

    def validate_token_request(self, request: Any) -> None:
        """Raise the OAuth error that refuses `request`; else its user, scopes and resource are set on it."""
        if request.grant_type != JWT_BEARER:
            raise errors.UnsupportedGrantTypeError(request=request)
        for name in ("grant_type", "scope", "assertion"):
            if name in request.duplicate_params:
                raise errors.InvalidRequestError(description=f"Duplicate {name} parameter.", request=request)
        if not isinstance(getattr(request, "assertion", None), str) or not request.assertion:
            raise errors.InvalidRequestError(description="Missing assertion.", request=request)
        if not self.request_validator.authenticate_client(request):
            raise errors.InvalidClientError(request=request)
        self.request_validator.validate_identity_assertion(request)


class MCPServer(Server):
    """oauthlib's server with the identity assertion grant at its token endpoint."""

    def __init__(self, request_validator: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(request_validator, *args, **kwargs)
        self._grant_types[JWT_BEARER] = IdentityAssertionGrant(request_validator)


def takes_identity_assertions() -> bool:
    """Whether the token endpoint takes the JWT bearer grant: an issuer is trusted, and the server class has it."""
    server = oauth2_settings.OAUTH2_SERVER_CLASS
    return bool(trusted_issuers()) and isinstance(server, type) and issubclass(server, MCPServer)
