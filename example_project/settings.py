"""Settings for the mcp_django example project: the demo app and the conformance fixture server.

Development settings only (DEBUG on, a fixed secret key, SQLite in the repository). The database path
can be moved with ``MCP_EXAMPLE_DB`` (the live tests point it at a temporary file);
``MCP_EXAMPLE_DATABASE_URL`` (``postgresql://user:password@host:port/name``) serves it from PostgreSQL
instead, through psycopg 3 (the production-shaped tests do; docs/deployment.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import django

from example_project import telemetry as example_telemetry
from example_project.demo import idp as demo_idp
from mcp_django.oauth.defaults import OAUTH2_PROVIDER as OAUTH2_PROVIDER_DEFAULTS

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "django-insecure-mcp-django-example-only-never-deploy-this-key")
# The secret the demo's webhook receiver (/hooks/books, demo/hooks.py) verifies event deliveries with: the one
# its subscriptions are made with. A development value, as SECRET_KEY's.
DEMO_WEBHOOK_SECRET = os.environ.get(
    "MCP_EXAMPLE_WEBHOOK_SECRET", "whsec_ZGVtby13ZWJob29rLXNlY3JldC1ub3QtZm9yLXByb2R1Y3Rpb24="
)
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]

INSTALLED_APPS = [
    # daphne first: it makes `runserver` serve the ASGI application, streaming responses included.
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "channels",
    "mcp_django",
    # The site as the OAuth 2.1 authorization server of its MCP endpoints (the `oauth` extra, docs/oauth.md).
    "oauth2_provider",
    "mcp_django.oauth",
    # Django's task framework runs the tools declared as tasks (docs/tasks.md): the database backend
    # and its worker (`manage.py db_worker`); on Django 5.2 through the `django-tasks` backport.
    *([] if django.VERSION >= (6,) else ["django_tasks"]),
    "django_tasks_db",
    "mcp_django.tasks",  # the MCP tasks extension: its model, admin and checks
    # Remote MCP servers (SERVERS below): gateways, hubs, remote interceptors; their admin rows and the
    # pages where users connect their own accounts (docs/gateway.md).
    "mcp_django.gateway",
    "mcp_django.ui",  # MCP Apps: tools' views rendered from templates (docs/apps.md)
    # Server Cards at each endpoint's /server-card and the AI Catalog at /.well-known/ai-catalog.json.
    "mcp_django.discovery",
    # Events (SEP-3415): the demo's book.added, by poll, push and signed webhooks (docs/events.md).
    "mcp_django.events",
    "example_project.demo",
    "example_project.conformance",
]

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "example_project.wsgi.application"
ASGI_APPLICATION = "example_project.asgi.application"

# Each sync tool call one transaction, as a view (docs/declarations.md); off by default here, since on
# SQLite with IMMEDIATE transactions every call would then take the write lock, read-only ones too.
ATOMIC_REQUESTS = os.environ.get("MCP_EXAMPLE_ATOMIC_REQUESTS") == "1"
DATABASES: dict[str, dict[str, Any]] = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("MCP_EXAMPLE_DB", str(BASE_DIR / "db.sqlite3")),
        # daphne runs sync code (the ORM, sync tools) in a thread pool; wait for SQLite's lock
        # instead of failing with "database is locked" under concurrent requests. Transactions take
        # the write lock as they begin, where that wait applies: a deferred one that reads and then
        # writes fails at once when another connection (a task worker) wrote in between (W101).
        "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        # The threads that run database work off the event loop (MCP_DJANGO["DATABASE_THREADS"]) keep
        # their connection between requests only when it may outlive one (docs/settings.md).
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        "ATOMIC_REQUESTS": ATOMIC_REQUESTS,
    }
}
if os.environ.get("MCP_EXAMPLE_DATABASE_URL"):
    _url = urlsplit(os.environ["MCP_EXAMPLE_DATABASE_URL"])
    DATABASES["default"] = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(_url.path.lstrip("/")),
        "USER": unquote(_url.username or ""),
        "PASSWORD": unquote(_url.password or ""),
        "HOST": _url.hostname or "",
        "PORT": str(_url.port or ""),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        "ATOMIC_REQUESTS": ATOMIC_REQUESTS,
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# In memory for one process; set MCP_EXAMPLE_REDIS_URL to share one layer between workers (channels_redis).
CHANNEL_LAYERS: dict[str, dict[str, Any]] = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
if os.environ.get("MCP_EXAMPLE_REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 times socket reads out after 5 s, as long as channels_redis blocks waiting for a
            # message: under load an idle stream's wait then fails. Reads may take longer than that wait.
            "CONFIG": {"hosts": [{"address": os.environ["MCP_EXAMPLE_REDIS_URL"], "socket_timeout": 30}]},
        }
    }

# Where this project is served: the demo's gateways and interceptor server front its own endpoints over HTTP.
# `make demo` exports it from DEMO_HOST and DEMO_PORT, which also count when set by hand (`DEMO_PORT=8002
# python manage.py mcp_inspect`), so every URL below follows the port the demo serves on.
EXAMPLE_BASE_URL = (
    os.environ.get("MCP_EXAMPLE_BASE_URL")
    or f"http://{os.environ.get('DEMO_HOST', '127.0.0.1')}:{os.environ.get('DEMO_PORT', '8000')}"
).rstrip("/")

example_telemetry.configure()

MCP_DJANGO = {
    "SERVER_INFO": {"name": "mcp-django-example", "version": "0.1.0"},
    "INSTRUCTIONS": "A demo catalogue of books. Use the tools to search it and the prompts to review a book.",
    # What the Server Cards add to what each endpoint says of itself (docs/discovery.md): /mcp/server-card.
    "SERVER_CARD": {"title": "mcp_django demo bookshop"},
    # Redact e-mail addresses, card and phone numbers from tool arguments and results, then keep an audit
    # trail of every tool call (MCP tool calls in the admin). The conformance endpoint opts out (urls.py).
    "INTERCEPTORS": [
        "mcp_django.interceptors.redaction.RedactionInterceptor",
        "mcp_django.interceptors.audit.AuditSinkInterceptor",
    ],
    # Open sessions per anonymous client address (the package's default is 100): the official conformance suite,
    # run against /conformance/mcp, opens hundreds from one address without ending them (docs/concepts.md).
    "SESSION_MAX_ANONYMOUS": 1000,
    # OAuth tokens this site issues first (a DRF token class refuses a bearer value it does not know),
    # then the demo users' DRF tokens, then a logged-in browser session.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "mcp_django.oauth.authentication.OAuth2Authentication",
        "mcp_django.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # MCP_EXAMPLE_OTEL=console adds OpenTelemetry spans printed to stdout (example_project/telemetry.py).
    # Skills (SEP-2640) are not installed here but named by the endpoints that serve them (urls.py).
    # (The gateway app, INSTALLED_APPS above, installs the extension that runs the interceptor lists'
    # {"SERVER": ...} entries: remote interceptor servers.)
    "EXTENSIONS": [*example_telemetry.EXTENSIONS],
    # bob's group grants TEAM here; carol's group grants SYSTEM through a GroupScope row (see seed_demo).
    "SCOPE_GROUPS": {"mcp-team": "TEAM"},
    # Browser pages (besides localhost ones) that may call the endpoints, space-separated: docs/cors.md.
    "ALLOWED_ORIGINS": os.environ.get("MCP_EXAMPLE_ALLOWED_ORIGINS", "").split(),
    # The remote MCP servers, by name (docs/gateway.md), all of them endpoints of this project (urls.py):
    # the demo's interceptor server, which /guarded/mcp and the chained gateway /gateway/chain/mcp name;
    # the conformance fixture (or another server's, MCP_EXAMPLE_GATEWAY_BACKEND_URL) the gateways front,
    # and the first gateway, which the second one fronts in turn (chained gateways).
    # The hub's patience with each remote's listing (docs/federation.md); the live tests give a hub on a busy
    # machine longer (MCP_EXAMPLE_REMOTE_LIST_TIMEOUT).
    "REMOTE_LIST_TIMEOUT": float(os.environ.get("MCP_EXAMPLE_REMOTE_LIST_TIMEOUT", "5")),
    "SERVERS": {
        "demo": {"URL": f"{EXAMPLE_BASE_URL}/interceptors/mcp", "TIMEOUT": 2},
        "conformance": {
            "URL": os.environ.get("MCP_EXAMPLE_GATEWAY_BACKEND_URL", f"{EXAMPLE_BASE_URL}/conformance/mcp"),
        },
        "gateway": {"URL": f"{EXAMPLE_BASE_URL}/gateway/mcp"},
        # the catalogue's anonymous endpoint, one of the hub's remotes (/hub/mcp)
        "books": {"URL": f"{EXAMPLE_BASE_URL}/books/mcp"},
    },
}

# Enterprise sign-in (docs/oauth.md) against the demo's own identity provider, only while MCP_EXAMPLE_DEMO_IDP_KEY
# names its key file (`make demo` sets it; the key is made there on first use, never committed):
# `manage.py demo_id_jag alice` prints an ID-JAG for alice that the demo-machine client exchanges for a token.
if os.environ.get(demo_idp.KEY_ENV):
    MCP_DJANGO["OAUTH_TRUSTED_ISSUERS"] = demo_idp.trusted_issuers()

OAUTH2_PROVIDER = {**OAUTH2_PROVIDER_DEFAULTS}

# No handler of their own: records reach the root logger's, the one daphne installs (or, for a command,
# Python's last-resort one on stderr), so each is written once; Django's default console handler for
# "django" beside daphne's wrote every 404 twice.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {
        "django": {"handlers": [], "level": "INFO"},
        "mcp_django": {"handlers": [], "level": os.environ.get("MCP_DJANGO_LOG_LEVEL", "WARNING")},
    },
}
