"""The benchmark project's two WSGI applications: `fast_path` (`mcp_django.wsgi`) and `django_view` (Django's).

Both serve the same URLconf under gunicorn's sync worker; `django_view` runs every request through Django's
request cycle and the startproject middleware (so does django-mcpz's view, `benchmarks.mcpz`, in either),
`fast_path` answers the MCP endpoints itself.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from django.core.wsgi import get_wsgi_application

django_view: Any = get_wsgi_application()

from mcp_django.wsgi import get_wsgi_application as get_fast_path_application  # noqa: E402

fast_path = get_fast_path_application(django_view)
