"""The gateway app takes its models over from the `mcp_django` app, rows and all, and merges the two rows a
remote server had (`RemoteServerState`, `InterceptorServer`) into one `RemoteServer`, switches kept."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from mcp_django.gateway.models import RemoteServer, UpstreamCredential
from mcp_django.scopes import Scope

OLD_APP_STATE = ("mcp_django", "0017_mcpsession_client_address")
BEFORE: list[tuple[str, str | None]] = [OLD_APP_STATE, ("mcp_django_gateway", None)]
"""A database as the mcp_django app left it while the gateway's models were its own."""


@pytest.fixture(autouse=True)
def _no_synced_rows() -> None:
    """Only the rows each test writes (migrating back would carry the synced ones over too)."""
    RemoteServer.objects.all().delete()


def _migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor


def _old_rows(executor: MigrationExecutor) -> None:
    """Rows of both old models (one server in both, one in each) and one user's upstream tokens."""
    old = executor.loader.project_state(OLD_APP_STATE).apps
    states, servers = old.get_model("mcp_django", "RemoteServerState"), old.get_model("mcp_django", "InterceptorServer")
    states.objects.create(name="both", enabled=False, min_scope=int(Scope.SYSTEM))
    states.objects.create(name="gone", present_in_code=False)
    servers.objects.create(
        name="both",
        enabled=False,
        url="https://both.example/mcp",
        headers={"X-Key": "k"},
        fail_open=True,
        timeout_ms=300,
    )
    servers.objects.create(name="added", url="https://added.example/mcp")
    user = old.get_model("auth", "User").objects.create(username="ada")
    old.get_model("mcp_django", "UpstreamCredential").objects.create(
        user=user, server="both", issuer="https://as.example", token_endpoint="t", client_id="c", secret="s"
    )


def _merged() -> dict[str, tuple[Any, ...]]:
    fields = ("enabled", "min_scope", "present_in_code", "interceptors_enabled", "url", "headers", "fail_open")
    return {row.name: (*(getattr(row, field) for field in fields), row.timeout) for row in RemoteServer.objects.all()}


@pytest.mark.django_db(transaction=True)
def test_migrating_forward_merges_each_servers_two_rows_into_one_and_keeps_the_upstream_tokens() -> None:
    executor = _migrate(BEFORE)
    try:
        _old_rows(executor)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    assert _merged() == {
        "both": (False, Scope.SYSTEM, True, False, "https://both.example/mcp", {"X-Key": "k"}, True, 0.3),
        "gone": (True, None, False, True, "", None, None, None),
        "added": (True, None, False, True, "https://added.example/mcp", None, None, None),
    }
    credential = UpstreamCredential.objects.get()
    assert (credential.user.username, credential.server, credential.issuer) == ("ada", "both", "https://as.example")
    assert UpstreamCredential._meta.db_table == "mcp_django_upstreamcredential"


@pytest.mark.django_db(transaction=True)
def test_whoever_held_a_permission_on_an_old_model_holds_it_on_the_remote_server() -> None:
    executor = _migrate(BEFORE)
    try:
        interceptors = ContentType.objects.create(app_label="mcp_django", model="interceptorserver")
        ContentType.objects.clear_cache()
        editors = Group.objects.create(name="editors")
        editors.permissions.add(
            Permission.objects.create(content_type=interceptors, codename="change_interceptorserver")
        )
        _old_rows(executor)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
        ContentType.objects.clear_cache()

    held = {(p.content_type.app_label, p.codename) for p in Group.objects.get(name="editors").permissions.all()}
    assert ("mcp_django_gateway", "change_remoteserver") in held
    assert ContentType.objects.get(pk=interceptors.pk).app_label == "mcp_django_gateway"  # moved, then left stale


@pytest.mark.django_db(transaction=True)
def test_migrating_back_splits_the_rows_again() -> None:
    RemoteServer.objects.create(name="both", enabled=False, interceptors_enabled=False, url="https://both.example/mcp")
    RemoteServer.objects.create(name="plain")
    try:
        executor = _migrate(BEFORE)
        old = executor.loader.project_state(OLD_APP_STATE).apps
        states = dict(old.get_model("mcp_django", "RemoteServerState").objects.values_list("name", "enabled"))
        servers = dict(old.get_model("mcp_django", "InterceptorServer").objects.values_list("name", "enabled"))
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    assert states == {"both": False, "plain": True}
    assert servers == {"both": False}


SECONDS: tuple[str, str | None] = ("mcp_django_gateway", "0003_remoteserver_timeout_seconds")
MILLISECONDS: list[tuple[str, str | None]] = [("mcp_django_gateway", "0002_remoteserver")]


@pytest.mark.django_db(transaction=True)
def test_a_remote_server_s_timeout_in_milliseconds_becomes_seconds_and_back() -> None:
    try:
        executor = _migrate(MILLISECONDS)
        old = executor.loader.project_state(("mcp_django_gateway", "0002_remoteserver")).apps.get_model(
            "mcp_django_gateway", "RemoteServer"
        )
        old.objects.create(name="guard", timeout_ms=300)
        old.objects.create(name="slow", timeout_ms=12_000)
        old.objects.create(name="default")
        executor = _migrate([SECONDS])
        new = executor.loader.project_state(("mcp_django_gateway", "0003_remoteserver_timeout_seconds")).apps.get_model(
            "mcp_django_gateway", "RemoteServer"
        )
        forward = dict(new.objects.values_list("name", "timeout"))
        new.objects.filter(name="guard").update(timeout=0.25)
        executor = _migrate(MILLISECONDS)
        old = executor.loader.project_state(("mcp_django_gateway", "0002_remoteserver")).apps.get_model(
            "mcp_django_gateway", "RemoteServer"
        )
        back = dict(old.objects.values_list("name", "timeout_ms"))
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    assert forward == {"guard": 0.3, "slow": 12.0, "default": None}
    assert back == {"guard": 250, "slow": 12_000, "default": None}
