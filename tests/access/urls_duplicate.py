"""Two endpoints on one canonical path: the check mcp_django.E013 refuses it."""

from mcp_django.urls import endpoint

urlpatterns = [*endpoint("team/mcp", name="team"), *endpoint("team/mcp/", name="other-team")]
