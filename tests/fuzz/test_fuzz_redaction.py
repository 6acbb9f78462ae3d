"""The redaction interceptor's built-in patterns (issue 36, E-2): linear on any input, and as precise as before.

The e-mail pattern it replaced took time quadratic in the length of a run of address characters (30 s
for 100 KB, on the event loop). Three properties, none of them timed in this process:

- on short strings the built-in patterns redact exactly what the backtracking ones (`BACKTRACKING`, the
  reference) did;
- a long string searched window by window (`_Redactor.windowed`, which lets the event loop's thread run
  between windows) is redacted as one whole-string `sub` redacts it;
- long adversarial strings (a fragment of the patterns' characters repeated to 256 KB) are redacted by a
  subprocess within a bound generous enough for any noisy machine: 30 of them take seconds in linear
  time, and one took minutes with the backtracking pattern.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from hypothesis import given
from hypothesis import strategies as st

from mcp_django.interceptors.redaction import DEFAULT_PATTERNS, RedactionOptions, _compiled, _Redactor, redact
from tests.conftest import ROOT

BACKTRACKING = re.compile(
    "|".join(
        f"(?:{pattern})"
        for pattern in (
            r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",  # the quadratic one
            *DEFAULT_PATTERNS[1:],
        )
    )
)
"""The built-in patterns before issue 36: the reference for what they redact."""

ALPHABET = "aZ09._%+-@ ()\n_éx,"
"""Every character class the patterns tell apart, and a few they never take."""

texts = st.text(alphabet=ALPHABET, max_size=120)


@given(texts)
def test_the_built_in_patterns_redact_what_the_backtracking_ones_did(text: str) -> None:
    assert redact(text, RedactionOptions.model_validate({})) == BACKTRACKING.sub("[REDACTED]", text)


@given(st.text(alphabet=ALPHABET, max_size=600), st.integers(1, 64), st.integers(24, 80))
def test_a_string_searched_window_by_window_is_redacted_as_a_whole_string_search_redacts_it(
    text: str, window: int, reach: int
) -> None:
    pattern = _compiled(DEFAULT_PATTERNS)
    assert pattern is not None
    assert _Redactor(pattern, "[R]").windowed(text, window, reach) == pattern.sub("[R]", text)


LINEAR_BOUND_S = 240
"""The subprocess's bound: linear time needs a few seconds here, the backtracking pattern hours."""

ADVERSARIAL = textwrap.dedent(
    """
    from hypothesis import given, settings, strategies as st
    from mcp_django.interceptors.redaction import RedactionOptions, redact

    LENGTH = 256 * 1024

    @settings(max_examples=30, deadline=None, database=None)
    @given(st.text(alphabet="aZ09._%+-@ ()", min_size=1, max_size=8), st.text(alphabet="aZ09._%+-@ ()", max_size=8))
    def scan(fragment, tail):
        text = (fragment * (LENGTH // len(fragment) + 1))[:LENGTH] + tail
        redact({"q": text}, RedactionOptions.model_validate({}))

    for fragment in ("a", "a@", "a@b.", "1", "+1(", "a.", "x@yy.z1"):  # the known worst cases, then Hypothesis's
        scan.hypothesis.inner_test(fragment, "")
    scan()
    print("scanned")
    """
)


def test_long_adversarial_strings_are_redacted_in_time_linear_in_their_length() -> None:
    result = subprocess.run(
        [sys.executable, "-c", ADVERSARIAL],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LINEAR_BOUND_S,
        check=False,
    )
    assert (result.returncode, result.stdout.strip()) == (0, "scanned"), result.stderr
