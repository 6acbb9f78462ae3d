"""A URLconf for the fast-path tests: endpoints on the fast path, one opted out, one with session
authentication, and a plain Django view beside them."""

from __future__ import annotations

import asyncio

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.authentication import BaseAuthentication, SessionAuthentication

from mcp_django import Context, Registry
from mcp_django.auth import TokenAuthentication
from mcp_django.urls import endpoint
from tests.http_urls import count, echo

registry = Registry("asgi-tests")

cancelled: list[str] = []
"""Names of the `wait` calls that were cancelled (a disconnected client cancels its request)."""


registry.tool(echo)
registry.tool(count)


@registry.tool
async def wait(ctx: Context, name: str) -> str:
    """Report progress once, then wait until cancelled."""
    await ctx.report_progress(1, 2)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.append(name)
        raise
    return "never"


class ReadsTheRequest(BaseAuthentication):
    """An authentication class mcp_django does not know: taken to need the whole Django request."""

    def authenticate(self, request: object) -> None:
        return None


def hello(request: HttpRequest) -> HttpResponse:
    """A plain Django view, served with the project's middleware."""
    return HttpResponse("hello", content_type="text/plain")


urlpatterns = [
    *endpoint("mcp", registry=registry, name="fast", allow_anonymous=True),
    *endpoint("view/mcp", registry=registry, name="view", allow_anonymous=True, fast_path=False),
    *endpoint(
        "session/mcp",
        registry=registry,
        name="session",
        allow_anonymous=True,
        authentication_classes=[TokenAuthentication, SessionAuthentication],
    ),
    *endpoint(
        "token/mcp", registry=registry, name="token", allow_anonymous=True, authentication_classes=[TokenAuthentication]
    ),
    *endpoint(
        "custom/mcp",
        registry=registry,
        name="custom",
        allow_anonymous=True,
        authentication_classes=[TokenAuthentication, ReadsTheRequest],
    ),
    path("hello/", hello),
]
