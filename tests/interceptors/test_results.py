"""The values the chain hands interceptors and takes back: built fast, frozen as declared."""

from __future__ import annotations

import dataclasses

import pytest

from mcp_django.interceptors import InterceptorContext, Invocation, MutationResult, SinkResult, ValidationResult

BUILT = [
    (InterceptorContext, {"principal": {"type": "anonymous"}}),
    (Invocation, {"event": "tools/call", "phase": "request", "payload": {}, "options": None, "context": None}),
    (ValidationResult, {"valid": False, "reason": "no"}),
    (MutationResult, {"modified": True, "payload": {"a": 1}}),
    (SinkResult, {}),
]


@pytest.mark.parametrize(("cls", "values"), BUILT, ids=[cls.__name__ for cls, _ in BUILT])
def test_each_value_keeps_its_fields_defaults_and_stays_frozen(cls: type, values: dict[str, object]) -> None:
    built = cls(**values)
    for field in dataclasses.fields(cls):
        assert getattr(built, field.name) == values.get(field.name, field.default)
    assert built == cls(*(getattr(built, field.name) for field in dataclasses.fields(cls)))  # positional too
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, dataclasses.fields(cls)[0].name, None)
    with pytest.raises(TypeError):
        cls(**values, unknown=1)
