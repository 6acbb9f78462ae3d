"""The resource template matcher (issue 36): what a URI binds is what the backtracking regex bound, and a URI
built to make that regex backtrack costs the matcher a number of steps linear in its length.

`BACKTRACKING` (below) is the matcher before issue 36, kept as the reference: one regex of the template, its
values lazy (`{+path}`) or greedy runs. On crafted URIs it took time polynomial in their length, to the power
of the number of variables that can give characters to one another (a `{+a}/{+b}/{+c}/raw` template and a URI
of slashes: cubic). tests/live/test_uri_attack_live.py sends such a URI to a real server.
"""

from __future__ import annotations

import re
import sys
from typing import Any
from urllib.parse import parse_qsl, unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_django.declarations.uri_templates import UriTemplate

_VALUES = {"": r"[^/?#,]+", "+": r".+?", "#": r".+?", ".": r"[^/?#.]+", "/": r"[^/?#]+", ";": r"[^/?#;]*"}
_LEADS = {"": ("", ","), "+": ("", ","), "#": ("#", ","), ".": (r"\.", r"\."), "/": ("/", "/"), ";": (";", ";")}


def backtracking(template: str, uri: str) -> dict[str, str] | None:
    """What the matcher before issue 36 bound: the template as one backtracking regex."""
    pattern: list[str] = []
    groups: dict[str, str] = {}
    queries: list[str] = []
    position = 0
    for match in re.finditer(r"\{([+#./;?&]?)([^{}]+)\}", template):
        pattern.append(re.escape(template[position : match.start()]))
        position, operator = match.end(), match.group(1)
        names = [name.split(":")[0].rstrip("*").strip() for name in match.group(2).split(",")]
        if operator in ("?", "&"):
            queries += names
            pattern.append(rf"(?:[?&](?P<_query{len(groups)}>[^#]*))?")
            groups[f"_query{len(groups)}"] = ""
            continue
        prefix, separator = _LEADS[operator]
        parts = []
        for name in names:
            groups[f"_v{len(groups)}"] = name
            lead = f"{name}=" if operator == ";" else ""
            parts.append(f"{lead}(?P<_v{len(groups) - 1}>{_VALUES[operator]})")
        pattern.append(prefix + separator.join(parts))
    pattern.append(re.escape(template[position:]))
    found = re.fullmatch("".join(pattern), uri)
    if found is None:
        return None
    values: dict[str, str] = {}
    for group, text in found.groupdict().items():
        if text is not None and group.startswith("_query"):
            values.update((key, value) for key, value in parse_qsl(text) if key in queries)
        elif text is not None:
            values[groups[group]] = unquote(text)
    return values


CHARACTERS = "ab/?&#.,;=\n%é€"
"""Characters some operator's values stop at, a few none does, two beyond Latin-1 (read position by position)."""

expressions = st.builds(
    lambda operator, names: "{" + operator + ",".join(names) + "}",
    st.sampled_from(["", "+", "#", ".", "/", ";", "?", "&"]),
    st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2),
)
templates = st.lists(st.one_of(expressions, st.text(alphabet="ab/.#;=?é€", max_size=3)), max_size=5).map("".join)


@given(templates, st.text(alphabet=CHARACTERS, max_size=14))
def test_a_uri_binds_what_the_backtracking_regex_bound(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) == backtracking(template, uri)


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("files://{+share}/{+folder}/{+name}/raw", "files://a/b/c/d/raw"),
        ("x://{a}{b}", "x://abc"),
        ("x://{?q}{&r}", "x://?q=1&r=2"),
        ("x://{+path}/edit", "x://a/b/edit"),
        ("x://{;p,q}{?r}", "x://;p=1;q=?r=2"),
    ],
)
def test_templates_whose_pieces_can_share_characters_bind_as_before(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) == backtracking(template, uri) is not None


def test_a_template_no_piece_of_which_can_give_characters_to_the_next_is_one_possessive_regex() -> None:
    assert UriTemplate("repo://{owner}/{repo}/files/{+path}")._regex is not None
    assert UriTemplate("x://{;p}/{?q}#top")._regex is not None
    assert UriTemplate("x://{+path}/edit")._regex is None


@pytest.mark.parametrize(
    ("template", "crafted"),
    [
        ("files://{+share}/{+folder}/{+name}/raw", lambda n: "files://" + "/" * n + "x"),
        ("files://{+share}/{+folder}/{+name}/raw", lambda n: "files://€" + "/" * n + "x"),  # beyond Latin-1
        ("x://{a}{b}{c}!", lambda n: "x://" + "a" * n),
        ("x://{?q}{&r}{&s}!", lambda n: "x://?" + "&" * n + "#"),
        ("x://{+a}{+b}", lambda n: "x://" + "a" * n + "\n"),
    ],
)
def test_a_crafted_uri_costs_the_matcher_steps_linear_in_its_length(template: str, crafted: Any) -> None:
    """Counted, not timed: the calls the matcher makes (Python's and C's, `sys.setprofile`) for a URI ten times
    longer are at most about ten times as many (a quadratic matcher's would be a hundred times)."""
    matcher = UriTemplate(template)

    def steps(n: int) -> int:
        counted = [0]

        def count(frame: object, event: str, arg: object) -> None:
            counted[0] += 1

        sys.setprofile(count)
        try:
            assert matcher.match(crafted(n)) is None
        finally:
            sys.setprofile(None)
        return counted[0]

    assert steps(20_000) <= 12 * steps(2_000) + 100
