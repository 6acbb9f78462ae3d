"""ASGI entry point: ``daphne example_project.asgi:application``."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

application: ASGIHandler = get_asgi_application()

from django.conf import settings  # noqa: E402  (the settings are configured by the call above)

if settings.DEBUG:
    # Serve the admin's static files in development, as `runserver` does; daphne alone does not.
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    application = ASGIStaticFilesHandler(application)
