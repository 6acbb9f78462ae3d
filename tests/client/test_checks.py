"""The MCP client's checks, registered by the core app (gateway or not): servers the site signs in to itself
with client credentials (E240 to E243) and the loopback switch of the OAuth client (W240)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.checks import CheckMessage, Error, Warning

from mcp_django.client.auth.oauth import OAuthClientAuth
from mcp_django.client.checks import check_client_credentials
from mcp_django.client.servers import server_config

URL = "https://mcp.example.com/mcp"
ROOT = Path(__file__).resolve().parents[2]


def checked(settings: Any, **entry: Any) -> list[CheckMessage]:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {"gh": entry}}
    return check_client_credentials()


def pem() -> str:
    private = ec.generate_private_key(ec.SECP256R1())
    encoded = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return encoded.decode()


def test_a_well_formed_entry_passes_and_its_connections_share_one_oauth_client(settings: Any) -> None:
    auth = {"TYPE": "client_credentials", "CLIENT_ID": "ci", "CLIENT_SECRET": "s3", "SCOPES": ["mcp:team"]}

    assert checked(settings, URL=URL, AUTH=auth) == []
    first, second = server_config("gh"), server_config("gh")
    assert isinstance(first.auth, OAuthClientAuth)
    assert first.auth is second.auth
    assert first.oauth is None  # not a per-user server: nobody connects
    assert checked(settings, URL=URL, AUTH={**auth, "CLIENT_SECRET": None, "PRIVATE_KEY": pem()}) == []


@pytest.mark.parametrize(
    ("auth", "problem"),
    [
        ({"CLIENT_ID": "ci", "CLIENT_SECRET": "s", "SECRET": "x"}, "unknown key 'SECRET'"),
        ({"CLIENT_SECRET": "s"}, "CLIENT_ID must be a non-empty string"),
        ({"CLIENT_ID": "ci"}, "needs one of CLIENT_SECRET and PRIVATE_KEY (a string)"),
        (
            {"CLIENT_ID": "ci", "CLIENT_SECRET": "s", "PRIVATE_KEY": "k"},
            "needs one of CLIENT_SECRET and PRIVATE_KEY (a string)",
        ),
        (
            {"CLIENT_ID": "ci", "PRIVATE_KEY": "k", "SIGNING_ALGORITHM": "HS256"},
            "SIGNING_ALGORITHM must be one of ES256, ES384, ES512, EdDSA, PS256, RS256, RS384, RS512",
        ),
        ({"CLIENT_ID": "ci", "CLIENT_SECRET": "s", "SCOPES": "mcp:team"}, "SCOPES must be a list of words"),
    ],
)
def test_a_malformed_client_credentials_auth_is_e240(settings: Any, auth: dict[str, Any], problem: str) -> None:
    assert checked(settings, URL=URL, AUTH={"TYPE": "client_credentials", **auth}) == [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] has a malformed client_credentials AUTH.",
            hint=f"AUTH {problem}: CLIENT_ID, then CLIENT_SECRET or PRIVATE_KEY (docs/client.md).",
            id="mcp_django.E240",
        )
    ]


def test_client_credentials_on_a_stdio_server_is_e241(settings: Any) -> None:
    auth = {"TYPE": "client_credentials", "CLIENT_ID": "ci", "CLIENT_SECRET": "s"}
    assert checked(settings, COMMAND=["python", "server.py"], AUTH=auth) == [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] AUTH client_credentials is for HTTP servers only.",
            hint="Client credentials need a URL: a stdio server has no authorization server.",
            id="mcp_django.E241",
        )
    ]


def test_a_private_key_that_is_not_of_the_algorithms_family_is_e242(settings: Any) -> None:
    auth = {"TYPE": "client_credentials", "CLIENT_ID": "ci", "PRIVATE_KEY": pem(), "SIGNING_ALGORITHM": "RS256"}
    expected = [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] PRIVATE_KEY is not a RS256 private key.",
            hint="PRIVATE_KEY is the client's private key in PEM, of SIGNING_ALGORITHM's family.",
            id="mcp_django.E242",
        )
    ]
    assert checked(settings, URL=URL, AUTH=auth) == expected
    assert checked(settings, URL=URL, AUTH={**auth, "PRIVATE_KEY": "not a key"}) == expected


def test_client_credentials_beside_a_token_is_e243(settings: Any) -> None:
    auth = {"TYPE": "client_credentials", "CLIENT_ID": "ci", "CLIENT_SECRET": "s"}
    assert checked(settings, URL=URL, AUTH=auth, TOKEN="shared") == [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] has client credentials and a TOKEN too.",
            hint="Remove TOKEN and the Authorization header: the client credentials' token is sent.",
            id="mcp_django.E243",
        )
    ]


def test_the_loopback_switch_without_debug_is_w240(settings: Any) -> None:
    settings.DEBUG = False
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {}, "REMOTE_OAUTH_ALLOW_LOOPBACK": True}

    assert check_client_credentials() == [
        Warning(
            "MCP_DJANGO['REMOTE_OAUTH_ALLOW_LOOPBACK'] is on without DEBUG.",
            hint="Turn it off outside development: remote metadata could aim the site at local ports.",
            id="mcp_django.W240",
        )
    ]
    settings.DEBUG = True
    assert check_client_credentials() == []


def test_the_client_s_checks_run_in_a_project_without_the_gateway_app() -> None:
    script = f"""
import django
from django.conf import settings
settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "mcp_django"],
    DATABASES={{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}}},
    MCP_DJANGO={{"SERVERS": {{"gh": {{"URL": "{URL}", "AUTH": {{"TYPE": "client_credentials"}}}}}}}},
)
django.setup()
from django.core.checks import run_checks
print(sorted(message.id for message in run_checks() if "E24" in str(message.id)))
"""
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "['mcp_django.E240']"
