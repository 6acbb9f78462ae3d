"""A URLconf for the control-room tests: the admin, and one endpoint serving a small registry and the providers."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

from mcp_django import Registry
from mcp_django.urls import endpoint

registry = Registry("admin-tests")


@registry.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


urlpatterns = [
    path("admin/", admin.site.urls),
    *endpoint("mcp", name="control", mode="combined", registry=registry, allow_anonymous=True),
]
