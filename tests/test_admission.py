"""The parts of admission that need no endpoint: the Host rule, remembered per Host value."""

from __future__ import annotations

import pytest
from django.test import override_settings

from mcp_django.admission import Refused, check_host


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
