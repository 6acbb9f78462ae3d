"""Machine clients (SEP-1046, `io.modelcontextprotocol/oauth-client-credentials`): creation and assertions.

A machine client gets its tokens with the client credentials grant, as its service user, authenticated
by `client_secret_basic` or by a signed JWT (`private_key_jwt`, RFC 7523 §2.2). An assertion is accepted
only when it is signed by one of the client's keys with an asymmetric algorithm, its `iss` and `sub`
are the client's id, its `aud` names this server (its issuer or token endpoint URL), it expires within
`OAUTH_CLIENT_ASSERTION_MAX_AGE` seconds, and its `jti` was never accepted before. A JWKS given by URL
is fetched by `MCPMetadataFetcher`, with the SSRF limits and the time bound of client ID metadata
documents, and cached (`mcp_django.oauth.keys`). PyJWT checks the signature and the claims; nothing
here is cryptography of its own.
"""

from __future__ import annotations

import datetime
import secrets
from typing import Any, Final

import jwt
from django.db import IntegrityError, transaction
from django.utils import timezone
from oauth2_provider import cimd
from oauth2_provider.models import get_application_model

from mcp_django.oauth.conf import oauth_settings
from mcp_django.oauth.keys import KeysUnavailable, decode_with, key_set, signing_keys
from mcp_django.oauth.models import ClientAssertion, MachineClient

__all__ = [
    "ASSERTION_TYPE",
    "SIGNING_ALGORITHMS",
    "AssertionRefused",
    "create_machine_client",
    "jwks_problem",
    "verify_assertion",
]

ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SIGNING_ALGORITHMS: Final = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
"""The algorithms a client assertion may be signed with: asymmetric only (no `none`, no shared-secret HMAC)."""
_LEEWAY: Final = 30
"""Seconds of clock difference allowed on `exp`, `nbf` and `iat`."""


class AssertionRefused(ValueError):
    """A client assertion this server does not accept; the message says why (for the log, not the client)."""


def create_machine_client(
    name: str,
    user: Any,
    *,
    auth_method: str = MachineClient.SECRET_BASIC,
    jwks: Any = None,
    jwks_uri: str = "",
    identity_assertions: bool = False,
) -> tuple[MachineClient, str | None]:
    """Create a confidential client for the service `user`; `(machine client, secret)`.

    The secret is returned once, never stored (the toolkit keeps only its hash); None for a
    `private_key_jwt` client, which has no usable secret. With `identity_assertions`, the client may
    also exchange ID-JAGs of trusted identity providers for tokens of the users they name
    (`mcp_django.oauth.enterprise`).

    Raises:
        ValueError: an unknown auth method, or keys a `private_key_jwt` client cannot use.
    """
    if auth_method not in dict(MachineClient.AUTH_METHODS):
        raise ValueError(f"Unknown auth method {auth_method!r}")
    if auth_method == MachineClient.PRIVATE_KEY_JWT:
        problem = jwks_problem(jwks, jwks_uri)
        if problem is not None:
            raise ValueError(problem)
    secret = secrets.token_urlsafe(32)
    application_model = get_application_model()
    with transaction.atomic():
        application = application_model.objects.create(
            name=name,
            user=user,
            client_type=application_model.CLIENT_CONFIDENTIAL,
            authorization_grant_type=application_model.GRANT_CLIENT_CREDENTIALS,
            client_secret=secret,  # hashed on save
            redirect_uris="",
            skip_authorization=True,
        )
        machine = MachineClient.objects.create(
            application=application,
            auth_method=auth_method,
            jwks=jwks,
            jwks_uri=jwks_uri or "",
            identity_assertions=identity_assertions,
        )
    return machine, (secret if auth_method == MachineClient.SECRET_BASIC else None)


