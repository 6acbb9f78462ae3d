"""The admin's overrides applied to an interceptor list, and the stamp a process polls."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.control.state import ControlState, InterceptorOverride, ProviderOverride, Snapshot, bump, control_state
from mcp_django.models import StateVersion
from mcp_django.scopes import Scope

REDACTION = "mcp_django.interceptors.redaction.RedactionInterceptor"
AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"


def state_with(**interceptors: InterceptorOverride) -> ControlState:
    state = ControlState(interval=60)
    state.snapshot = Snapshot(interceptors=interceptors)
    return state


def test_interceptors_without_a_row_run_as_configured() -> None:
    config: list[Any] = [REDACTION, {"CLASS": AUDIT}]
    assert state_with().overlay_interceptors(config) is config


def test_a_disabled_interceptor_is_left_out_and_the_others_keep_their_entry() -> None:
    overlaid = state_with(redact=InterceptorOverride(enabled=False)).overlay_interceptors([REDACTION, AUDIT])
    assert overlaid == [AUDIT]


def test_mode_fail_open_priority_and_options_replace_the_configured_values() -> None:
    override = InterceptorOverride(mode="audit", fail_open=True, priority=7, options={"patterns": ["x"]})
    overlaid = state_with(audit=override).overlay_interceptors([{"CLASS": AUDIT, "PRIORITY": 1}])
    assert overlaid == [
        {
            "CLASS": AUDIT,
            "NAME": "audit",
            "MODE": "audit",
            "FAIL_OPEN": True,
            "PRIORITY": 7,
            "OPTIONS": {"patterns": ["x"]},
        }
    ]


def test_blank_fields_keep_the_configured_values_and_a_named_entry_is_found_by_its_name() -> None:
    entry = {"CLASS": REDACTION, "NAME": "mask", "MODE": "active", "PRIORITY": 3}
    overlaid = state_with(mask=InterceptorOverride()).overlay_interceptors([entry])
    assert overlaid == [entry]


def test_a_provider_without_a_row_is_on_with_the_codes_scope() -> None:
    state = ControlState(interval=60)
    state.snapshot = Snapshot(providers={"shop.off": ProviderOverride(enabled=False, min_scope=Scope.TEAM)})
    assert (state.provider_enabled("shop.other"), state.provider_scope("shop.other", Scope.USER)) == (True, Scope.USER)
    assert (state.provider_enabled("shop.off"), state.provider_scope("shop.off", Scope.USER)) == (False, Scope.TEAM)


@pytest.mark.django_db
def test_every_bump_writes_a_different_stamp_and_tells_this_process_to_look() -> None:
    bump()
    first = StateVersion.objects.get(key="state").version
    control_state.refresh_sync()
    assert not control_state.due()
    bump()

    assert StateVersion.objects.get(key="state").version != first
    assert control_state.due()
