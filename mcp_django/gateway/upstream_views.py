"""The pages where a signed-in user connects their own account to each remote server with `"AUTH": "oauth"`.

- `mcp-upstream` (GET): the servers, whether the user is connected to each, and the buttons; with
  `?server=<name>` (the URL a URL-mode elicitation sends a user to) that server comes first, marked;
- `mcp-upstream-connect` (POST): discovery, registration, then a redirect to the authorization server
  with a fresh `state` and PKCE verifier, both kept (encrypted) in the user's session;
- `mcp-upstream-callback` (GET): the authorization server's answer: the `state` must be one this
  session started for this server (and is spent), then the code and verifier are exchanged for tokens;
- `mcp-upstream-disconnect` (POST): forgets the user's tokens for the server.

The OAuth work is `client.auth.authorization`'s; the storage `gateway.upstream`'s. docs/federation.md.
"""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any, Final

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from mcp_django.client.auth import authorization
from mcp_django.client.conf import client_settings
from mcp_django.client.config import ServerConfig
from mcp_django.client.servers import server_config
from mcp_django.gateway.models import UpstreamCredential
from mcp_django.gateway.upstream import CONNECT_PAGE, decrypt, encrypt, save_tokens

_SESSION_KEY: Final = "mcp_django.upstream"
_PENDING_KEPT: Final = 5
"""Flows one session may have started and not finished (a user with several tabs); older ones lapse."""


def oauth_servers() -> list[ServerConfig]:
    """The `SERVERS` entries that sign each user in with OAuth, in settings order (broken ones left out: checks)."""
    found = []
    for name in client_settings.SERVERS:
        try:
            server = server_config(name)
        except (LookupError, ValueError):
            continue
        if server.oauth is not None and server.url is not None:
            found.append(server)
    return found


def _server(name: str) -> ServerConfig:
    for server in oauth_servers():
        if server.name == name:
            return server
    raise Http404("No such server signs users in with OAuth")


def _page(request: HttpRequest, error: str | None = None, status: int = 200) -> HttpResponse:
    user: Any = request.user  # signed in (login_required)
    rows = {row.server: row for row in UpstreamCredential.objects.filter(user=user)}
    asked = request.GET.get("server")
    servers = [
        {"name": server.name, "credential": rows.get(server.name), "asked": server.name == asked}
        for server in oauth_servers()
    ]
    servers.sort(key=lambda server: not server["asked"])  # the one a client sent the user for, first
    return render(request, "mcp_django/upstream.html", {"servers": servers, "error": error}, status=status)


@login_required
@require_GET
def connections(request: HttpRequest) -> HttpResponse:
    """The user's connections to the remote servers."""
    return _page(request)


@login_required
@require_POST
def connect(request: HttpRequest, server: str) -> HttpResponse:
    """Start connecting the user's account to `server`: off to its authorization server."""
    remote = _server(server)
    redirect_uri = request.build_absolute_uri(reverse("mcp-upstream-callback", args=[remote.name]))
    try:
        discovery = authorization.discover(remote)
        registration = authorization.register(remote, discovery, redirect_uri)
    except authorization.UpstreamAuthError as error:
        return _page(request, f"{remote.name} cannot be connected: {error}", status=502)
    state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    pending: dict[str, str] = dict(request.session.get(_SESSION_KEY) or {})
    flow = {
        "server": remote.name,
        "verifier": verifier,
        "redirect_uri": redirect_uri,
        "client_id": registration.client_id,
        "client_secret": registration.client_secret,
        "auth_method": registration.auth_method,
        "discovery": dataclasses.asdict(discovery),
    }
    pending[state] = encrypt(flow)
    request.session[_SESSION_KEY] = dict(list(pending.items())[-_PENDING_KEPT:])
    url = authorization.authorization_url(remote, discovery, registration, redirect_uri, state, verifier)
    return HttpResponseRedirect(url)


def _flow(request: HttpRequest, state: str, server: str) -> dict[str, Any] | None:
    """The flow this session started with `state` for `server`, spent (a state answers once); None if none."""
    pending: dict[str, str] = dict(request.session.get(_SESSION_KEY) or {})
    sealed = pending.pop(state, None) if state else None
    request.session[_SESSION_KEY] = pending
    flow = decrypt(sealed) if sealed is not None else None
    return flow if flow is not None and flow.get("server") == server else None


@login_required
@require_GET
def callback(request: HttpRequest, server: str) -> HttpResponse:
    """The authorization server's answer: check `state`, exchange the code (with the PKCE verifier), keep the tokens."""
    remote = _server(server)
    state = request.GET.get("state", "")
    flow = _flow(request, state, remote.name)
    if flow is None:
        return _page(request, f"{remote.name}: this answer is not for a connection you started here.", 400)
    discovery = authorization.discovery_of(flow["discovery"])
    try:  # the state was checked above; RFC 9207's iss here: a mix-up attack answers from another server
        code = authorization.authorization_code(discovery, {**request.GET.dict(), "state": state}, state)
    except authorization.UpstreamAuthError as error:
        return _page(request, f"{remote.name} did not connect: {error}", 400)
    registration = authorization.Registration(flow["client_id"], flow["client_secret"], flow.get("auth_method"))
    try:
        token = authorization.exchange_code(
            remote,
            discovery.token_endpoint,
            registration,
            code=code,
            redirect_uri=flow["redirect_uri"],
            verifier=flow["verifier"],
            resource=discovery.resource,
        )
    except authorization.UpstreamAuthError as error:
        return _page(request, f"{remote.name} did not connect: {error}", 502)
    save_tokens(request.user, remote.name, discovery, registration, token)
    return HttpResponseRedirect(reverse(CONNECT_PAGE))


@login_required
@require_POST
def disconnect(request: HttpRequest, server: str) -> HttpResponse:
    """Forget the user's tokens for `server`."""
    user: Any = request.user  # signed in (login_required)
    UpstreamCredential.objects.filter(user=user, server=server).delete()
    return HttpResponseRedirect(reverse(CONNECT_PAGE))
