"""The RFC 6570 matcher resource templates use: which variables a URI binds, in time linear in the URI.

The `uritemplate` package expands templates but does not match URIs against them, so the matcher is ours.
A template is a row of pieces: literal text, a variable's value (a run of the characters its operator
allows: `{id}` no `/?#,`, `{+path}` anything but a newline, ...) and optional query parts (`{?q,page}`).
What a URI binds is what a backtracking regex of those pieces would bind (greedy values, lazy reserved
ones, a query part tried before it is skipped), but a URI never makes the matcher backtrack:

- a template where no piece can give characters to the next (each value is followed by the end, or by a
  literal starting with a character the value cannot hold) is one anchored regex with possessive
  quantifiers, which never backtracks;
- any other (`{+path}/edit`, `{a}{b}`, `{?q}{&page}`) is matched by dynamic programming: from the end, the
  positions from which the rest of the template matches, one pass per piece, then the values read forward.

A hostile `resources/read` URI (issue 36) costs the first a regex scan and the second one pass per piece.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, unquote

_OPERATORS: Final = {
    # operator: (prefix, separator, characters a value cannot hold, shortest value, lazy)
    "": ("", ",", "/?#,", 1, False),
    "+": ("", ",", "\n", 1, True),
    "#": ("#", ",", "\n", 1, True),
    ".": (".", ".", "/?#.", 1, False),
    "/": ("/", "/", "/?#", 1, False),
    ";": (";", ";", "/?#;", 0, False),
}
_EXPRESSION: Final = re.compile(r"\{([+#./;?&]?)([^{}]+)\}")
_QUERY_LEADS: Final = "?&"


@dataclass(frozen=True, slots=True)
class _Literal:
    text: str


@dataclass(frozen=True, slots=True)
class _Value:
    """A variable's value: a run of characters outside `forbidden`, at least `shortest` long."""

    group: str
    forbidden: str
    shortest: int
    lazy: bool

    @property
    def pattern(self) -> str:
        return f"[^{re.escape(self.forbidden)}]"


@dataclass(frozen=True, slots=True)
class _Query:
    """An optional query part: `?` or `&`, then anything up to a fragment."""

    group: str


_Piece = _Literal | _Value | _Query
_FRAGMENT: Final = _Value("", "#", 0, False)
"""What a query part holds after its `?` or `&`."""


