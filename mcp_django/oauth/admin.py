"""The admin's list of OAuth clients, and the action that revokes them; machine clients beside it.

django-oauth-toolkit registers its models; the application (client) list is replaced by one that
shows how each client registered and how many live tokens it holds, with an action that revokes a
client: it is deleted with every token and grant it holds (each MCP request presenting one of them is
refused from the next request on, on every worker), and must register and be approved again.

Machine clients (`MachineClientAdmin`) are created here for a service user: the page shows the
client's secret once, on creation (only its hash is kept). Revoking one deletes it with its tokens.
One allowed identity assertions presents ID-JAGs for enterprise sign-in; `LinkedIdentityAdmin` lists
and links the identity providers' users to Django users.
"""

from __future__ import annotations

from typing import Any

import oauth2_provider.admin  # noqa: F401  # registers the toolkit's models first: this module replaces one
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db import models
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from oauth2_provider.admin import ApplicationAdmin
from oauth2_provider.models import get_application_model

from mcp_django.oauth.machines import create_machine_client, jwks_problem
from mcp_django.oauth.models import LinkedIdentity, MachineClient

Application = get_application_model()


class OAuthClientAdmin(ApplicationAdmin):
    """The registered OAuth clients: dynamic registration, metadata documents, and those made by hand."""

    list_display = (
        "name",
        "client_id",
        "registration_source",
        "client_type",
        "application_type",
        "live_tokens",
        "created",
    )
    list_select_related = ("mcp_metadata",)
    actions = ("revoke_clients",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        live = Q(accesstoken__expires__gt=timezone.now())
        return super().get_queryset(request).annotate(live_tokens=Count("accesstoken", filter=live, distinct=True))  # type: ignore[no-any-return]

    @admin.display(description="application type", ordering="mcp_metadata__application_type")
    def application_type(self, application: Any) -> str:
        metadata = getattr(application, "mcp_metadata", None)  # a client made by hand has none
        return str(metadata.application_type) if metadata is not None else "-"

    @admin.display(description="live tokens", ordering="live_tokens")
    def live_tokens(self, application: Any) -> int:
        return int(application.live_tokens)

    @admin.action(description="Revoke selected clients (delete them and every token they hold)")
    def revoke_clients(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        _revoke(self, request, list(queryset))


def _revoke(model_admin: admin.ModelAdmin[Any], request: HttpRequest, applications: list[Any]) -> None:
    for application in applications:
        application.delete()  # cascades to its access and refresh tokens and grants
    model_admin.message_user(request, f"Revoked {len(applications)} client(s) and every token they held.")


class MachineClientForm(forms.ModelForm):  # type: ignore[type-arg]
    """A new machine client: its name, its service user, how it authenticates."""

    name = forms.CharField(max_length=255)
    service_user = forms.ModelChoiceField(queryset=get_user_model().objects.all())
    jwks_uri = forms.URLField(required=False, max_length=2000, assume_scheme="https")

    class Meta:
        model = MachineClient
        fields = ("auth_method", "jwks", "jwks_uri", "identity_assertions")

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        if data.get("auth_method") == MachineClient.PRIVATE_KEY_JWT:
            problem = jwks_problem(data.get("jwks"), data.get("jwks_uri") or "")
            if problem is not None:
                raise forms.ValidationError(problem)
        return data


class MachineClientAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Machine clients: each one's service user and auth method; created here, revoked by the action."""

    list_display = ("name", "client_id", "service_user", "auth_method", "identity_assertions", "live_tokens")
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_select_related = ("application", "application__user")
    actions = ("revoke_machine_clients",)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = MachineClientForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ("application",) if obj is not None else ()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        live = Q(application__accesstoken__expires__gt=timezone.now())
        queryset: QuerySet[Any] = super().get_queryset(request)
        annotated: QuerySet[Any] = queryset.annotate(
            live_tokens=Count("application__accesstoken", filter=live, distinct=True)
        )
        return annotated

    @admin.display(description="name", ordering="application__name")
    def name(self, machine: MachineClient) -> str:
        return str(machine.application.name)

    @admin.display(description="client id")
    def client_id(self, machine: MachineClient) -> str:
        return str(machine.application.client_id)

    @admin.display(description="live tokens", ordering="live_tokens")
    def live_tokens(self, machine: Any) -> int:
        return int(machine.live_tokens)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        machine, secret = create_machine_client(
            form.cleaned_data["name"],
            form.cleaned_data["service_user"],
            auth_method=obj.auth_method,
            jwks=obj.jwks,
            jwks_uri=obj.jwks_uri,
            identity_assertions=obj.identity_assertions,
        )
        obj.application = machine.application
        obj._state.adding = False
        obj._state.db = machine._state.db
        message = f"client_id: {machine.application.client_id}"
        if secret is not None:
            message += f"; client_secret: {secret} (shown once: only its hash is kept)"
        self.message_user(request, message, messages.WARNING)

    @admin.action(description="Revoke selected machine clients (delete them and every token they hold)")
    def revoke_machine_clients(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        _revoke(self, request, [machine.application for machine in queryset])


class LinkedIdentityAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Users of trusted identity providers and the Django users they sign in as (`"USERS": "linked"`)."""

    list_display = ("subject", "issuer", "user", "created")
    list_filter = ("issuer",)
    search_fields = ("subject", "user__username", "user__email")
    raw_id_fields = ("user",)


if admin.site.is_registered(Application):
    admin.site.unregister(Application)
admin.site.register(Application, OAuthClientAdmin)
admin.site.register(MachineClient, MachineClientAdmin)
admin.site.register(LinkedIdentity, LinkedIdentityAdmin)
