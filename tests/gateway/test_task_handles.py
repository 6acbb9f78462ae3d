"""`gateway.task_handles` in memory: a handle for a remote's task shows nothing and opens for its caller only."""

from __future__ import annotations

import base64
from types import SimpleNamespace
from typing import Any

import pytest

from mcp_django.gateway.task_handles import outer_task, remote_task
from mcp_django.protocol import Connection
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.protocol.versions import Era

REMOTE_TASK = "9f1c2a7e-remote-task-id"


def request(principal_id: str | None, endpoint: str = "hub") -> RequestContext:
    connection = Connection(endpoint=SimpleNamespace(name=endpoint), principal_id=principal_id)
    return RequestContext(
        method="tasks/get", request_id=1, era=Era.STATELESS, protocol_version="2026-07-28", connection=connection
    )


def handle_for(ctx: RequestContext, task: str = REMOTE_TASK) -> str:
    return str(outer_task({"taskId": task, "status": "working"}, "github", ctx)["taskId"])


def test_a_handle_shows_neither_the_callers_id_nor_the_remotes_task_id() -> None:
    handle = handle_for(request("4242"))
    body = handle.removeprefix("rt-")
    decoded = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))

    for secret in ("4242", REMOTE_TASK, "github", "hub"):
        assert secret not in handle
        assert secret.encode() not in decoded


def test_one_task_keeps_one_handle_and_it_opens_for_its_caller_on_its_endpoint() -> None:
    alice = request("4242")

    assert handle_for(alice) == handle_for(alice)
    assert remote_task(handle_for(alice), alice) == ("github", REMOTE_TASK)


@pytest.mark.parametrize("other", [request("4343"), request(None), request("4242", endpoint="other-hub")])
def test_a_handle_is_an_unknown_task_to_anyone_else(other: RequestContext) -> None:
    handle = handle_for(request("4242"))

    with pytest.raises(InvalidParams, match="Unknown task"):
        remote_task(handle, other)


def test_a_handle_made_before_the_secret_key_was_rotated_still_opens(settings: Any) -> None:
    alice = request("4242")
    handle = handle_for(alice)

    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "a-new-secret-key-" * 4, [settings.SECRET_KEY]

    assert remote_task(handle, alice) == ("github", REMOTE_TASK)
