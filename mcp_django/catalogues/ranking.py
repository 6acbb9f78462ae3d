"""BM25 over tool definitions: names, titles, descriptions and parameter names, pure Python, no service.

A tool is a document of its words: the parts of its name (`list_books` is `list` and `books`; twice), its title,
its description and its parameters' names and descriptions, each folded to lower case, `books` also
counting as `book` so a plural finds a singular. `rank(query, tools)` orders the tools by Okapi BM25
(k1 1.2, b 0.75) against the query's words, a word meaning one of a toolset's verbs counting as that
verb too (`rename` is `update`, `remove` is `delete`: `SYNONYMS`); ties keep the catalogue's order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

_WORD: Final = re.compile(r"[a-z0-9]+")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_K1: Final = 1.2
_B: Final = 0.75
_STOP: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "with",
    ]
)
_VERBS: Final = {
    "create": "add new make register issue open publish post",
    "update": "change edit modify rename move set close mark",
    "delete": "remove cancel drop erase",
    "list": "find search which all browse filter",
    "get": "show read view details describe fetch",
}
SYNONYMS: Final = {word: verb for verb, words in _VERBS.items() for word in words.split()}
"""The words of a task that mean a toolset's verbs (`rename` is `update`): a query counts them as the verb too."""


def words(text: str) -> list[str]:
    """The index's words of `text`: lower case runs of letters and digits (camelCase split), stop words
    dropped, each word's singular beside a plural (`books` gives `books` and `book`)."""
    found: list[str] = []
    for word in _WORD.findall(_CAMEL.sub(" ", text).lower()):
        if word in _STOP:
            continue
        found.append(word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            found.append(word[:-1])
    return found


def _document(tool: Mapping[str, Any]) -> list[str]:
    name = str(tool.get("name", "")).replace("_", " ").replace(".", " ")
    parts = [name, name, str(tool.get("title") or "")]  # the name counts twice: it says what the tool does
    parts.append(str(tool.get("description") or ""))
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            parts.append(str(name).replace("_", " "))
            if isinstance(prop, Mapping) and isinstance(prop.get("description"), str):
                parts.append(prop["description"])
    return words(" ".join(parts))


class Index:
    """A BM25 index of one catalogue: build it once per catalogue, ask it many queries."""

    __slots__ = ("_average", "_documents", "_frequencies", "_lengths", "tools")

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None:
        self.tools = list(tools)
        self._documents = [Counter(_document(tool)) for tool in self.tools]
        self._lengths = [sum(document.values()) for document in self._documents]
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        self._frequencies: Counter[str] = Counter(word for document in self._documents for word in document)

    def scores(self, query: str) -> list[float]:
        """Each tool's BM25 score for `query`, in the catalogue's order."""
        count = len(self._documents)
        terms = set(words(query))
        terms |= {SYNONYMS[term] for term in terms if term in SYNONYMS}
        weights = {
            term: math.log(1 + (count - self._frequencies[term] + 0.5) / (self._frequencies[term] + 0.5))
            for term in terms
            if self._frequencies[term]
        }
        scores = []
        for document, length in zip(self._documents, self._lengths, strict=True):
            norm = _K1 * (1 - _B + _B * length / (self._average or 1))
            scores.append(
                sum(
                    weight * document[t] * (_K1 + 1) / (document[t] + norm)
                    for t, weight in weights.items()
                    if t in document
                )
            )
        return scores

    def search(self, query: str, limit: int) -> list[Mapping[str, Any]]:
        """The `limit` best tools for `query` that share a word with it, best first."""
        scored = [(score, position) for position, score in enumerate(self.scores(query)) if score > 0]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [self.tools[position] for _, position in scored[:limit]]


def rank(query: str, tools: Iterable[Mapping[str, Any]], limit: int = 5) -> list[Mapping[str, Any]]:
    """The `limit` tools of `tools` that best match `query`, best first (one-off: `Index` to ask again)."""
    return Index(list(tools)).search(query, limit)
