"""A URLconf for the client credentials upstream tests: a gateway in front of the live site's OAuth-protected
endpoint (`SERVERS["site"]`, set by each test), with no interceptors, open to anonymous callers (a job of
the site itself: the gateway is the machine client)."""

from __future__ import annotations

from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint("machine/mcp", name="gw-machine", backend="site", interceptors=[], allow_anonymous=True),
]
