"""Database models of mcp_django."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.query_utils import DeferredAttribute
from django.utils import timezone
from django.utils.module_loading import import_string

from mcp_django.protocol.errors import validation_problems
from mcp_django.scopes import Scope

__all__ = [
    "ControlRoom",
    "GroupScope",
    "IdempotentCall",
    "InterceptorState",
    "MCPSession",
    "ProviderState",
    "ScopeField",
    "StateVersion",
    "ToolCallRecord",
    "ToolState",
]


class MCPSession(models.Model):
    """A handshake-era MCP session, opened by `initialize` on one endpoint.

    Rows are written when a session opens, when its state changes (`notifications/initialized`,
    `logging/setLevel`, `resources/subscribe` and `unsubscribe`) and, throttled, to push `expires_at`
    forward while the client is active.
    Requests read sessions through the in-process cache of `mcp_django.endpoints.sessions.DatabaseSessionStore`.
    """

    session_id = models.CharField(max_length=128, unique=True)
    endpoint_name = models.CharField(max_length=100, help_text="The endpoint the session was opened on.")
    endpoint_path = models.CharField(max_length=255)
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="mcp_sessions",
        help_text="The user who opened the session; empty for anonymous clients.",
    )
    protocol_version = models.CharField(max_length=32)
    client_info = models.JSONField(null=True, blank=True)
    client_capabilities = models.JSONField(default=dict, blank=True)
    log_level = models.CharField(max_length=16, blank=True, default="")
    initialized = models.BooleanField(default=False)
    subscriptions = models.JSONField(
        default=list, blank=True, help_text="The resource URIs the client subscribed to (resources/subscribe)."
    )
    created = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    client_address = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_index=True,
        help_text="The network address that opened it, for an anonymous client (its sessions are capped per address).",
    )

    class Meta:
        verbose_name = "MCP session"
        verbose_name_plural = "MCP sessions"
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return f"{self.endpoint_name} session {self.session_id[:8]}…"


if TYPE_CHECKING:
    _SmallIntegerFieldBase = models.PositiveSmallIntegerField[Any, Any]
else:
    _SmallIntegerFieldBase = models.PositiveSmallIntegerField


class _ScopeDescriptor(DeferredAttribute):
    """Turns what is assigned to a `ScopeField` (a `Scope`, its number or its name) into the `Scope` at once."""

    def __set__(self, instance: models.Model, value: Any) -> None:
        instance.__dict__[self.field.attname] = None if value is None else Scope.parse(value)


class ScopeField(_SmallIntegerFieldBase):
    """A `Scope`, stored as its number: takes a `Scope`, its number or its name (`"SYSTEM"`), gives back a `Scope`."""

    descriptor_class = _ScopeDescriptor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("choices", [(scope.value, scope.label) for scope in Scope])
        super().__init__(*args, **kwargs)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Scope | None:
        return None if value is None else Scope(value)

    def to_python(self, value: Any) -> Scope | None:
        if value is None or value == "":
            return None
        try:
            return Scope.parse(int(value) if isinstance(value, str) and value.isdigit() else value)
        except ValueError as error:
            raise ValidationError(str(error), code="invalid") from None

    def get_prep_value(self, value: Any) -> int | None:
        scope = self.to_python(value)
        return None if scope is None else int(scope)


class GroupScope(models.Model):
    """Grants every member of a Django auth group an MCP scope (see `mcp_django.scopes`).

    A user's scope is the highest any of their groups grants, here or in `MCP_DJANGO["SCOPE_GROUPS"]`;
    a change applies to the user's next request.
    """

    group = models.OneToOneField(
        "auth.Group",
        on_delete=models.CASCADE,
        related_name="mcp_scope",
        help_text="Every member of this group gets the scope.",
    )
    scope = ScopeField(
        help_text="user < team < system: members see every tool, resource and prompt up to this scope.",
    )

    class Meta:
        verbose_name = "MCP group scope"
        verbose_name_plural = "MCP group scopes"
        ordering = ["group__name"]

    def __str__(self) -> str:
        return f"{self.group} → {Scope(self.scope).label}"


class ToolCallRecord(models.Model):
    """One tool call, as the audit interceptor saw it (`mcp_django.interceptors.audit`).

    Rows are committed before the call's reply leaves, concurrent calls' rows in one transaction, or
    spooled and replayed while the database is unavailable; arguments are stored as the tool received
    them, after the redaction interceptor (when it runs before the audit sink).
    """

    class Outcome(models.TextChoices):
        OK = "ok", "ok"
        ERROR = "error", "error"
        BLOCKED = "blocked", "blocked"
        # The caller was told the call did not finish in time; a sync tool's code may have run on after.
        TIMEOUT = "timeout", "timeout"
        # The caller went away before the answer (a disconnect, a cancellation); a sync tool's code ran on.
        CANCELLED = "cancelled", "cancelled"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="mcp_tool_calls",
        help_text="The caller; empty for anonymous clients.",
    )
    endpoint = models.CharField(max_length=100, blank=True, db_index=True)
    tool = models.CharField(max_length=128, db_index=True)
    arguments = models.JSONField(default=dict, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    duration_ms = models.FloatField(help_text="From the start of the request phase to the tool's result.")
    origin = models.CharField(max_length=32, default="agent", help_text="Who made the call: an MCP client's agent.")
    trace_id = models.CharField(
        max_length=64, blank=True, db_index=True, help_text="The call's trace id: a spooled row is replayed once by it."
    )
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "MCP tool call"
        verbose_name_plural = "MCP tool calls"
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.tool} ({self.outcome})"


class IdempotentCall(models.Model):
    """A `tools/call` sent with an idempotency key, and its result once it has one (docs/side-effects.md).

    The row is claimed (`running`) before the tool runs and committed at once, so a retry on another
    worker finds it; the result is written in the call's own transaction when the call is atomic on
    this model's database, so the tool's writes and the stored result commit or roll back together.
    """

    class State(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"

    principal = models.CharField(max_length=255, blank=True, help_text="The caller; empty for anonymous clients.")
    endpoint = models.CharField(max_length=100, blank=True)
    key = models.CharField(max_length=255, help_text="The key as the caller sent it.")
    tool = models.CharField(max_length=255, help_text="The tool the first call named.")
    digest = models.CharField(max_length=64, help_text="SHA-256 of the tool name and arguments of the first call.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.RUNNING)
    result = models.JSONField(null=True, blank=True, help_text="The result a retry gets back.")
    started = models.DateTimeField(default=timezone.now, help_text="When the call running under the key started.")
    expires = models.DateTimeField(db_index=True, help_text="When the key is forgotten (IDEMPOTENCY_TTL).")

    class Meta:
        verbose_name = "MCP idempotent call"
        verbose_name_plural = "MCP idempotent calls"
        ordering = ["-started"]
        constraints = [
            models.UniqueConstraint(fields=["principal", "endpoint", "key"], name="mcp_django_idempotency_key_unique")
        ]
        indexes = [models.Index(fields=["principal", "started"], name="mcp_django_idem_principal")]

    def __str__(self) -> str:
        return f"{self.key} ({self.tool}, {self.state})"


M = TypeVar("M", bound="type[models.Model]")


def help_texts(**texts: str) -> Callable[[M], M]:
    """Word the help texts of fields a model inherits from an abstract base, for that model (each has its own copy)."""

    def word(model: M) -> M:
        for name, text in texts.items():
            field = model._meta.get_field(name)
            assert isinstance(field, models.Field), name
            field.help_text = text
        return model

    return word


class SwitchedState(models.Model):
    """The admin's say over one thing that lives in code: switched on or off, and flagged once code has it no more.

    Rows are created from the code (`manage.py mcp_sync`, and after every `migrate`); a row whose thing
    is gone from the code is flagged (`present_in_code`) and has no effect. A subclass names the thing
    (a unique field) and words the help texts for it (`help_texts`).
    """

    enabled = models.BooleanField(default=True)
    present_in_code = models.BooleanField(default=True, editable=False)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class ScopedState(SwitchedState):
    """A switched thing whose minimum scope the admin may also raise or lower (blank: as the code says)."""

    min_scope = models.PositiveSmallIntegerField(
        "minimum scope", null=True, blank=True, choices=[(scope.value, scope.label) for scope in Scope]
    )

    class Meta:
        abstract = True

    def scope_label(self, otherwise: str) -> str:
        """The minimum scope as the admin lists it: the one set here, else `otherwise` (what applies without one)."""
        return f"{Scope(self.min_scope).label} (set here)" if self.min_scope is not None else otherwise


@help_texts(
    enabled="Off: the provider's tools, resources and prompts vanish.",
    min_scope="Callers below this scope see nothing of the provider. Blank: the code's scope.",
    present_in_code="False: no installed app names this provider any more.",
)
class ProviderState(ScopedState):
    """The admin's say over one provider: switched on or off, and its minimum scope raised or lowered.

    The provider itself lives in code (`mcp_providers`); a blank field means "as the code says".
    Rows are looked up by `provider_id`; a row whose provider is gone from the code is flagged
    (`present_in_code`, the check `mcp_django.W010`) and has no effect.
    """

    provider_id = models.CharField("provider id", max_length=200, unique=True)

    class Meta:
        verbose_name = "MCP provider"
        verbose_name_plural = "MCP providers"
        ordering = ["provider_id"]

    def __str__(self) -> str:
        return self.provider_id


@help_texts(
    enabled="Off: the interceptor stops running.",
    present_in_code="False: no interceptor list configures this name any more.",
)
class InterceptorState(SwitchedState):
    """The admin's say over one configured interceptor (by its name): on or off, mode, fail-open, priority, options.

    The interceptor itself is configured in `MCP_DJANGO["INTERCEPTORS"]` (or an endpoint's list); a
    blank field means "as configured". Options are validated against the interceptor class's own
    `Options` model: the class the row's name runs as, recorded when the rows are synced with the
    code (`class_path`). Rows for names no list configures any more are flagged and have no effect.
    """

    class Mode(models.TextChoices):
        ACTIVE = "active", "active"
        AUDIT = "audit", "audit (results are recorded, never enforced)"

    name = models.CharField(max_length=200, unique=True, help_text="The interceptor's NAME in the settings list.")
    mode = models.CharField(max_length=16, blank=True, choices=Mode.choices, help_text="Blank: as configured.")
    fail_open = models.BooleanField(null=True, blank=True, help_text="Blank: as configured.")
    priority = models.IntegerField(null=True, blank=True, help_text="Both phases. Blank: as configured.")
    options = models.JSONField(
        null=True, blank=True, help_text="Replaces the configured OPTIONS; checked against the class's options."
    )
    class_path = models.CharField(
        max_length=255, blank=True, default="", editable=False, help_text="The class this name runs as, in code."
    )

    class Meta:
        verbose_name = "MCP interceptor"
        verbose_name_plural = "MCP interceptors"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """Refuse options the interceptor's class rejects (when the row knows a class that is still in code)."""
        if self.options is None or not self.class_path:
            return
        try:
            cls = import_string(self.class_path)
        except ImportError:  # gone from the code: the row is flagged and has no effect
            return
        import pydantic  # here, not when the package loads (issue 34)

        try:
            cls.Options.model_validate(self.options)
        except pydantic.ValidationError as error:
            where, problem, *_ = validation_problems(error)[0]
            message = f"{cls.__name__} rejects these options ({where or 'options'}: {problem})."
            raise ValidationError({"options": message}) from None


@help_texts(
    enabled="Off: the tool vanishes from lists and is unknown to calls.",
    present_in_code="False: no endpoint lists this tool now (gone from the code, or its provider is off).",
)
class ToolState(SwitchedState):
    """The admin's say over one tool, by name, on every endpoint: switched off, it is unknown everywhere.

    Tools live in code (static declarations) or come from providers; rows are created for every tool
    a caller of the highest scope sees on some endpoint, and flagged when no endpoint lists it any more.
    """

    name = models.CharField(max_length=128, unique=True)

    class Meta:
        verbose_name = "MCP tool"
        verbose_name_plural = "MCP tools"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class StateVersion(models.Model):
    """A stamp every worker polls (at most twice a second) to learn that the admin changed something.

    `key` is `"state"` (providers, interceptors, group scopes), `"sessions"` (a session was ended) or
    `"auth"` (a token, user, group membership, group or group scope changed: cached credentials go);
    `version` is a fresh random number on every change, so even a rolled-back change is noticed.
    """

    key = models.CharField(max_length=32, unique=True)
    version = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "MCP state version"
        verbose_name_plural = "MCP state versions"

    def __str__(self) -> str:
        return f"{self.key}: {self.version}"


class ControlRoom(models.Model):
    """No table: carries the `view_dashboard` permission and puts the dashboard in the admin index."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("view_dashboard", "Can view the MCP dashboard")]
        verbose_name = "MCP dashboard"
        verbose_name_plural = "MCP dashboard"

    def __str__(self) -> str:
        return "MCP dashboard"
