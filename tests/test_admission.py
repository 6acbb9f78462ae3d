"""The parts of admission that need no endpoint: the Host rule, remembered per Host value."""

from __future__ import annotations

import pytest
from django.test import override_settings

from mcp_django.endpoints.admission import Refused, check_cookie_origin, check_host


def test_a_host_admitted_once_is_checked_again_when_allowed_hosts_change() -> None:
    check_host("localhost:8000")

    with override_settings(ALLOWED_HOSTS=["mcp.example.com"]):
        with pytest.raises(Refused) as refused:
            check_host("localhost:8000")
        check_host("mcp.example.com")

    assert (refused.value.status, refused.value.message) == (400, "Bad Request: invalid Host header")
    check_host("localhost:8000")


def test_a_refused_host_stays_refused() -> None:
    for _ in range(2):
        with pytest.raises(Refused):
            check_host("evil.example")


@pytest.mark.parametrize(
    ("origin", "host", "secure"),
    [
        ("http://testserver", "testserver", False),
        ("https://mcp.example.com", "mcp.example.com", True),
        ("https://app.example.com", "mcp.example.com", True),  # listed in CSRF_TRUSTED_ORIGINS
        ("https://a.b.partners.example", "mcp.example.com", True),  # under a wildcard entry
    ],
)
def test_a_cookie_caller_s_origin_passes_as_django_s_csrf_check_would(origin: str, host: str, secure: bool) -> None:
    trusted = ["https://app.example.com", "https://*.partners.example"]
    with override_settings(CSRF_TRUSTED_ORIGINS=trusted):
        check_cookie_origin(origin, host, secure)


@pytest.mark.parametrize(
    ("origin", "host", "secure"),
    [
        ("http://localhost:5555", "localhost:8000", False),  # another port is another origin
        ("http://mcp.example.com", "mcp.example.com", True),  # a plain-http page on a TLS site
        ("http://partners.example", "mcp.example.com", False),  # the wildcard names its scheme
        ("https://evil.example", "mcp.example.com", True),
        ("null", "mcp.example.com", True),
    ],
)
def test_a_cookie_caller_from_another_origin_is_refused(origin: str, host: str, secure: bool) -> None:
    with override_settings(CSRF_TRUSTED_ORIGINS=["https://*.partners.example"]), pytest.raises(Refused) as refused:
        check_cookie_origin(origin, host, secure)

    assert (refused.value.status, refused.value.message) == (
        403,
        "Forbidden: Origin checking failed - the origin does not match any trusted origins.",
    )
