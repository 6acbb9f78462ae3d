"""The session store: sessions read through an in-process cache, so steady traffic costs no query."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings
from pytest_django import DjangoAssertNumQueries

from mcp_django.endpoints.sessions import DatabaseSessionStore, SessionStore, get_session_store, new_session_id
from mcp_django.models import MCPSession
from mcp_django.protocol import SessionState
from tests.http_support import open_session, post, request

# The async tests reach the database from another thread, outside the test's transaction.
pytestmark = pytest.mark.django_db


@pytest.mark.urls("tests.http_urls")
def test_a_steady_state_request_does_no_database_query(
    client: Client, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    # The control state re-reads its stamp every STATE_CHECK_INTERVAL (0.5 s): a loaded machine can take longer
    # than that between the warm-up and the call, and the re-read is a query this test is not about.
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "STATE_CHECK_INTERVAL": 60}):
        session = {"Mcp-Session-Id": open_session(client)}
        post(client, request("tools/list"), session)  # warm up

        with django_assert_num_queries(0):
            response = post(client, request("tools/call", {"name": "echo", "arguments": {"text": "x"}}), session)

    assert response.status_code == 200


async def open_one(
    store: SessionStore, endpoint: str = "api", *, address: str | None = None, client_info: Any = None
) -> str:
    return await store.open(
        SessionState(protocol_version="2025-11-25", changed=True, client_info=client_info),
        endpoint_name=endpoint,
        endpoint_path=endpoint,
        principal=None,
        client_address=address,
    )


def test_new_session_ids_are_unique_and_visible_ascii() -> None:
    ids = {new_session_id() for _ in range(100)}

    assert len(ids) == 100
    assert all(all(0x21 <= ord(ch) <= 0x7E for ch in session_id) for session_id in ids)


@pytest.mark.django_db(transaction=True)
async def test_a_cached_session_is_read_again_after_revalidation(monkeypatch: pytest.MonkeyPatch) -> None:
    store = DatabaseSessionStore()
    session_id = await open_one(store)
    await MCPSession.objects.filter(session_id=session_id).aupdate(log_level="error")

    cached = await store.resume(session_id, endpoint_name="api", principal=None)
    monkeypatch.setattr(DatabaseSessionStore, "revalidate_after", 0.0)
    fresh = await store.resume(session_id, endpoint_name="api", principal=None)

    assert cached is not None
    assert fresh is not None
    assert fresh.state.log_level == "error"
    assert fresh is cached  # requests in flight keep sharing one object


@pytest.mark.django_db(transaction=True)
async def test_a_session_deleted_elsewhere_is_unknown_after_revalidation(monkeypatch: pytest.MonkeyPatch) -> None:
    store = DatabaseSessionStore()
    session_id = await open_one(store)
    await MCPSession.objects.filter(session_id=session_id).adelete()
    monkeypatch.setattr(DatabaseSessionStore, "revalidate_after", 0.0)

    assert await store.resume(session_id, endpoint_name="api", principal=None) is None


@pytest.mark.django_db(transaction=True)
async def test_a_session_is_unknown_on_another_endpoint() -> None:
    store = DatabaseSessionStore()
    session_id = await open_one(store, endpoint="api")

    assert await store.resume(session_id, endpoint_name="admin-api", principal=None) is None
    assert await store.end(session_id, endpoint_name="admin-api", principal=None) is False
    assert await MCPSession.objects.filter(session_id=session_id).aexists()


@pytest.mark.django_db(transaction=True)
async def test_commit_saves_only_changed_state() -> None:
    store = DatabaseSessionStore()
    record = await store.resume(await open_one(store), endpoint_name="api", principal=None)
    assert record is not None

    record.state.log_level = "warning"
    await store.commit(record)  # not marked changed: nothing written
    assert (await MCPSession.objects.aget()).log_level == ""

    record.state.changed = True
    await store.commit(record)
    assert (await MCPSession.objects.aget()).log_level == "warning"
    assert record.state.changed is False


@override_settings(MCP_DJANGO={"SESSION_STORE": "tests.test_sessions.MemoryStore"})
def test_the_store_class_comes_from_the_settings() -> None:
    assert isinstance(get_session_store(), MemoryStore)


def test_the_store_is_rebuilt_when_the_settings_change() -> None:
    before = get_session_store()
    with override_settings(MCP_DJANGO={"SESSION_IDLE_TIMEOUT": 10}):
        during = get_session_store()

    assert during is not before
    assert isinstance(during, DatabaseSessionStore)


@pytest.mark.django_db(transaction=True)
async def test_a_store_that_misses_a_method_says_which() -> None:
    with pytest.raises(NotImplementedError, match=r"SessionStore must implement create\(\)"):
        await open_one(SessionStore())


class MemoryStore(SessionStore):
    """A dict-backed store, to prove the store is pluggable."""

    def __init__(self) -> None:
        self.sessions: dict[str, object] = {}


class MovableClock(DatabaseSessionStore):
    now = 1_000_000_000.0

    def clock(self) -> float:
        return self.now


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"SESSION_PURGE_INTERVAL": 60, "SESSION_IDLE_TIMEOUT": 10})
async def test_opening_a_session_purges_the_expired_ones_at_most_once_per_interval() -> None:
    store = MovableClock()
    first = await open_one(store)  # purges (nothing yet), opens
    store.now += 20  # `first` expired
    second = await open_one(store)  # within the interval: no purge
    assert await MCPSession.objects.filter(session_id=first).aexists()

    store.now += 61  # `second` expired too; the interval passed
    third = await open_one(store)

    remaining = [session_id async for session_id in MCPSession.objects.values_list("session_id", flat=True)]
    assert remaining == [third]
    assert second not in remaining


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"SESSION_MAX_ANONYMOUS": 1, "SESSION_IDLE_TIMEOUT": 10})
async def test_the_anonymous_cap_counts_open_sessions_only() -> None:
    from mcp_django.endpoints.sessions import SessionRefused

    store = MovableClock()
    await open_one(store)
    with pytest.raises(SessionRefused) as refused:
        await open_one(store)
    store.now += 20  # the first expired: it no longer counts

    await open_one(store)

    assert refused.value.status == 429
    assert refused.value.error.message == (
        "Too Many Sessions: at most 1 open sessions for one anonymous client address; end one (DELETE) or let one"
        " expire"
    )


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"SESSION_MAX_ANONYMOUS": 1})
async def test_anonymous_sessions_are_capped_per_client_address() -> None:
    from mcp_django.endpoints.sessions import SessionRefused

    store = DatabaseSessionStore()
    await open_one(store, address="192.0.2.1")
    with pytest.raises(SessionRefused):
        await open_one(store, address="192.0.2.1")

    await open_one(store, address="192.0.2.2")

    addresses = [address async for address in MCPSession.objects.values_list("client_address", flat=True)]
    assert sorted(addresses) == ["192.0.2.1", "192.0.2.2"]


def test_sessions_are_capped_per_user_and_per_anonymous_address_by_default() -> None:
    from mcp_django.conf import DEFAULTS

    assert (DEFAULTS["SESSION_MAX_PER_USER"], DEFAULTS["SESSION_MAX_ANONYMOUS"]) == (100, 100)


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"SESSION_CACHE_MAX_BYTES": 100_000, "SESSION_MAX_ANONYMOUS": None})
async def test_the_session_cache_holds_no_more_bytes_than_its_bound_and_reads_the_forgotten_again() -> None:
    store = DatabaseSessionStore()
    big = {"name": "tests", "version": "1", "description": "x" * 30_000}
    opened = [await open_one(store, client_info=big) for _ in range(10)]

    assert store._cache.bytes <= 100_000
    assert len(store._cache) == 3  # each about 31 KB: the last three
    assert sum(entry[2] for entry in store._cache.entries.values()) == store._cache.bytes
    first = await store.resume(opened[0], endpoint_name="api", principal=None)
    assert first is not None
    assert first.state.client_info == big
    assert opened[0] in store._cache
    assert opened[-3] not in store._cache


async def subscribe(store: DatabaseSessionStore, session_id: str, uri: str, *, subscribed: bool = True) -> None:
    """What `resources/subscribe` (or unsubscribe) does to the session in one worker, then the transport's commit."""
    record = await store.resume(session_id, endpoint_name="api", principal=None)
    assert record is not None
    others = tuple(known for known in record.state.subscriptions if known != uri)
    record.state.subscriptions = (*others, uri) if subscribed else others
    record.state.changed = True
    await store.commit(record)


@pytest.mark.django_db(transaction=True)
async def test_two_workers_changing_one_session_keep_each_others_changes() -> None:
    """Each worker's cached copy may be stale (`revalidate_after`): a commit saves what its request changed, merged
    into the row, and never writes back what another worker changed meanwhile."""
    worker_a, worker_b = DatabaseSessionStore(), DatabaseSessionStore()
    session_id = await open_one(worker_a)
    on_b = await worker_b.resume(session_id, endpoint_name="api", principal=None)  # B caches it now
    assert on_b is not None

    await subscribe(worker_a, session_id, "demo://one")
    on_b.state.log_level, on_b.state.initialized, on_b.state.changed = "debug", True, True
    await worker_b.commit(on_b)
    await subscribe(worker_b, session_id, "demo://two")
    await subscribe(worker_a, session_id, "demo://three")
    await subscribe(worker_b, session_id, "demo://one", subscribed=False)
    row = await MCPSession.objects.aget(session_id=session_id)

    assert row.subscriptions == ["demo://two", "demo://three"]
    assert (row.log_level, row.initialized) == ("debug", True)
    assert on_b.state.subscriptions == ("demo://two", "demo://three")  # B's copy took the merged row
