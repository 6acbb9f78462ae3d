"""Enterprise sign-in: identity assertions (ID-JAG) of trusted identity providers, exchanged for tokens.

Enterprise-Managed Authorization (SEP-990, `io.modelcontextprotocol/enterprise-managed-authorization`):
the company's identity provider (Okta, Entra ...) decides who may use an MCP client with this site. The
client trades the user's ID token at the IdP for an Identity Assertion JWT Authorization Grant (ID-JAG,
RFC 8693 token exchange), then presents it here with the JWT bearer grant (RFC 7523,
`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, `assertion=<ID-JAG>`), authenticated as a
machine client allowed to (`MachineClient.identity_assertions`). No consent page: the IdP's policy is
the consent.

An ID-JAG is accepted only when its header's `typ` is `oauth-id-jag+jwt`, it is signed with an
asymmetric algorithm by a key of an issuer named in `MCP_DJANGO["OAUTH_TRUSTED_ISSUERS"]`, its `aud` is
this authorization server's issuer (or the issuer's `AUDIENCE`), its `client_id` is the authenticated
client, its `resource` an MCP endpoint of this site (RFC 8707: the token is bound to it), `exp`, `iat`
and `nbf` hold (30 s of leeway), it lives at most the issuer's `MAX_AGE`, and its `jti` was never
accepted before. Its subject becomes a Django user by email (`"USERS": "email"`, the `email` claim) or
by a `LinkedIdentity` (`"USERS": "linked"`, issuer and `sub`); a superuser only by a `LinkedIdentity`,
never by email. An unknown subject is refused, or created (with no usable password) when the issuer
says `"CREATE_USERS": True`. The token's scopes are those asked for (or the
assertion's `scope`), within the assertion's `scope`, capped by the user's own scope; no refresh token
(the client presents a fresh assertion instead, and revocation stays with the IdP).

Checks `mcp_django_oauth.E092`-`E096` say when an issuer's entry is not usable.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import jwt
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from mcp_django.oauth.conf import oauth_settings
from mcp_django.oauth.keys import KeysUnavailable, decode_with, signing_keys
from mcp_django.oauth.machines import SIGNING_ALGORITHMS, jwks_problem
from mcp_django.oauth.models import IdentityAssertion, LinkedIdentity

JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""The RFC 7523 grant type an ID-JAG is presented with."""
ID_JAG_TYPE: Final = "oauth-id-jag+jwt"
"""The `typ` of an ID-JAG's header (RFC 8725 §3.11: no other JWT passes for one)."""
USER_MAPPINGS: Final = ("email", "linked")
"""How an issuer's subjects become Django users: by the `email` claim, or by a `LinkedIdentity`."""
DEFAULT_MAX_AGE: Final = 300
_LEEWAY: Final = 30
"""Seconds of clock difference allowed on `exp`, `nbf` and `iat`."""
_CLAIM_LENGTHS: Final = {"jti": 255, "sub": 255, "client_id": 255, "resource": 2000}
"""The longest value of each string claim accepted (what the models store)."""
_KEYS: Final = frozenset({"JWKS", "JWKS_URI", "AUDIENCE", "USERS", "CREATE_USERS", "MAX_AGE"})


