"""Helpers for the access tests: the three demo-like users, and stateless MCP requests sent as one of them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.http_support import ACCEPT, STATELESS_VERSION, stateless

NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@dataclass
class Caller:
    """A user and the `Authorization` header that authenticates them."""

    user: Any
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def make_caller(username: str, group: str | None = None, **extra: Any) -> Caller:
    user = get_user_model().objects.create_user(username, **extra)
    if group is not None:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return Caller(user, Token.objects.create(user=user).key)


def send(
    client: Client,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    path: str = "/mcp",
    caller: Caller | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """Send one stateless (2026-07-28) request with the headers it needs; return the response."""
    params = params or {}
    all_headers = {"Accept": ACCEPT, "MCP-Protocol-Version": STATELESS_VERSION, "Mcp-Method": method}
    field = NAME_FIELDS.get(method)
    if field is not None and field in params:
        all_headers["Mcp-Name"] = params[field]
    if caller is not None:
        all_headers.update(caller.headers)
    all_headers.update(headers or {})
    body = json.dumps(stateless(method, params)).encode()
    return client.post(path, data=body, content_type="application/json", headers=all_headers)


def result(client: Client, method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
    """The result of a request that must succeed."""
    response = send(client, method, params, **options)
    assert response.status_code == 200, response.content
    body = json.loads(response.content)
    assert "result" in body, body
    return body["result"]


def names(client: Client, method: str, **options: Any) -> list[str]:
    """The names (or URIs) a list method returns."""
    key, field = {
        "tools/list": ("tools", "name"),
        "prompts/list": ("prompts", "name"),
        "resources/list": ("resources", "uri"),
        "resources/templates/list": ("resourceTemplates", "uriTemplate"),
    }[method]
    return [item[field] for item in result(client, method, **options)[key]]


def text(call_result: Any) -> str:
    return str(call_result["content"][0]["text"])
