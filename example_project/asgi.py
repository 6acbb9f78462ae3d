"""ASGI entry point: ``daphne example_project.asgi:application`` (or ``uvicorn example_project.asgi:application``).

The MCP endpoints of the URLconf (``/mcp``, ``/mcp/adapter``, ``/conformance/mcp``) are served by
mcp_django's fast path, outside Django's request cycle (docs/fast-path.md); every other HTTP request
(the admin, ``/conformance/view/mcp``, which opts out) goes to Django; WebSockets go to Channels, which
serves the same endpoints at ``/ws/mcp`` and ``/ws/conformance/mcp``.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

django_application: Any = get_asgi_application()

# Imported once Django is set up: the routes below reach the models and the URLconf.
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from mcp_django.asgi import get_asgi_application as mcp_asgi_application  # noqa: E402
from mcp_django.routing import websocket_endpoint, websocket_urlpatterns  # noqa: E402

if settings.DEBUG and "whitenoise.middleware.WhiteNoiseMiddleware" not in settings.MIDDLEWARE:
    # Serve the admin's static files in development, as `runserver` does; daphne alone does not.
    # (A project with WhiteNoise's middleware serves them through it: this handler would claim
    # STATIC_URL and answer 404 for files WhiteNoise serves from STATIC_ROOT.)
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    django_application = ASGIStaticFilesHandler(django_application)

application = mcp_asgi_application(
    ProtocolTypeRouter(
        {
            "http": django_application,
            "websocket": AuthMiddlewareStack(
                URLRouter(
                    [
                        *websocket_urlpatterns,
                        *websocket_endpoint("ws/conformance/mcp", endpoint="conformance"),
                    ]
                )
            ),
        }
    )
)
