"""The OAuth2 validator of an MCP authorization server (`OAUTH2_PROVIDER["OAUTH2_VALIDATOR_CLASS"]`).

django-oauth-toolkit's `OAuth2Validator`, with two rules it leaves out:

- **a replayed authorization code revokes what its first exchange got** (RFC 6749 §4.1.2, RFC 9700
  §4.2.4: someone else holds the code). The tokens of a code's exchange are one refresh token
  family, named after the code (`code_family`), so the replay finds them once the code itself is gone.
- **a deactivated user's grants end**: neither a code nor a refresh token issued to them is exchanged
  any more (their access tokens are already refused at every request, `OAuth2Authentication`).

Check `mcp_django.W073` says when `OAUTH2_VALIDATOR_CLASS` names a class that is not this one (or a subclass).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any, Final

from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

__all__ = ["MCPOAuth2Validator", "code_family"]

_CODE_FAMILIES: Final = uuid.UUID("3e0b6f5e-6a8f-4c4e-9a61-7d1f1c2b9c4d")


def code_family(code: str) -> uuid.UUID:
    """The refresh token family of the tokens an authorization code is exchanged for."""
    return uuid.uuid5(_CODE_FAMILIES, hashlib.sha256(code.encode("utf-8", "surrogateescape")).hexdigest())


def _revoke_exchange_of(code: str) -> None:
    get_refresh_token_model().revoke_family(code_family(code))


class MCPOAuth2Validator(OAuth2Validator):
    """The toolkit's validator; a replayed code revokes its first exchange, an inactive user's grants end."""

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
