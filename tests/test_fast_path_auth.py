"""On the ASGI fast path: a token-authenticated call runs no query in the steady state, and its misses run on the
long-lived database threads.

Queries are counted on every connection of every thread (the pool's threads have their own), by wrapping
Django's cursor, so "no query" means none anywhere in the process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.backends import utils
from django.test import override_settings
from rest_framework.authtoken.models import Token

from mcp_django.asgi import get_asgi_application
from mcp_django.runtime.executor import THREAD_NAME_PREFIX
from tests.test_asgi import call, echo_call

pytestmark = [pytest.mark.urls("tests.asgi_urls"), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queries(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """`(thread name, SQL)` of every query any thread runs while the test does."""
    seen: list[tuple[str, str]] = []
    execute = utils.CursorWrapper.execute

    def counted(self: Any, sql: str, params: Any = None) -> Any:
        seen.append((threading.current_thread().name, sql))
        return execute(self, sql, params)

    monkeypatch.setattr(utils.CursorWrapper, "execute", counted)
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "STATE_CHECK_INTERVAL": 60, "INTERCEPTORS": []}):
        yield seen


def token_for(username: str) -> str:
    return str(Token.objects.create(user=get_user_model().objects.create_user(username)).key)


async def test_a_token_call_costs_its_queries_once_on_the_database_threads_then_none(
    queries: list[tuple[str, str]],
) -> None:
    app = get_asgi_application()
    token = await sync_to_async(token_for)("fay")
    body, headers = echo_call()
    headers = {**headers, "Authorization": f"Bearer {token}"}
    queries.clear()

    first = await call(app, "POST", "/token/mcp", body, headers)
    misses = list(queries)
    queries.clear()
    steady = [(await call(app, "POST", "/token/mcp", body, headers)).status for _ in range(5)]

    assert first.status == 200
    assert any("authtoken_token" in sql for _, sql in misses)
    assert all(thread.startswith(THREAD_NAME_PREFIX) for thread, _ in misses)
    assert steady == [200] * 5
    assert queries == []


async def test_a_token_deleted_is_refused_by_the_next_fast_path_request(queries: list[tuple[str, str]]) -> None:
    app = get_asgi_application()
    token = await sync_to_async(token_for)("gus")
    body, headers = echo_call()
    headers = {**headers, "Authorization": f"Bearer {token}"}
    assert (await call(app, "POST", "/token/mcp", body, headers)).status == 200

    await sync_to_async(Token.objects.filter(key=token).delete)()

    assert (await call(app, "POST", "/token/mcp", body, headers)).status == 401
