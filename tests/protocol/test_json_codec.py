"""The JSON codec (`parse_json`, `dump_json`): orjson where it agrees with the standard library, else the library."""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest

from mcp_django.protocol.jsonrpc import ParseError, dump_json, parse_json


def stdlib_parse(body: bytes) -> Any:
    """What the transports accepted before orjson: strict UTF-8, no NaN/Infinity, Python's own depth limit."""

    def reject(name: str) -> Any:
        raise ValueError(name)

    return json.loads(body.decode("utf-8"), parse_constant=reject)


def stdlib_dump(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("ascii")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        (b'"\\ud800"', "\ud800"),  # a lone surrogate escape: orjson refuses it, Python accepts it
        (b"18446744073709551616", 18446744073709551616),  # past 64 bits: an int, never orjson's float
        (b"-123456789012345678901234567890", -123456789012345678901234567890),
        (b"1e400", float("inf")),
        (b'{"a":1,"a":2}', {"a": 2}),
        (b" \t\n[1.5,-0.0,null,true]\r\n", [1.5, -0.0, None, True]),
        (b"[" * 300 + b"]" * 300, json.loads("[" * 300 + "]" * 300)),  # more brackets than the fast path takes
    ],
)
def test_what_parses_parses_to_the_standard_librarys_value(body: bytes, expected: Any) -> None:
    parsed = parse_json(body)

    assert repr(parsed) == repr(expected)
    assert repr(parsed) == repr(stdlib_parse(body))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"id": 1,', "Parse error: the body is not valid JSON"),
        (b'{"id": NaN}', "Parse error: the body is not valid JSON"),
        (b"[Infinity]", "Parse error: the body is not valid JSON"),
        (b"-Infinity", "Parse error: the body is not valid JSON"),
        (b"", "Parse error: the body is not valid JSON"),
        (b"\xef\xbb\xbf{}", "Parse error: the body is not valid JSON"),
        (b'{"a": "\x01"}', "Parse error: the body is not valid JSON"),
        (b'"ping\xff\xfe"', "Parse error: the body is not valid UTF-8"),
        (b'"\xed\xa0\x80"', "Parse error: the body is not valid UTF-8"),  # a surrogate encoded as UTF-8
        (b"[" * 200_000 + b"]" * 200_000, "Parse error: the JSON is nested too deeply"),
    ],
)
def test_what_is_refused_is_refused_with_the_same_message(body: bytes, message: str) -> None:
    with pytest.raises(ParseError) as raised:
        parse_json(body)

    assert raised.value.message == message


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hello"}]}},
        {"text": "é 日本 \U0001f600"},  # escaped, as the WebSocket transport sends it as ASCII text
        {"name": "\ud800"},  # a lone surrogate a client sent, echoed back
        {"nan": float("nan"), "inf": [float("inf"), float("-inf")]},  # Python's NaN tokens, not orjson's null
        {"big": 2**64, "small": -(2**63) - 1},
        {1: "an int key", None: "a None key", 2.5: "a float key", False: "a bool key"},
        {"tuple": (1, 2), "nested": [[[[{"a": None}]]]]},
        {"deep": json.loads("[" * 300 + "]" * 300)},  # deeper than orjson serializes
        {"id": None, "error": {"code": -32603, "message": "Internal error"}},
    ],
)
def test_dump_writes_the_standard_librarys_bytes(message: Any) -> None:
    data = dump_json(message)

    assert data == stdlib_dump(message)
    assert data.isascii()


def test_dump_refuses_what_json_cannot_carry() -> None:
    with pytest.raises(TypeError):
        dump_json({"value": object()})
    with pytest.raises(TypeError):
        dump_json({"value": {1, 2}})


def test_dump_writes_str_and_int_enums_as_their_values() -> None:
    class Colour(enum.StrEnum):
        RED = "red"

    class Level(enum.IntEnum):
        HIGH = 3

    assert dump_json({"colour": Colour.RED, "level": Level.HIGH}) == b'{"colour":"red","level":3}'


def test_random_messages_round_trip_as_with_the_standard_library() -> None:
    rnd = random.Random(9)
    atoms: list[Any] = [0, -1, 2**63 - 1, 2**64, 10**30, 0.1, 1e-7, 1e-5, 1e300, -0.0, True, False, None, ""]
    atoms += ["é", "\ud800", 'a"b\\c\n', "\x00", "null", "\u2028", "\U0001f600", 123456789012345678]

    def build(depth: int = 0) -> Any:
        roll = rnd.random()
        if depth > 4 or roll < 0.4:
            return rnd.choice(atoms)
        if roll < 0.7:
            return [build(depth + 1) for _ in range(rnd.randint(0, 4))]
        return {rnd.choice(["a", "b", "é", "id"]): build(depth + 1) for _ in range(rnd.randint(0, 4))}

    for _ in range(3000):
        message = build()
        data = dump_json(message)
        expected = stdlib_dump(message)
        # The one allowed difference: a float may be spelled differently, as the same shortest round-trip value.
        assert data == expected or repr(json.loads(data)) == repr(json.loads(expected))
        for body in (data, data + b" ", data[:-1], data + b"x", data.replace(b"\\u00e9", "é".encode())):
            try:
                expected_value = ("ok", repr(stdlib_parse(body)))
            except (ValueError, RecursionError):
                expected_value = ("error", "")
            try:
                got = ("ok", repr(parse_json(body)))
            except ParseError:
                got = ("error", "")
            assert got == expected_value, body
