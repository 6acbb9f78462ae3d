"""The in-process gateway tests' URLconf with the admin beside it (tests/gateway/test_remote_server_admin.py)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

from tests.gateway.urls import urlpatterns as gateways

urlpatterns = [*gateways, path("admin/", admin.site.urls)]
