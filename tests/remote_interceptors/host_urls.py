"""URLs of the test interceptor server: the admin (the fixture waits for it), interceptor hosts, a plain server.

A host's interceptors also run around its own tools (its list is its chain).
"""

from django.contrib import admin
from django.urls import path

from mcp_django.interceptors.protocol import InterceptorsExtension
from mcp_django.urls import endpoint

HOST = "tests.remote_interceptors.host_interceptors"

urlpatterns = [
    path("admin/", admin.site.urls),
    # Serves the echo tool with no chain of its own: the intercepting client's target.
    *endpoint(
        "plain/mcp", registry="tests.interceptors.tools.registry", name="plain", allow_anonymous=True, interceptors=[]
    ),
    # Serves the echo tool, and hosts the guard and the rewrite (interceptors/list, interceptor/invoke).
    *endpoint(
        "host/mcp",
        registry="tests.interceptors.tools.registry",
        name="host",
        allow_anonymous=True,
        interceptors=[f"{HOST}.Guard", f"{HOST}.Rewrite"],
        extensions=[InterceptorsExtension],
    ),
    # Hosts interceptors that take a minute.
    *endpoint(
        "slow/mcp",
        registry="tests.interceptors.tools.registry",
        name="slow",
        allow_anonymous=True,
        interceptors=[f"{HOST}.Stall", f"{HOST}.StallingSink"],
        extensions=[InterceptorsExtension],
    ),
    # Hosts a sink that takes a minute.
    *endpoint(
        "sink/mcp",
        registry="tests.interceptors.tools.registry",
        name="sink",
        allow_anonymous=True,
        interceptors=[f"{HOST}.StallingSink"],
        extensions=[InterceptorsExtension],
    ),
]