def jwks_problem(jwks: Any, jwks_uri: str) -> str | None:
    """Why a `private_key_jwt` client cannot use these keys (exactly one of a JWKS or an https URL), else None."""
    if bool(jwks) == bool(jwks_uri):
        return "A private_key_jwt client needs a JWKS or a JWKS URL, not both"
    if jwks_uri:
        try:
            cimd._validate_client_id_url(jwks_uri)
        except cimd.CIMDError as error:
            return f"JWKS URL not accepted: {error}"
        return None
    try:
        key_set(jwks)
    except KeysUnavailable as error:
        return str(error)
    return None


def verify_assertion(assertion: str, audiences: list[str]) -> Any:
    """The `Application` of the machine client that signed `assertion` for one of `audiences`.

    Records the assertion's `jti`, so the same assertion is refused the next time.

    Raises:
        AssertionRefused: not a JWT, not signed by the client's keys, expired, too long-lived, for
            another audience, replayed, or from no `private_key_jwt` machine client.
    """
    try:
        header = jwt.get_unverified_header(assertion)
        unverified = jwt.decode(assertion, options={"verify_signature": False})
    except jwt.PyJWTError as error:
        raise AssertionRefused(f"not a JWT: {error}") from None
    client_id = unverified.get("iss")
    if not isinstance(client_id, str) or unverified.get("sub") != client_id:
        raise AssertionRefused("iss and sub must both be the client_id")
    algorithm = header.get("alg")
    if algorithm not in SIGNING_ALGORITHMS:
        raise AssertionRefused(f"alg {algorithm!r} is not accepted")
    machine = (
        MachineClient.objects.select_related("application")
        .filter(application__client_id=client_id, auth_method=MachineClient.PRIVATE_KEY_JWT)
        .first()
    )
    if machine is None:
        raise AssertionRefused("no private_key_jwt machine client has this client_id")
    try:
        keys = signing_keys(machine.jwks, machine.jwks_uri, header.get("kid"))
    except KeysUnavailable as error:
        raise AssertionRefused(f"the client's keys: {error}") from None
    claims = _verified_claims(assertion, algorithm, keys, client_id, audiences)
    _check_lifetime(claims)
    _remember(machine.application, claims)
    return machine.application


def _verified_claims(
    assertion: str, algorithm: str, keys: list[jwt.PyJWK], client_id: str, audiences: list[str]
) -> dict[str, Any]:
    try:
        return decode_with(
            assertion,
            keys,
            algorithm,
            audience=audiences,
            issuer=client_id,
            leeway=_LEEWAY,
            options={"require": ["exp", "iss", "sub", "aud", "jti"]},
        )
    except jwt.InvalidSignatureError:
        raise AssertionRefused("not signed by any key of the client") from None
    except jwt.PyJWTError as error:
        raise AssertionRefused(str(error)) from None


def _check_lifetime(claims: dict[str, Any]) -> None:
    max_age = int(oauth_settings.OAUTH_CLIENT_ASSERTION_MAX_AGE)
    now = timezone.now().timestamp()
    if claims["exp"] - now > max_age + _LEEWAY:
        raise AssertionRefused(f"exp is more than {max_age} s away")
    issued = claims.get("iat")
    if isinstance(issued, int | float) and claims["exp"] - issued > max_age + _LEEWAY:
        raise AssertionRefused(f"lives longer than {max_age} s")
    if not isinstance(claims["jti"], str) or not claims["jti"] or len(claims["jti"]) > 255:
        raise AssertionRefused("jti must be a string of at most 255 characters")


def _remember(application: Any, claims: dict[str, Any]) -> None:
    now = timezone.now()
    ClientAssertion.objects.filter(application=application, expires__lt=now).delete()
    expires = datetime.datetime.fromtimestamp(claims["exp"] + _LEEWAY, tz=datetime.UTC)
    try:
        with transaction.atomic():
            ClientAssertion.objects.create(application=application, jti=claims["jti"], expires=expires)
    except IntegrityError:
        raise AssertionRefused("this assertion (its jti) was used before") from None
