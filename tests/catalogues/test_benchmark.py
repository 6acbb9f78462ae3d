"""`benchmarks/tokens.py` on its fixed catalogues and task set (not timed): `search` costs a model at least 90%
fewer `tools/list` tokens than the flat list, and finds the tool each task needs within five results."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT

LINE = re.compile(r"^tokens (\S+) (flat|search|grouped) (\d+) recall@5=([01]\.\d\d)$")
FIRST = re.compile(r"^instructions (\S+) (flat|search|grouped) (\d+) initialize=(\d+) discover=(\d+)$")


def test_search_cuts_the_listed_tokens_by_90_percent_and_finds_nine_tools_of_ten_on_every_catalogue() -> None:
    ran = subprocess.run(
        [sys.executable, "benchmarks/tokens.py"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    rows = {(m[1], m[2]): (int(m[3]), float(m[4])) for line in ran.stdout.splitlines() if (m := LINE.match(line))}

    catalogues = {catalogue for catalogue, _ in rows}
    assert catalogues - {"reference-hub"} == {"demo-hub", "models-50"}  # the reference hub where make test installed it
    assert set(rows) == {(catalogue, mode) for catalogue in catalogues for mode in ("flat", "search", "grouped")}
    for catalogue in catalogues:
        flat, search, grouped = (rows[(catalogue, mode)] for mode in ("flat", "search", "grouped"))
        assert search[0] <= flat[0] / 10, (catalogue, flat, search)
        assert search[1] >= 0.9, (catalogue, search)
        assert flat[1] >= 0.9, (catalogue, flat)
        assert grouped[0] < flat[0] / 2, (catalogue, flat, grouped)
    lines = ran.stdout.splitlines()
    first = {(m[1], m[2]): tuple(map(int, m.groups()[2:])) for line in lines if (m := FIRST.match(line))}
    assert set(first) == set(rows)
    assert all(0 < instructions < initialize < discover for instructions, initialize, discover in first.values())
    assert rows[("models-50", "flat")][0] > 40_000  # 250 lean tools: the catalogue the modes are for
