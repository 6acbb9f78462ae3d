"""The fast-path test URLconf (`tests.asgi_urls`) and an endpoint whose tools report where and how long they ran."""

from __future__ import annotations

import threading
import time

from mcp_django import Registry
from mcp_django.urls import endpoint
from tests.asgi_urls import urlpatterns as asgi_urlpatterns

registry = Registry("wsgi-tests")


@registry.tool
def thread_of_call() -> int:
    """The id of the thread this sync tool runs on."""
    return threading.get_ident()


@registry.tool(timeout=0.05)
def overruns(seconds: float) -> str:
    """Run past this tool's time limit (a sync tool cannot be stopped: its caller is told the call timed out)."""
    time.sleep(seconds)
    return "finished"


urlpatterns = [
    *asgi_urlpatterns,
    *endpoint("where/mcp", registry=registry, name="where", allow_anonymous=True, sessions=False),
]
