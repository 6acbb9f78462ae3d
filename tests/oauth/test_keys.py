"""JWKS by URL (`mcp_django.oauth.keys`): fetched over HTTPS from a test server, cached, refetched for a new `kid`.

The keys are served by `DocumentServer` on 127.0.0.1 with a certificate the test trusts (`SSL_CERT_FILE`);
`LoopbackMetadataFetcher` lets the package's fetcher reach that one address, as the live tests do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from mcp_django.oauth import keys
from mcp_django.oauth.defaults import OAUTH2_PROVIDER
from mcp_django.oauth.machines import create_machine_client
from mcp_django.oauth.models import MachineClient
from tests.live.oauth_support import DocumentServer
from tests.oauth.test_machines import assertion, jwt_fields, key_pair, token_request
from tests.oauth.test_oauth import make_user, with_mcp

pytestmark = pytest.mark.django_db

PATH = "/jwks.json"


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentServer]:
    server = DocumentServer(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(server.certificate))
    provider = {**OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "tests.live.oauth_support.LoopbackMetadataFetcher"}
    with server.running(), override_settings(OAUTH2_PROVIDER=provider):
        yield server


@pytest.fixture
def keyed_client(documents: DocumentServer) -> tuple[str, Any]:
    private, jwks = key_pair("k1")
    documents.documents[PATH] = jwks
    machine, _ = create_machine_client(
        "Keys by URL",
        make_user("ci-bot", "mcp-team"),
        auth_method=MachineClient.PRIVATE_KEY_JWT,
        jwks_uri=documents.base_url + PATH,
    )
    return machine.application.client_id, private


def test_a_jwks_url_is_fetched_once_while_its_keys_are_cached(
    client: Client, documents: DocumentServer, keyed_client: tuple[str, Any]
) -> None:
    client_id, private = keyed_client
    for _ in range(3):
        status, token = token_request(client, **jwt_fields(assertion(client_id, private)))
        assert status == 200, token

    assert documents.fetches[PATH] == 1


def test_the_cache_keeps_a_set_no_longer_than_its_max_age_and_the_cap(
    documents: DocumentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept: list[int] = []
    monkeypatch.setattr(cache, "set", lambda key, value, timeout: kept.append(timeout))
    documents.documents[PATH] = key_pair("k1")[1]
    url = documents.base_url + PATH

    documents.cache_control[PATH] = "max-age=600"
    keys.signing_keys(None, url, "k1")
    documents.cache_control[PATH] = "max-age=604800"
    keys.signing_keys(None, url, "k1")
    with with_mcp(OAUTH_JWKS_MAX_AGE=900):
        keys.signing_keys(None, url, "k1")

    assert kept == [600, 3600, 900]


def test_a_rotated_key_is_fetched_once_then_an_unknown_kid_fetches_nothing_for_a_while(
    client: Client, documents: DocumentServer, keyed_client: tuple[str, Any]
) -> None:
    client_id, private = keyed_client
    assert token_request(client, **jwt_fields(assertion(client_id, private)))[0] == 200
    rotated, jwks = key_pair("k2")
    documents.documents[PATH] = jwks

    status, token = token_request(client, **jwt_fields(assertion(client_id, rotated, kid="k2")))
    assert status == 200, token
    assert documents.fetches[PATH] == 2

    status, body = token_request(client, **jwt_fields(assertion(client_id, rotated, kid="k3")))
    assert (status, body["error"]) == (401, "invalid_client")
    assert documents.fetches[PATH] == 2  # within REFETCH_PAUSE of the last refetch
    cache.delete(keys._cache_key(documents.base_url + PATH, "jwks-refetched"))  # the pause over

    token_request(client, **jwt_fields(assertion(client_id, rotated, kid="k3")))
    assert documents.fetches[PATH] == 3
