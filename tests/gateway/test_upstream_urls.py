"""The guard on every request the site makes as an OAuth client upstream (`client.auth.http.check_url`): a
URL the remote's metadata names off the configured server's origin must be https to a public address."""

from __future__ import annotations

import pytest

from mcp_django.client.auth.authorization import UpstreamAuthError, check_url
from mcp_django.client.config import ServerConfig, UpstreamOAuth

SERVER = ServerConfig(name="accounts", url="http://127.0.0.1:8123/mcp", oauth=UpstreamOAuth())


def test_urls_on_the_configured_servers_own_origin_are_fetched() -> None:
    check_url("http://127.0.0.1:8123/.well-known/oauth-protected-resource/mcp", SERVER)
    check_url("http://127.0.0.1:8123/token", SERVER)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        # metadata pointing the site at the cloud's instance metadata, or at its own network
        ("https://169.254.169.254/latest/meta-data/", "resolves to a non-public address"),
        ("https://10.0.0.7/token", "resolves to a non-public address"),
        ("https://127.0.0.1:8124/token", "resolves to a non-public address"),  # another port: another origin
        ("https://[::1]/token", "resolves to a non-public address"),
        ("http://93.184.216.34/token", "is neither on the server's origin nor an https URL"),
        ("file:///etc/passwd", "is neither on the server's origin nor an https URL"),
    ],
)
def test_a_url_elsewhere_must_be_https_to_a_public_address(url: str, problem: str) -> None:
    with pytest.raises(UpstreamAuthError) as refused:
        check_url(url, SERVER)

    assert problem in str(refused.value)
