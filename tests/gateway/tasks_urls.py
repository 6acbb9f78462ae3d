"""A URLconf for tests/gateway/test_tasks_switched_off_live.py: a gateway in process in front of a remote with
tasks (the example project's conformance fixture, served by the live server), and the admin beside it."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint("tasks/mcp", name="gw-tasks", backend="remote-tasks", allow_anonymous=True, interceptors=[]),
    path("admin/", admin.site.urls),
]
