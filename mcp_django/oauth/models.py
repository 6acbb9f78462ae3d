"""Machine clients: confidential OAuth clients an administrator creates for a service user.

A machine client is one of django-oauth-toolkit's `Application` rows (confidential, the client
credentials grant, its `user` the service user it acts as) with a `MachineClient` beside it saying
how it authenticates at the token endpoint: `client_secret_basic`, or `private_key_jwt` (RFC 7523)
with its public keys as a JWKS given by value or by URL. `ClientAssertion` remembers the `jti` of
every assertion accepted until it expires, so none is accepted twice.

`ClientMetadata` keeps what a registered public client declared that the toolkit's `Application` has no
field for (`application_type`, SEP-837). For enterprise sign-in (`mcp_django.oauth.enterprise`),
`LinkedIdentity` ties a user of a trusted identity provider (its issuer and subject) to a Django user,
and `IdentityAssertion` remembers each accepted identity assertion's `jti` until it expires.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from oauth2_provider.settings import oauth2_settings

__all__ = ["ClientAssertion", "ClientMetadata", "IdentityAssertion", "LinkedIdentity", "MachineClient"]


class MachineClient(models.Model):
    """How a confidential client for a service user authenticates (`mcp_django.oauth.machines`)."""

    SECRET_BASIC = "client_secret_basic"
    PRIVATE_KEY_JWT = "private_key_jwt"
    AUTH_METHODS = ((SECRET_BASIC, "client_secret_basic"), (PRIVATE_KEY_JWT, "private_key_jwt (RFC 7523)"))

    application = models.OneToOneField(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="machine_client"
    )
    auth_method = models.CharField(max_length=32, choices=AUTH_METHODS, default=SECRET_BASIC)
    jwks = models.JSONField(null=True, blank=True, help_text="The client's public keys (a JWKS), for private_key_jwt.")
    jwks_uri = models.URLField(
        max_length=2000, blank=True, help_text="Or the https URL of its JWKS (cached as its Cache-Control allows)."
    )
    identity_assertions = models.BooleanField(
        default=False,
        help_text="May exchange identity assertions (ID-JAG) of trusted identity providers for tokens of the users "
        "they name (enterprise sign-in).",
    )

    class Meta:
        verbose_name = "machine client"

    def __str__(self) -> str:
        return str(self.application)

    @property
    def service_user(self) -> Any:
        """The user whose scope the client's tokens carry (the application's `user`)."""
        return self.application.user


class ClientAssertion(models.Model):
    """The `jti` of an accepted client assertion, kept until the assertion expires: a replay finds it."""

    application = models.ForeignKey(oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE)
    jti = models.CharField(max_length=255)
    expires = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["application", "jti"], name="mcp_oauth_assertion_once")]

    def __str__(self) -> str:
        return f"{self.jti} ({self.application})"


class ClientMetadata(models.Model):
    """What a registered public client declared beyond the toolkit's `Application`: its `application_type`."""

    NATIVE = "native"
    WEB = "web"
    APPLICATION_TYPES = ((NATIVE, "native"), (WEB, "web"))

    application = models.OneToOneField(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="mcp_metadata"
    )
    application_type = models.CharField(max_length=16, choices=APPLICATION_TYPES, default=NATIVE)

    class Meta:
        verbose_name = "client metadata"
        verbose_name_plural = "client metadata"

    def __str__(self) -> str:
        return f"{self.application} ({self.application_type})"


class LinkedIdentity(models.Model):
    """A user of a trusted identity provider (`issuer`, `subject`) who signs in here as `user`."""

    issuer = models.CharField(max_length=2000)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="linked_identities")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "linked identity"
        verbose_name_plural = "linked identities"
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="mcp_oauth_identity_once")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer} → {self.user}"


class IdentityAssertion(models.Model):
    """The `jti` of an accepted identity assertion (ID-JAG), kept until it expires: a replay finds it."""

    issuer = models.CharField(max_length=2000)
    jti = models.CharField(max_length=255)
    expires = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "jti"], name="mcp_oauth_identity_assertion_once")]

    def __str__(self) -> str:
        return f"{self.jti} ({self.issuer})"
