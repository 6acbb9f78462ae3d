"""The admin's list of OAuth clients, and the action that revokes them.

django-oauth-toolkit registers its models; the application (client) list is replaced by one that
shows how each client registered and how many live tokens it holds, with an action that revokes a
client: it is deleted with every token and grant it holds (each MCP request presenting one of them is
refused from the next request on, on every worker), and must register and be approved again.
"""

from __future__ import annotations

from typing import Any

import oauth2_provider.admin  # noqa: F401  # registers the toolkit's models first: this module replaces one
from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from oauth2_provider.admin import ApplicationAdmin
from oauth2_provider.models import get_application_model

__all__ = ["OAuthClientAdmin"]

Application = get_application_model()


class OAuthClientAdmin(ApplicationAdmin):
    """The registered OAuth clients: dynamic registration, metadata documents, and those made by hand."""

    list_display = ("name", "client_id", "registration_source", "client_type", "live_tokens", "created")
    actions = ("revoke_clients",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        live = Q(accesstoken__expires__gt=timezone.now())
        return super().get_queryset(request).annotate(live_tokens=Count("accesstoken", filter=live, distinct=True))  # type: ignore[no-any-return]

    @admin.display(description="live tokens", ordering="live_tokens")
    def live_tokens(self, application: Any) -> int:
        return int(application.live_tokens)

    @admin.action(description="Revoke selected clients (delete them and every token they hold)")
    def revoke_clients(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        count = 0
        for application in queryset:
            application.delete()  # cascades to its access and refresh tokens and grants
            count += 1
        self.message_user(request, f"Revoked {count} client(s) and every token they held.")


if admin.site.is_registered(Application):
    admin.site.unregister(Application)
admin.site.register(Application, OAuthClientAdmin)