class UriTemplate:
    """An RFC 6570 URI template compiled once into a matcher.

    Simple (`{id}`), reserved (`{+path}`), fragment, label, path-segment
    (`{/a,b}`), path-parameter and query (`{?q,page}`, `{&x}`) expressions are
    understood. Query variables are optional; every other variable must appear.
    Matched values are percent-decoded. Matching is linear in the URI's length.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        self.variables: list[str] = []
        self.query_variables: list[str] = []
        self._groups: dict[str, str] = {}
        self._pieces = self._compile(template)
        self._regex = self._possessive(self._pieces)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def _compile(self, template: str) -> tuple[_Piece, ...]:
        pieces: list[_Piece] = []

        def literal(text: str) -> None:
            if not text:
                return
            if pieces and isinstance(pieces[-1], _Literal):
                pieces[-1] = _Literal(pieces[-1].text + text)
            else:
                pieces.append(_Literal(text))

        position = 0
        for match in _EXPRESSION.finditer(template):
            literal(template[position : match.start()])
            position = match.end()
            operator_ = match.group(1)
            # Prefix (`:3`) and explode (`*`) modifiers change expansion, not which variable binds.
            names = [name.split(":")[0].rstrip("*").strip() for name in match.group(2).split(",")]
            if operator_ in ("?", "&"):
                self.query_variables += names
                group = f"_query{len(self._groups)}"
                self._groups[group] = ""
                pieces.append(_Query(group))
                continue
            prefix, separator, forbidden, shortest, lazy = _OPERATORS[operator_]
            literal(prefix)
            for index, name in enumerate(names):
                group = f"_v{len(self._groups)}"
                self._groups[group] = name
                self.variables.append(name)
                literal((separator if index else "") + (f"{name}=" if operator_ == ";" else ""))
                pieces.append(_Value(group, forbidden, shortest, lazy))
        literal(template[position:])
        return tuple(pieces)

    @staticmethod
    def _possessive(pieces: tuple[_Piece, ...]) -> re.Pattern[str] | None:
        """One anchored regex that never backtracks, when no piece could give characters to the next; else None."""
        parts: list[str] = []
        for piece, following in zip(pieces, [*pieces[1:], None], strict=False):  # the last is followed by the end
            if isinstance(piece, _Literal):
                parts.append(re.escape(piece.text))
                continue
            ends = following is None or (isinstance(following, _Literal) and following.text[0] in _stops(piece))
            if not ends:
                return None
            if isinstance(piece, _Value):
                parts.append(f"(?P<{piece.group}>{piece.pattern}{'++' if piece.shortest else '*+'})")
            else:
                parts.append(f"(?:[{_QUERY_LEADS}](?P<{piece.group}>[^#]*+))?+")
        return re.compile("".join(parts))

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the variables `uri` binds, or None when it does not fit the template."""
        if self._regex is not None:
            found = self._regex.fullmatch(uri)
            return None if found is None else self._values(found.groupdict())
        return self._matched(uri)

    def _matched(self, uri: str) -> dict[str, str] | None:
        """Dynamic programming: `rest[i][p]` says whether pieces i.. match `uri[p:]`, all of it."""
        n = len(uri)
        rest = [bytearray(n + 1)]
        rest[0][n] = 1
        for piece in reversed(self._pieces):
            rest.append(_reach(piece, uri, rest[-1]))
        rest.reverse()
        if not rest[0][0]:
            return None
        texts: dict[str, str | None] = {}
        position = 0
        for piece, after in zip(self._pieces, rest[1:], strict=True):
            if isinstance(piece, _Literal):
                position += len(piece.text)
            elif isinstance(piece, _Value):
                end = _run_end(uri, position, piece.forbidden)
                start = position + piece.shortest
                taken = after.find(1, start, end + 1) if piece.lazy else after.rfind(1, start, end + 1)
                texts[piece.group], position = uri[position:taken], taken
            elif position < len(uri) and uri[position] in _QUERY_LEADS and _reach(_FRAGMENT, uri, after)[position + 1]:
                taken = after.rfind(1, position + 1, _run_end(uri, position + 1, "#") + 1)
                texts[piece.group], position = uri[position + 1 : taken], taken
            else:
                texts[piece.group] = None
        return self._values(texts)

    def _values(self, texts: dict[str, str | None]) -> dict[str, str]:
        values: dict[str, str] = {}
        for group, text in texts.items():
            if text is None:
                continue
            if group.startswith("_query"):
                wanted = set(self.query_variables)
                values.update((key, value) for key, value in parse_qsl(text) if key in wanted)
            else:
                values[self._groups[group]] = unquote(text)
        return values


def _stops(piece: _Value | _Query) -> str:
    """The characters that end the piece's run (a query part's: a fragment)."""
    return piece.forbidden if isinstance(piece, _Value) else "#"


def _run_end(uri: str, start: int, forbidden: str) -> int:
    """Where the run of characters outside `forbidden` that starts at `start` ends."""
    found = re.compile(f"[{re.escape(forbidden)}]").search(uri, start)
    return len(uri) if found is None else found.start()


def _reach(piece: _Piece, uri: str, after: bytearray) -> bytearray:
    """The positions from which `piece` then the rest match, given those from which the rest matches (`after`).

    Each is a byte per position of the URI, and its end (1: matches from there). A URI of Latin-1 characters
    (every URI RFC 3986 allows) is read by whole-buffer operations (`bytes.translate`, big-integer arithmetic
    whose carries run a value's characters); any other, position by position.
    """
    try:
        data = uri.encode("latin-1")
    except UnicodeEncodeError:
        return _reach_by_position(piece, uri, after)
    if isinstance(piece, _Literal):
        return _literal_reach(piece.text, data, after)
    if isinstance(piece, _Query):
        leads = _number(_mask(data, _QUERY_LEADS) + b"\0")
        inside = _number(_value_reach(_FRAGMENT, data, after)[1:] + b"\0")
        return _bytes(_number(after) | (leads & inside), len(after))
    return _value_reach(piece, data, after)


