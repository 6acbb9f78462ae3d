"""The MCP client's system checks: the servers a connection authenticates to itself (`"AUTH": {"TYPE":
"client_credentials"}`) and the OAuth client's settings, `mcp_django.E240` to `E243`, `W240`.

The client's settings ship with the core app, and so do its checks: `MCPDjangoConfig.ready()` registers them,
gateway or not, so `MCPClient` used alone is checked too. Loading this module loads only the client's settings;
a check imports the client's entry helpers only when an entry asks for client credentials. docs/checks.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import setting as _setting
from mcp_django.client.conf import client_settings

_DOCS: Final = "(docs/client.md)"


@register(Tags.compatibility)
def check_client_credentials(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check each `SERVERS` entry whose `AUTH` is client credentials (E240 to E243) and the loopback switch (W240)."""
    from django.conf import settings

    messages: list[CheckMessage] = []
    servers = client_settings.SERVERS
    for name, config in servers.items() if isinstance(servers, Mapping) else ():
        auth = config.get("AUTH") if isinstance(config, Mapping) else None
        if isinstance(auth, Mapping) and auth.get("TYPE") == "client_credentials":
            messages += _problems(f"{_setting('SERVERS')}[{str(name)[:20]!r}]", config, auth)
    if client_settings.REMOTE_OAUTH_ALLOW_LOOPBACK is True and not settings.DEBUG:
        hint = "Turn it off outside development: remote metadata could aim the site at local ports."
        message = f"{_setting('REMOTE_OAUTH_ALLOW_LOOPBACK')} is on without DEBUG."
        messages.append(Warning(message, hint=hint, id="mcp_django.W240"))
    return messages


def _problems(where: str, config: Mapping[str, Any], auth: Mapping[str, Any]) -> list[CheckMessage]:
    from mcp_django.client.servers import client_credentials_problem, sends_own_authorization, signs_in

    problem = client_credentials_problem(auth)
    if problem is not None:
        hint = f"AUTH {problem}: CLIENT_ID, then CLIENT_SECRET or PRIVATE_KEY {_DOCS}."
        return [Error(f"{where} has a malformed client_credentials AUTH.", hint=hint, id="mcp_django.E240")]
    if not signs_in(config):
        hint = "Client credentials need a URL: a stdio server has no authorization server."
        return [Error(f"{where} AUTH client_credentials is for HTTP servers only.", hint=hint, id="mcp_django.E241")]
    key = auth.get("PRIVATE_KEY")
    if isinstance(key, str):
        from mcp_django.client.auth.authorization import ClientKey, UpstreamAuthError

        algorithm = str(auth.get("SIGNING_ALGORITHM", "ES256"))
        try:
            ClientKey(key, algorithm).load()
        except (UpstreamAuthError, ImportError):
            hint = "PRIVATE_KEY is the client's private key in PEM, of SIGNING_ALGORITHM's family."
            return [Error(f"{where} PRIVATE_KEY is not a {algorithm} private key.", hint=hint, id="mcp_django.E242")]
    if sends_own_authorization(config):
        hint = "Remove TOKEN and the Authorization header: the client credentials' token is sent."
        return [Error(f"{where} has client credentials and a TOKEN too.", hint=hint, id="mcp_django.E243")]
    return []
