"""The demo identity provider (example_project/demo/idp.py): its key, and `manage.py demo_id_jag` against the site.

The in-memory tests run the example project's settings without `MCP_EXAMPLE_DEMO_IDP_KEY`, so they trust
the demo provider only where a test says so; tests/live/test_demo_idp.py serves it as `make demo` does.
"""

from __future__ import annotations

import json
import stat
from io import StringIO
from pathlib import Path
from typing import Any

import jwt
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from example_project.demo import idp as demo_idp
from mcp_django.oauth.enterprise import JWT_BEARER
from tests.oauth.test_machines import MCP, basic
from tests.oauth.test_oauth import tool_names, with_mcp

pytestmark = pytest.mark.django_db


@pytest.fixture
def key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "demo-idp-key.pem"
    monkeypatch.setenv(demo_idp.KEY_ENV, str(path))
    return path


def exchange(client: Client, assertion: str) -> tuple[int, dict[str, Any]]:
    response = client.post(
        "/oauth/token/",
        data={"grant_type": JWT_BEARER, "assertion": assertion},
        headers={"Authorization": basic("demo-machine", "demo-machine-secret")},
    )
    return response.status_code, json.loads(response.content)


def test_the_demo_providers_key_is_made_on_first_use_readable_by_its_owner_only_and_then_reused(
    key_file: Path,
) -> None:
    first = demo_idp.jwks()

    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert demo_idp.jwks() == first
    assert list(key_file.parent.iterdir()) == [key_file]  # no temporary file left behind


def test_the_example_settings_trust_no_issuer_unless_the_demo_key_is_named() -> None:
    from django.conf import settings

    assert "OAUTH_TRUSTED_ISSUERS" not in settings.MCP_DJANGO


def test_demo_id_jag_prints_an_assertion_the_site_exchanges_for_a_token_of_that_user(
    client: Client, key_file: Path
) -> None:
    call_command("seed_demo", stdout=StringIO())
    out = StringIO()
    call_command("demo_id_jag", "alice", "--base-url", "http://testserver", stdout=out)
    assertion = out.getvalue().strip()

    claims = jwt.decode(assertion, options={"verify_signature": False})
    with with_mcp(OAUTH_TRUSTED_ISSUERS=demo_idp.trusted_issuers()):
        status, token = exchange(client, assertion)
        tools = tool_names(client, token) if status == 200 else set()

    assert jwt.get_unverified_header(assertion)["typ"] == "oauth-id-jag+jwt"
    assert (claims["iss"], claims["sub"], claims["aud"], claims["resource"], claims["client_id"]) == (
        demo_idp.ISSUER,
        "alice",
        "http://testserver",
        MCP,
        "demo-machine",
    )
    assert (status, token.get("scope")) == (200, "mcp:user"), token
    assert "curate_book" in tools  # alice's own permission: the token acts for her


def test_demo_id_jag_refuses_a_user_the_demo_provider_has_no_identity_for(key_file: Path) -> None:
    call_command("seed_demo", stdout=StringIO())

    with pytest.raises(CommandError, match=r"^No demo identity is linked to 'admin': run manage\.py seed_demo\.$"):
        call_command("demo_id_jag", "admin", stdout=StringIO())
