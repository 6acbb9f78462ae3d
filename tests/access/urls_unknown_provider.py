"""An adapter naming a provider id no app registers: the check mcp_django.E014 reports it."""

from mcp_django.urls import endpoint

urlpatterns = endpoint("ops/mcp", name="ops", mode="adapter", providers=["shop.nothing"])
