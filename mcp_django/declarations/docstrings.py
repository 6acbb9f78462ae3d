"""Docstrings: a declaration's description and its arguments' descriptions.

Three styles are read, as Sphinx's napoleon reads them: Google (`Args:` then `name (type): text`), NumPy
(`Parameters` underlined with dashes, then `name : type` and its indented text) and Sphinx fields
(`:param name: text`). The description is the text before the first section; each argument's text goes
to its parameter's `description` in the input schema, where a model reads it.
"""

from __future__ import annotations

import inspect
import re
from typing import Final

_SECTIONS: Final = frozenset(
    {
        "args",
        "arguments",
        "attention",
        "attributes",
        "caution",
        "danger",
        "error",
        "example",
        "examples",
        "hint",
        "important",
        "keyword args",
        "keyword arguments",
        "methods",
        "note",
        "notes",
        "other parameters",
        "parameters",
        "params",
        "raise",
        "raises",
        "references",
        "return",
        "returns",
        "see also",
        "tip",
        "todo",
        "warning",
        "warnings",
        "warns",
        "yield",
        "yields",
    }
)
"""The section headers napoleon knows: a line that reads `Usage:` is text, not a section."""
_ARG_SECTIONS: Final = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "other parameters"}
)
_GOOGLE_HEADER: Final = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_NUMPY_RULE: Final = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ARG: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ARG: Final = re.compile(r"^(\*{0,2}\w+)(?:\s*:.*)?$")
_SPHINX_FIELD: Final = re.compile(
    r"^:(param|parameter|arg|argument|key|keyword|type|raises?|except|exception|returns?|rtype|yields?|ytype|var"
    r"|ivar|cvar|meta)\b([^:]*):\s*(.*)$"
)
_SPHINX_ARGS: Final = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a docstring (Google, NumPy or Sphinx style) into its description and its arguments' texts.

    The description is everything before the first section (`Args:`, `Returns:`, a NumPy
    `Parameters` header, a `:param x:` field, ...), so a multi-paragraph summary survives.

    Returns:
        `(description or None, {argument name: description})`.
    """
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    arguments: dict[str, str] = {}
    section: str | None = None  # a section's lowercased name, ":param" or ":field" for Sphinx's fields
    numpy = False
    current: str | None = None
    base_indent = 0
    skip = 0
    for index, line in enumerate(lines):
        if skip:
            skip -= 1
            continue
        top_level = not line[:1].isspace()
        header = _GOOGLE_HEADER.match(line) if top_level else None
        if header and header.group(1).lower() in _SECTIONS:
            section, numpy, current = header.group(1).lower(), False, None
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if top_level and line.strip().lower() in _SECTIONS and _NUMPY_RULE.match(following):
            section, numpy, current, skip = line.strip().lower(), True, None, 1
            continue
        field = _SPHINX_FIELD.match(line) if top_level else None
        if field:
            kind, target, text = field.groups()
            current = None
            section = ":field"
            if kind in _SPHINX_ARGS and target.split():
                current, section = target.split()[-1].lstrip("*"), ":param"
                arguments[current] = text.strip()
            continue
        if section is None:
            description.append(line)
            continue
        if not line.strip():
            continue
        if section == ":param":
            if current is not None and not top_level:
                arguments[current] = f"{arguments[current]} {line.strip()}".strip()
            continue
        if section not in _ARG_SECTIONS:
            continue
        indent = len(line) - len(line.lstrip())
        if numpy:
            entry = _NUMPY_ARG.match(line) if top_level else None
            if entry:
                current = entry.group(1).lstrip("*")
                arguments[current] = ""
            elif current is not None:
                arguments[current] = f"{arguments[current]} {line.strip()}".strip()
            continue
        entry = _GOOGLE_ARG.match(line.strip())
        if entry and (current is None or indent <= base_indent):
            current, base_indent = entry.group(1).lstrip("*"), indent
            arguments[current] = entry.group(2).strip()
        elif current is not None:
            arguments[current] = f"{arguments[current]} {line.strip()}".strip()
    summary = "\n".join(description).strip()
    return summary or None, {name: text for name, text in arguments.items() if text}
