"""The benchmark project's two ASGI applications: `fast_path` (mcp_django's own) and `django_view` (Django's).

Both serve the same URLconf; `django_view` runs every request through Django's request cycle and the
startproject middleware, `fast_path` answers the MCP endpoints itself. Until `mcp_django.asgi` exists,
`fast_path` is Django's application too and the harness says so (`FAST_PATH_AVAILABLE`).
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from django.core.asgi import get_asgi_application

django_view: Any = get_asgi_application()

try:
    from mcp_django.asgi import get_asgi_application as get_fast_path_application
except ImportError:  # the fast path has not landed in this checkout
    FAST_PATH_AVAILABLE = False
    fast_path: Any = django_view
else:
    FAST_PATH_AVAILABLE = True
    fast_path = get_fast_path_application(django_view)
