"""System checks of the servers that sign each user in with OAuth (`"AUTH": "oauth"`): E165 to E169, W165, W166.

docs/checks.md; `MCPDjangoConfig.ready()` registers them beside the gateway's other checks.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import setting as _setting
from mcp_django.client.conf import client_settings
from mcp_django.client.servers import OAUTH_KEYS, oauth_of, sends_own_authorization, signs_in
from mcp_django.endpoints.admission import LOCAL_HOSTS
from mcp_django.gateway.upstream import CONNECT_PAGE

_DOCS: Final = "(docs/federation.md)"


@register(Tags.compatibility, Tags.urls)
def check_upstream_oauth(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check each `SERVERS` entry's `AUTH` (E165 to E168, W165), Authlib (E169) and the connect page (W166).

    Client credentials entries are the client's own checks' (`client.checks`, mcp_django.E240 to E243).
    """
    servers = client_settings.SERVERS
    if not isinstance(servers, Mapping):
        return []  # mcp_django_gateway.E040
    messages: list[CheckMessage] = []
    oauth = False
    for name, config in servers.items():
        auth = config.get("AUTH") if isinstance(config, Mapping) else None
        if auth is not None and not (isinstance(auth, Mapping) and auth.get("TYPE") == "client_credentials"):
            problems = _problems(f"{_setting('SERVERS')}[{str(name)[:20]!r}]", config)
            messages += problems
            oauth = oauth or not problems
    if oauth:
        messages += _deployment()
    return messages


def _problems(where: str, config: Mapping[str, Any]) -> list[CheckMessage]:
    auth = config["AUTH"]
    if not (auth == "oauth" or (isinstance(auth, Mapping) and auth.get("TYPE") == "oauth" and set(auth) <= OAUTH_KEYS)):
        hint = f"Say 'oauth', or {{'TYPE': 'oauth', 'CLIENT_ID': ..., 'SCOPES': [...]}} {_DOCS}."
        return [Error(f"{where} AUTH is not 'oauth' nor an OAuth dict.", hint=hint, id="mcp_django_gateway.E165")]
    if not signs_in(config):
        hint = "Per-user OAuth needs a URL: a stdio server has no authorization server."
        return [Error(f"{where} AUTH 'oauth' is for HTTP servers only.", hint=hint, id="mcp_django_gateway.E166")]
    if sends_own_authorization(config):
        hint = "Remove TOKEN and the Authorization header: each user's own token is sent instead."
        return [Error(f"{where} has AUTH 'oauth' and a TOKEN of its own.", hint=hint, id="mcp_django_gateway.E167")]
    try:
        oauth_of(auth)
    except ValueError:
        hint = "CLIENT_ID and CLIENT_SECRET are strings (a secret needs an id); SCOPES a list of words."
        return [
            Error(
                f"{where} AUTH has a bad CLIENT_ID, CLIENT_SECRET or SCOPES.", hint=hint, id="mcp_django_gateway.E168"
            )
        ]
    url = urlsplit(config["URL"])
    if url.scheme == "http" and url.hostname not in LOCAL_HOSTS:
        hint = "Use https: the users' tokens would cross the network in the clear."
        return [Warning(f"{where} sends users' tokens over plain http.", hint=hint, id="mcp_django_gateway.W165")]
    return []


def _deployment() -> list[CheckMessage]:
    from django.urls import NoReverseMatch, reverse

    messages: list[CheckMessage] = []
    if importlib.util.find_spec("authlib") is None:
        hint = "Install the extra: pip install 'django-mcp-host[upstream]'."
        messages.append(
            Error("AUTH 'oauth' servers need Authlib, not installed.", hint=hint, id="mcp_django_gateway.E169")
        )
    try:
        reverse(CONNECT_PAGE)
    except NoReverseMatch:
        hint = "Include mcp_django.urls: users connect their accounts at its mcp/upstream/ page."
        messages.append(Warning("AUTH 'oauth' servers but no connect page.", hint=hint, id="mcp_django_gateway.W166"))
    return messages