class GrantRefused(ValueError):
    """An identity assertion grant this server does not honour: the OAuth `error` and its description."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass(frozen=True)
class TrustedIssuer:
    """One entry of `OAUTH_TRUSTED_ISSUERS`: an identity provider whose ID-JAGs this server accepts."""

    issuer: str
    jwks: Any
    jwks_uri: str
    audience: str
    users: str
    create_users: bool
    max_age: int


def issuer_problem(issuer: Any, entry: Any) -> tuple[str, str] | None:
    """`(check id, message)` when an `OAUTH_TRUSTED_ISSUERS` entry cannot be used, else None."""
    named = repr(str(issuer)[:24])  # messages stay under 80 characters
    if not isinstance(issuer, str) or not issuer.startswith(("https://", "http://")) or not isinstance(entry, Mapping):
        return "mcp_django_oauth.E093", f"Trusted issuer {named} is no URL with a dict of settings."
    unknown = sorted(set(map(str, entry)) - _KEYS)
    if unknown:
        return "mcp_django_oauth.E093", f"Trusted issuer {named} has unknown keys: {', '.join(unknown)[:16]}."
    if jwks_problem(entry.get("JWKS"), str(entry.get("JWKS_URI") or "")) is not None:
        return "mcp_django_oauth.E094", f"Trusted issuer {named} needs one usable JWKS or JWKS_URI."
    if entry.get("USERS", "email") not in USER_MAPPINGS:
        return "mcp_django_oauth.E095", f"Trusted issuer {named}: USERS must be 'email' or 'linked'."
    max_age = entry.get("MAX_AGE", DEFAULT_MAX_AGE)
    if isinstance(max_age, bool) or not isinstance(max_age, int) or not 0 < max_age <= 3600:
        return "mcp_django_oauth.E096", f"Trusted issuer {named}: MAX_AGE is not 1 to 3600 seconds."
    return None


def trusted_issuers() -> dict[str, TrustedIssuer]:
    """The usable entries of `OAUTH_TRUSTED_ISSUERS`, by issuer (an unusable one is a check error and skipped)."""
    configured = oauth_settings.OAUTH_TRUSTED_ISSUERS
    if not isinstance(configured, Mapping):
        return {}
    return {
        issuer: TrustedIssuer(
            issuer=issuer,
            jwks=entry.get("JWKS"),
            jwks_uri=str(entry.get("JWKS_URI") or ""),
            audience=str(entry.get("AUDIENCE") or ""),
            users=str(entry.get("USERS", "email")),
            create_users=bool(entry.get("CREATE_USERS", False)),
            max_age=int(entry.get("MAX_AGE", DEFAULT_MAX_AGE)),
        )
        for issuer, entry in configured.items()
        if issuer_problem(issuer, entry) is None
    }


def redeem(assertion: str, client_id: str, audiences: list[str]) -> tuple[Any, dict[str, Any]]:
    """The user an ID-JAG presented by `client_id` names, and its verified claims.

    `audiences` are this server's issuer URLs (used when the issuer sets no `AUDIENCE`). Records the
    assertion's `jti`, so it is refused the next time.

    Raises:
        GrantRefused: `invalid_grant` for an assertion this server does not accept (see the module).
    """
    try:
        header = jwt.get_unverified_header(assertion)
        unverified = jwt.decode(assertion, options={"verify_signature": False})
    except jwt.PyJWTError as error:
        raise GrantRefused("invalid_grant", f"The assertion is not a JWT: {error}") from None
    if str(header.get("typ", "")).lower() not in (ID_JAG_TYPE, f"application/{ID_JAG_TYPE}"):
        raise GrantRefused("invalid_grant", f"The assertion's typ must be {ID_JAG_TYPE}.")
    algorithm = header.get("alg")
    if algorithm not in SIGNING_ALGORITHMS:
        raise GrantRefused("invalid_grant", f"The assertion's alg {algorithm!r} is not accepted.")
    issuer = unverified.get("iss")
    trusted = trusted_issuers().get(issuer) if isinstance(issuer, str) else None
    if trusted is None:
        raise GrantRefused("invalid_grant", "The assertion's issuer is not trusted here.")
    claims = _verified(assertion, algorithm, header.get("kid"), trusted, audiences)
    if claims.get("client_id") != client_id:
        raise GrantRefused("invalid_grant", "The assertion was issued to another client.")
    _check(claims, trusted)
    _remember(trusted, claims)
    return _user_of(trusted, claims), claims


def _verified(assertion: str, algorithm: str, kid: Any, trusted: TrustedIssuer, audiences: list[str]) -> dict[str, Any]:
    try:
        keys = signing_keys(trusted.jwks, trusted.jwks_uri, kid)
    except KeysUnavailable as error:
        raise GrantRefused("invalid_grant", f"The issuer's keys are not available: {error}") from None
    try:
        return decode_with(
            assertion,
            keys,
            algorithm,
            audience=[trusted.audience] if trusted.audience else audiences,
            issuer=trusted.issuer,
            leeway=_LEEWAY,
            options={"require": ["exp", "iat", "iss", "sub", "aud", "jti", "client_id", "resource"]},
        )
    except jwt.InvalidSignatureError:
        raise GrantRefused("invalid_grant", "The assertion is not signed by a key of its issuer.") from None
    except jwt.PyJWTError as error:
        raise GrantRefused("invalid_grant", f"The assertion is not valid: {error}") from None


def _check(claims: dict[str, Any], trusted: TrustedIssuer) -> None:
    now = timezone.now().timestamp()
    if claims["exp"] - now > trusted.max_age + _LEEWAY or claims["exp"] - claims["iat"] > trusted.max_age + _LEEWAY:
        raise GrantRefused("invalid_grant", f"The assertion lives longer than {trusted.max_age} s.")
    if claims["iat"] > now + _LEEWAY:
        raise GrantRefused("invalid_grant", "The assertion is issued in the future.")
    for name, longest in _CLAIM_LENGTHS.items():
        if not isinstance(claims[name], str) or not claims[name] or len(claims[name]) > longest:
            raise GrantRefused("invalid_grant", f"The assertion's {name} is not a string of a usable length.")
    if "scope" in claims and not isinstance(claims["scope"], str):
        raise GrantRefused("invalid_grant", "The assertion's scope is not a string.")


def _user_of(trusted: TrustedIssuer, claims: dict[str, Any]) -> Any:
    user_model = get_user_model()
    if trusted.users == "linked":
        link = (
            LinkedIdentity.objects.select_related("user").filter(issuer=trusted.issuer, subject=claims["sub"]).first()
        )
        user = link.user if link is not None else None
    else:
        email = claims.get("email")
        if not isinstance(email, str) or "@" not in email:
            raise GrantRefused("invalid_grant", "The assertion names no email to find its user by.")
        users = list(user_model._default_manager.filter(email__iexact=email)[:2])
        if len(users) > 1:
            raise GrantRefused("invalid_grant", "More than one user has the assertion's email.")
        user = users[0] if users else None
        if user is not None and getattr(user, "is_superuser", False):
            # An email is the identity provider's word alone: a superuser is reached only by a link made here.
            raise GrantRefused("invalid_grant", "A superuser signs in by a linked identity, not by email.")
    if user is None:
        if not trusted.create_users:
            raise GrantRefused("invalid_grant", "The assertion's subject has no account here.")
        user = _created_user(trusted, claims)
    if not user.is_active:
        raise GrantRefused("invalid_grant", "The assertion's user is inactive.")
    return user


def _created_user(trusted: TrustedIssuer, claims: dict[str, Any]) -> Any:
    """A new user for the assertion's subject (named by its email, else its `sub`), linked when mapped so."""
    user_model = get_user_model()
    email: str = claims["email"] if isinstance(claims.get("email"), str) else ""
    username: str = (email or claims["sub"])[:150]
    try:
        with transaction.atomic():
            fields: dict[str, Any] = {user_model.USERNAME_FIELD: username, "email": email, "password": None}
            user = user_model._default_manager.create_user(**fields)
            if trusted.users == "linked":
                LinkedIdentity.objects.create(issuer=trusted.issuer, subject=claims["sub"], user=user)
    except IntegrityError:
        raise GrantRefused("invalid_grant", "An account for the assertion's subject cannot be created.") from None
    return user


def _remember(trusted: TrustedIssuer, claims: dict[str, Any]) -> None:
    now = timezone.now()
    IdentityAssertion.objects.filter(expires__lt=now).delete()
    expires = datetime.datetime.fromtimestamp(claims["exp"] + _LEEWAY, tz=datetime.UTC)
    try:
        with transaction.atomic():
            IdentityAssertion.objects.create(issuer=trusted.issuer, jti=claims["jti"], expires=expires)
    except IntegrityError:
        raise GrantRefused("invalid_grant", "This assertion (its jti) was used before.") from None
