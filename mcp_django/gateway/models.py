"""The gateway app's rows: one per remote MCP server (`RemoteServer`), each user's tokens for one server
(`UpstreamCredential`), the pinned definition of each remote tool and prompt (`RemoteDefinition`).

They belong to the `mcp_django_gateway` app (`mcp_django.gateway`). Until the gateway became an app of its
own they were the `mcp_django` app's: `UpstreamCredential` kept its table (`mcp_django_upstreamcredential`),
and `RemoteServer` merges the two rows a remote server had there (`RemoteServerState`, which switched its
tools, resources and prompts, and `InterceptorServer`, which switched and amended its interceptors); the
migrations carried every row over.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from mcp_django.models import ScopedState, help_texts

__all__ = ["RemoteDefinition", "RemoteServer", "UpstreamCredential"]


@help_texts(
    enabled="Off: its tools, resources and prompts vanish from every gateway and hub.",
    min_scope="Callers below this scope see nothing of the server. Blank: each endpoint's own scope for it.",
    present_in_code="False: MCP_DJANGO['SERVERS'] names it no more (a row with a URL still adds its interceptors).",
)
class RemoteServer(ScopedState):
    """The admin's say over one remote MCP server: as a source of gateways and hubs, and as an interceptor server.

    As a source (`enabled`, `min_scope`): switched off, its tools, resources and prompts vanish from every
    gateway and hub in front of it; a minimum scope raises or lowers the one each endpoint gives it.
    As an interceptor server (`interceptors_enabled`, `url`, `headers`, `fail_open`, `timeout`): a row
    named like an entry of `MCP_DJANGO["SERVERS"]` amends it (blank fields keep the settings' values), a
    row with a new name and a URL adds one; its interceptors join every chain whose list names it
    (`{"SERVER": name}`) or all servers (`{"SERVER": "*"}`): docs/remote-interceptors.md.
    Every server of `SERVERS` gets a row (after `migrate`, and by `manage.py mcp_sync`).
    """

    name = models.SlugField(max_length=100, unique=True, help_text="The server's name in SERVERS, or a new one.")
    interceptors_enabled = models.BooleanField(
        "interceptors enabled", default=True, help_text="Off: its interceptors stop running."
    )
    url = models.URLField(
        "URL", max_length=500, blank=True, help_text="Its Streamable HTTP endpoint. Blank: the settings' URL."
    )
    headers = models.JSONField(
        null=True, blank=True, help_text="HTTP headers sent to it, e.g. an Authorization. Blank: the settings'."
    )
    fail_open = models.BooleanField(
        null=True,
        blank=True,
        help_text="On: an interceptor server that cannot be listed or called is skipped instead of refusing "
        "every call. Blank: as configured (default off).",
    )
    timeout = models.FloatField(
        "timeout (seconds)",
        null=True,
        blank=True,
        validators=[MinValueValidator(0.001)],
        help_text="Bound on each interceptor call to it, in seconds (like its TIMEOUT). Blank: as configured.",
    )

    class Meta:
        verbose_name = "MCP remote server"
        verbose_name_plural = "MCP remote servers"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.headers is not None and not (
            isinstance(self.headers, dict) and all(isinstance(value, str) for value in self.headers.values())
        ):
            raise ValidationError({"headers": "Give a JSON object of strings."})


class UpstreamCredential(models.Model):
    """One user's OAuth tokens for one remote MCP server of `SERVERS` (an entry with `"AUTH": "oauth"`).

    The tokens (and a client secret the remote's authorization server gave at registration) are one
    Fernet token in `secret`, under keys derived from `SECRET_KEY` (`SECRET_KEY_FALLBACKS` still
    decrypt); the other fields say who is connected to what, for the admin. docs/federation.md.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_upstream_credentials"
    )
    server = models.CharField(max_length=100, help_text="The name of the remote server in MCP_DJANGO['SERVERS'].")
    issuer = models.CharField(max_length=500, help_text="The authorization server that issued the tokens.")
    token_endpoint = models.CharField(max_length=500, editable=False)
    client_id = models.CharField(max_length=500, editable=False)
    scope = models.CharField(max_length=500, blank=True, default="")
    secret = models.TextField(editable=False, help_text="The encrypted tokens.")
    expires_at = models.DateTimeField(null=True, blank=True, help_text="When the access token expires.")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "mcp_django_upstreamcredential"  # the table the mcp_django app created (its 0015)
        verbose_name = "MCP upstream connection"
        verbose_name_plural = "MCP upstream connections"
        ordering = ["server", "user"]
        constraints = [models.UniqueConstraint(fields=["user", "server"], name="mcp_upstream_one_per_user_server")]

    def __str__(self) -> str:
        return f"{self.user} → {self.server}"


class RemoteDefinition(models.Model):
    """A remote tool's, prompt's, resource's or resource template's definition as an admin let it through:
    pinned at the remote's first listing, withheld while the remote serves another or lists a new one
    (docs/federation.md#pinned-definitions).

    `approved` is what every gateway and hub serves (none yet for a new item); `seen` is a different or new
    definition the remote listed since, which nothing serves (neither listed nor callable) until an admin
    approves it.
    """

    class State(models.TextChoices):
        PINNED = "pinned", "pinned"
        CHANGED = "changed", "changed: withheld until approved"
        NEW = "new", "new: withheld until approved"

    class Kind(models.TextChoices):
        TOOL = "tool", "tool"
        PROMPT = "prompt", "prompt"
        RESOURCE = "resource", "resource"
        TEMPLATE = "template", "resource template"

    server = models.CharField(max_length=100, db_index=True, help_text="The remote server's name in SERVERS.")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(
        max_length=255,
        help_text="The name or URI the remote gives it (without a hub's namespace; a digest when longer).",
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.PINNED, db_index=True)
    approved = models.JSONField(null=True, blank=True, help_text="The definition served (none yet when new).")
    approved_digest = models.CharField(max_length=64, blank=True)
    seen = models.JSONField(null=True, blank=True, help_text="A different definition the remote lists, withheld.")
    seen_digest = models.CharField(max_length=64, blank=True)
    first_seen = models.DateTimeField(default=timezone.now)
    changed_at = models.DateTimeField(null=True, blank=True, help_text="When the remote first listed `seen`.")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "MCP remote definition"
        verbose_name_plural = "MCP remote definitions"
        ordering = ["server", "kind", "name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "kind", "name"], name="mcp_django_gateway_definition_unique")
        ]

    def __str__(self) -> str:
        return f"{self.server}: {self.kind} {self.name}"
