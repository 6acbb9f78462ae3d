"""WSGI entry point: ``gunicorn example_project.wsgi:application`` (or mod_wsgi, uWSGI).

The MCP endpoints of the URLconf are served by mcp_django's WSGI fast path, outside Django's request
cycle (docs/fast-path.md, "Under WSGI"); every other request (the admin, ``/conformance/view/mcp``,
which opts out) goes to Django. Under WSGI a call cannot ask the client anything mid-request, and a
session's GET stream is answered 405; progress and log notifications still reach the client, as
server-sent events, where the server streams the answer (gunicorn does).
"""

import os

from mcp_django.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

application = get_wsgi_application()
