"""A `SKILL.md`'s YAML front matter, read as the Agent Skills hosts read it: YAML 1.2's core schema, as JSON.

Hosts compare the front matter a server lists with the one they parse from the file, field by field
(SEP-2640 "Frontmatter Verification"), and the reference hosts parse YAML 1.2. PyYAML speaks YAML 1.1,
where `yes` is a boolean, `010` is eight and `2026-01-01` a date: a skill written that way would be
listed with values its own file does not hold for the host. So the loader here resolves plain scalars
by the 1.2 core schema only, refuses duplicate keys (as the hosts' parser does) and anything JSON
cannot carry.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

import yaml

_BLOCK: Final = re.compile(r"\A---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class FrontMatterError(ValueError):
    """The front matter is missing, is not YAML, or is not a mapping of JSON values."""


class _CoreLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and no duplicate keys."""


_CoreLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
):
    _CoreLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _core_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]  # a scalar node: resolved as int
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.Node) -> dict[Any, Any]:
    assert isinstance(node, yaml.MappingNode)
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise FrontMatterError(f"the key {key!r} appears twice")
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_CoreLoader.add_constructor("tag:yaml.org,2002:int", _core_int)
_CoreLoader.add_constructor("tag:yaml.org,2002:map", _unique_mapping)


def split_front_matter(text: str) -> str | None:
    """The YAML between a leading `---` line and the next `---` line (a BOM before it allowed), or None."""
    matched = _BLOCK.match(text.removeprefix("\ufeff"))
    return None if matched is None else matched[1]


def parse_front_matter(text: str) -> dict[str, Any]:
    """The front matter of a `SKILL.md`'s text, as the JSON object a skill entry carries.

    Raises:
        FrontMatterError: there is no front matter block, it is not YAML, or it is not a mapping of
            JSON values (string keys; no dates, binary, sets, infinities).
    """
    block = split_front_matter(text)
    if block is None:
        raise FrontMatterError("no front matter")
    try:
        data = yaml.load(block, Loader=_CoreLoader)  # a SafeLoader subclass: builds plain data only
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise FrontMatterError(f"not YAML: {problem}") from None
    if not isinstance(data, dict):
        raise FrontMatterError("not a mapping")
    _require_json(data, "front matter")
    return data


def _require_json(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise FrontMatterError(f"{where} has the key {key!r}, which is not a string")
            _require_json(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _require_json(item, f"{where}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise FrontMatterError(f"{where} is {value}, which JSON cannot carry")
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise FrontMatterError(f"{where} is a {type(value).__name__}, which JSON cannot carry")
