"""`first_use`: a name the runtime's per-call code needs, imported on its first call and kept (runtime/first_use.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_django.runtime.first_use import first_use


def test_a_first_use_name_is_imported_on_the_first_call_not_before_and_kept_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "first_use_sample.py").write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "first_use_sample", raising=False)

    thing = first_use("first_use_sample", "Thing")
    assert "first_use_sample" not in sys.modules

    first = thing()
    assert first is sys.modules["first_use_sample"].Thing
    del sys.modules["first_use_sample"]  # a later call imports nothing: it answers what it kept
    assert thing() is first
    assert "first_use_sample" not in sys.modules
