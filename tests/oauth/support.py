"""The OAuth flow as a client runs it, over Django's test client: register, log in, consent, exchange the code."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from django.test import Client

REDIRECT_URI = "http://127.0.0.1:33418/callback"
ALL_SCOPES = "mcp:user mcp:team mcp:system"


def register(client: Client, **metadata: Any) -> tuple[int, dict[str, Any]]:
    """POST an RFC 7591 registration; `(status, body)`."""
    body = {
        "client_name": "test client",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    body = {key: value for key, value in body.items() if value is not None}
    response = client.post("/oauth/register/", data=json.dumps(body), content_type="application/json")
    return response.status_code, json.loads(response.content)


def pkce() -> tuple[str, str]:
    """`(verifier, S256 challenge)`."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(
    client_id: str, challenge: str, *, resource: str | None, scope: str = ALL_SCOPES, **extra: str
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "xyz",
        "scope": scope,
        **extra,
    }
    if resource is not None:
        params["resource"] = resource
    return "/oauth/authorize/?" + urlencode(params)


def hidden_fields(page: str) -> dict[str, str]:
    """The consent form's hidden inputs, as the browser would post them back."""
    fields = {}
    for tag in re.findall(r"<input[^>]*>", page):
        attributes = dict(re.findall(r'(\w+)="([^"]*)"', tag))
        if attributes.get("type") == "hidden" and "name" in attributes:
            fields[attributes["name"]] = html.unescape(attributes.get("value", ""))
    return fields


def approve(client: Client, url: str) -> str:
    """Open the consent page at `url` (the user logged in) and allow: the authorization code."""
    page = client.get(url)
    assert page.status_code == 200, page.content
    response = client.post(url, data={**hidden_fields(page.content.decode()), "allow": "Allow"})
    assert response.status_code == 302, response.content
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["state"] == ["xyz"], response["Location"]
    return query["code"][0]


def exchange(client: Client, client_id: str, code: str, verifier: str, resource: str) -> tuple[int, dict[str, Any]]:
    response = client.post(
        "/oauth/token/",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": resource,
        },
    )
    return response.status_code, json.loads(response.content)


def obtain_token(user: Any, resource: str = "http://testserver/mcp", scope: str = ALL_SCOPES) -> dict[str, Any]:
    """The whole flow for `user`: register a client, consent as the user, exchange the code; the token response."""
    browser = Client()
    status, client_info = register(browser)
    assert status == 201, client_info
    verifier, challenge = pkce()
    browser.force_login(user)
    code = approve(browser, authorize_url(client_info["client_id"], challenge, resource=resource, scope=scope))
    status, token = exchange(Client(), client_info["client_id"], code, verifier, resource)
    assert status == 200, token
    token["client_id"] = client_info["client_id"]
    return token
