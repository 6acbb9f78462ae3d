"""`runtime/lazy_models.py`: mcp_django's own pydantic models, made once, on first use (issue 34)."""

from __future__ import annotations

import sys
import threading

import pydantic
import pytest

from mcp_django.runtime.lazy_models import LazyModel, lazy_attributes

built: list[type[pydantic.BaseModel]] = []


@LazyModel
def _knob_options() -> type[pydantic.BaseModel]:
    class KnobOptions(pydantic.BaseModel):
        turns: int = 1

    built.append(KnobOptions)
    return KnobOptions


class Knob:
    Options = _knob_options


def test_a_lazy_model_is_made_once_on_first_use_and_stands_in_its_module_under_its_name() -> None:
    assert built == []
    made = Knob.Options
    assert built == [made]
    assert Knob().Options is made
    assert _knob_options.get() is made
    assert sys.modules[__name__].KnobOptions is made
    assert made.__qualname__ == "KnobOptions"
    assert made(turns="3").turns == 3
    assert built == [made]


def test_threads_asking_first_at_once_get_one_class() -> None:
    @LazyModel
    def slow() -> type[pydantic.BaseModel]:
        class Slow(pydantic.BaseModel):
            pass

        started.wait(timeout=5)
        return Slow

    started = threading.Barrier(2)
    seen: list[type[pydantic.BaseModel]] = []
    threads = [threading.Thread(target=lambda: seen.append(slow.get())) for _ in range(2)]
    for thread in threads:
        thread.start()
    started.wait(timeout=5)
    for thread in threads:
        thread.join(timeout=5)
    assert len(seen) == 2
    assert seen[0] is seen[1]


def test_a_module_s_getattr_answers_its_lazy_models_and_nothing_else() -> None:
    getattr_ = lazy_attributes("somewhere", KnobOptions=_knob_options)
    assert getattr_("KnobOptions") is _knob_options.get()
    with pytest.raises(AttributeError, match="module 'somewhere' has no attribute 'Missing'"):
        getattr_("Missing")
