"""The checks reference against the code: every check ID the package can report is in docs/checks.md, and back.

(The settings reference is held to conf.py's defaults by tests/test_conf.py; `make docs` builds the
site in strict mode, so a broken link fails `make test`.)
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK_ID = re.compile(r"mcp_django(?:_[a-z]+)?\.[EW]\d{3}")


def test_every_check_id_in_the_code_is_in_the_checks_reference_and_back() -> None:
    in_code = {found for path in (ROOT / "mcp_django").rglob("*.py") for found in CHECK_ID.findall(path.read_text())}
    documented = set(CHECK_ID.findall((ROOT / "docs" / "checks.md").read_text()))

    assert in_code, "no check IDs found in the package"
    assert sorted(in_code - documented) == [], "checks missing from docs/checks.md"
    assert sorted(documented - in_code) == [], "docs/checks.md documents checks the code no longer has"


def test_the_checks_reference_lists_each_check_under_the_section_of_its_namespace() -> None:
    section = ""
    misplaced = []
    for line in (ROOT / "docs" / "checks.md").read_text().splitlines():
        if line.startswith("## "):
            section = line
        elif (found := CHECK_ID.search(line)) and line.startswith("###"):
            misplaced += [(section, line)] if f"`{found.group().partition('.')[0]}`" not in section else []

    assert misplaced == []
