"""Machine clients: confidential OAuth clients an administrator creates for a service user.

A machine client is one of django-oauth-toolkit's `Application` rows (confidential, the client
credentials grant, its `user` the service user it acts as) with a `MachineClient` beside it saying
how it authenticates at the token endpoint: `client_secret_basic`, or `private_key_jwt` (RFC 7523)
with its public keys as a JWKS given by value or by URL. `ClientAssertion` remembers the `jti` of
every assertion accepted until it expires, so none is accepted twice.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from oauth2_provider.settings import oauth2_settings

__all__ = ["ClientAssertion", "MachineClient"]


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
        max_length=2000, blank=True, help_text="Or the https URL of its JWKS, fetched at each token request."
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
