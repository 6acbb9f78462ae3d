"""Settings of the benchmark project `make bench` serves: a startproject-like site, SQLite in a temporary file.

The database path comes from ``BENCH_DB`` (the harness points it at a temporary folder); with
``BENCH_DATABASE_URL`` (``postgresql://user@host:port/name``) the database is PostgreSQL instead (the
harness's throwaway cluster, `benchmarks/postgres.py`), with the same persistent connections. The middleware is
`startproject`'s, so the Django-view rows pay what a real project pays; the fast path skips it by design.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

SECRET_KEY = "benchmark-only-never-deploy-this-key"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "rest_framework",
    "rest_framework.authtoken",
    "channels",
    "mcp_django",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "benchmarks.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BENCH_DB", "bench.sqlite3"),
        # WAL with synchronous=NORMAL: what a deployment on SQLite would run (sessions and audit rows are
        # written on the hot path); production belongs on PostgreSQL.
        "OPTIONS": {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
        # Persistent connections, as docs/deployment.md tells a production site to run: the fast path's
        # database threads keep theirs between calls. With Django's default of 0 each sync tool's job
        # opens and closes a connection (a sync ORM count() cost 1,000-1,750 µs CPU per call in
        # process that way, against 250-320 with these two lines: docs/performance.md).
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
}
if os.environ.get("BENCH_DATABASE_URL"):
    _url = urlsplit(os.environ["BENCH_DATABASE_URL"])
    DATABASES["default"] = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(_url.path.lstrip("/")),
        "USER": unquote(_url.username or ""),
        "HOST": _url.hostname or "",
        "PORT": str(_url.port or ""),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

MCP_DJANGO = {
    "SERVER_INFO": {"name": "mcp-django-bench", "version": "0"},
    "STATIC_MODULE": None,
    "DEFAULT_AUTHENTICATION_CLASSES": ["mcp_django.auth.TokenAuthentication"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
