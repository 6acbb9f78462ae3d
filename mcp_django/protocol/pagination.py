"""Opaque cursors for list results."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from mcp_django.protocol.jsonrpc import InvalidParams

_PREFIX = "mcpdj1:"
T = TypeVar("T")


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode().rstrip("=")


def _decode(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParams("Invalid cursor") from None
    if not raw.startswith(_PREFIX) or not raw[len(_PREFIX) :].isdigit():
        raise InvalidParams("Invalid cursor")
    return int(raw[len(_PREFIX) :])


def paginate(items: Sequence[T], params: Mapping[str, Any], page_size: int) -> tuple[Sequence[T], str | None]:
    """Return the page `params["cursor"]` points at and the cursor of the next page (None at the end).

    An absent or empty cursor is the first page; anything we did not mint is `-32602`.
    """
    cursor = params.get("cursor")
    if cursor is None or cursor == "":
        offset = 0
    elif isinstance(cursor, str):
        offset = _decode(cursor)
        if offset > len(items):
            raise InvalidParams("Invalid cursor")
    else:
        raise InvalidParams("Invalid cursor")
    end = offset + page_size
    return items[offset:end], (_encode(end) if end < len(items) else None)