_ONE: Final = bytes([0] + [1] * 255)
"""`bytes.translate`'s table turning every byte but 0 into 1."""


def _number(flags: bytes | bytearray) -> int:
    return int.from_bytes(flags, "big")


def _bytes(number: int, length: int) -> bytearray:
    return bytearray(number.to_bytes(length, "big").translate(_ONE))


def _mask(data: bytes, chars: str, *, among: bool = True) -> bytes:
    """A byte per byte of `data`: 1 where it is one of `chars` (`among=False`: where it is none of them)."""
    table = bytearray([0 if among else 1]) * 256
    for char in chars.encode("latin-1"):
        table[char] = 1 if among else 0
    return data.translate(table)


def _literal_reach(text: str, data: bytes, after: bytearray) -> bytearray:
    """Where `text` stands and the rest matches after it."""
    try:
        wanted = text.encode("latin-1")
    except UnicodeEncodeError:
        return bytearray(len(after))  # a Latin-1 URI holds no such text
    found = _number(after[len(wanted) :] + bytes(len(wanted)))
    for offset, char in enumerate(wanted):
        found &= _number(_mask(data, chr(char))[offset:] + bytes(offset + 1))
    return _bytes(found, len(after))


def _value_reach(piece: _Value, data: bytes, after: bytearray) -> bytearray:
    """Where a run of the value's characters, at least `shortest` long, ends where the rest matches.

    Without a shortest length: the rest matches here, or this character is allowed and the run goes on from the
    next. Read from the end, that is a carry through each run of allowed characters: adding a 1 below a run of
    0xFF bytes turns the run, from there up to where it started, to zeros and sets the byte before it.
    """
    length = len(after)
    allowed = _mask(data, piece.forbidden, among=False) + b"\0"
    runs = _number(allowed.translate(bytes([0] + [0xFF] * 255)))
    ends = _number(after)
    seeds = _number(after[1:] + b"\0") & _number(allowed)  # allowed here, and the rest matches after it
    empty_or_longer = ends | seeds | (((runs + seeds) ^ runs) & runs)
    if not piece.shortest:
        return _bytes(empty_or_longer, length)
    longer = _bytes(empty_or_longer, length)
    return _bytes(_number(longer[1:] + b"\0") & _number(allowed), length)


def _reach_by_position(piece: _Piece, uri: str, after: bytearray) -> bytearray:
    """`_reach`, position by position: for a URI with characters beyond Latin-1."""
    n = len(uri)
    if isinstance(piece, _Literal):
        reached = bytearray(n + 1)
        start = uri.find(piece.text)
        while start != -1:
            reached[start] = after[start + len(piece.text)]
            start = uri.find(piece.text, start + 1)
        return reached
    if isinstance(piece, _Query):
        reached = bytearray(after)  # skipped
        inside = _reach_by_position(_FRAGMENT, uri, after)
        for lead in re.finditer(f"[{_QUERY_LEADS}]", uri):
            reached[lead.start()] |= inside[lead.start() + 1]
        return reached
    # A value: from p, a run ending anywhere in [p + shortest, the run's end] must land where the rest matches.
    ends = [n] * (n + 1)
    start = 0
    for stop in re.finditer(f"[{re.escape(piece.forbidden)}]", uri):
        ends[start : stop.start() + 1] = [stop.start()] * (stop.start() + 1 - start)
        start = stop.start() + 1
    following = [n + 1] * (n + 2)  # following[q]: the first position >= q from which the rest matches
    start, found = 0, after.find(1)
    while found != -1:
        following[start : found + 1] = [found] * (found + 1 - start)
        start, found = found + 1, after.find(1, found + 1)
    return bytearray(map(operator.le, following[piece.shortest : piece.shortest + n + 1], ends))
