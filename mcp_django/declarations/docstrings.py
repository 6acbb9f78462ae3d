"""Google-style docstrings: a declaration's description and its arguments' descriptions."""

from __future__ import annotations

import inspect
import re
from typing import Final

_SECTION: Final = re.compile(r"^(\w[\w ]*):\s*$")
_ARG_SECTIONS: Final = frozenset({"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"})
_ARG_LINE: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a Google-style docstring into its description and its `Args:` descriptions.

    The description is everything before the first section header (`Args:`,
    `Returns:`, `Raises:`, ...), so a multi-paragraph summary survives.

    Returns:
        `(description or None, {argument name: description})`.
    """
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    arguments: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    base_indent = 0
    for line in lines:
        header = _SECTION.match(line)
        if header and not line.startswith((" ", "\t")):
            section = header.group(1).lower()
            current = None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in _ARG_SECTIONS or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        entry = _ARG_LINE.match(line.strip())
        if entry and (current is None or indent <= base_indent):
            current, base_indent = entry.group(1).lstrip("*"), indent
            arguments[current] = entry.group(2).strip()
        elif current is not None:
            arguments[current] = f"{arguments[current]} {line.strip()}".strip()
    summary = "\n".join(description).strip()
    return summary or None, arguments
