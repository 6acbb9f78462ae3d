"""The bounds on what a remote MCP server may send a gateway, or make it do (decision 24, docs/deployment.md).

Each is a setting: `REMOTE_MAX_MESSAGE_BYTES` (one message after decompression: a JSON answer, an
SSE event, a stdio line), `REMOTE_MAX_LIST_ITEMS` and `REMOTE_MAX_LIST_PAGES` (one listing, see
`listing.Listing`), `REMOTE_MAX_INPUT_ROUNDS` and `REMOTE_CALL_TIMEOUT` (one forwarded operation).
A remote past one of them gives its caller `BackendUnavailable` with `data.reason = "limit"`
(`"timeout"` for the wall time), never what it sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from typing import Final, TypeVar

from mcp_django.client.conf import client_settings
from mcp_django.exceptions import BackendUnavailable

LIMIT: Final = "limit"
"""The `data.reason` of a remote that went past one of the bounds."""

K = TypeVar("K")
V = TypeVar("V")


def over_limit(server: str, detail: str) -> BackendUnavailable:
    """The error a caller gets when `server` went past a bound: -32603, `data.reason = "limit"`."""
    return BackendUnavailable(server, LIMIT, detail)


def input_rounds(server: str, method: str) -> Iterator[int]:
    """The rounds of one forwarded operation that answers `input_required`: at most `REMOTE_MAX_INPUT_ROUNDS`.

    Raises:
        BackendUnavailable: (`reason = "limit"`) once the remote asks again after the last round.
    """
    limit = client_settings.REMOTE_MAX_INPUT_ROUNDS
    yield from range(limit)
    raise over_limit(server, f"{method} still asks for input after {limit} rounds (REMOTE_MAX_INPUT_ROUNDS)")


@contextlib.asynccontextmanager
async def call_deadline(server: str, method: str) -> AsyncIterator[None]:
    """Bound one forwarded operation, all its requests and input rounds together, by `REMOTE_CALL_TIMEOUT`.

    Raises:
        BackendUnavailable: (`reason = "timeout"`) past the deadline.
    """
    seconds = float(client_settings.REMOTE_CALL_TIMEOUT)
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            yield
    except TimeoutError:
        if not deadline.expired():
            raise
        detail = f"{method} did not finish within {seconds:g}s (REMOTE_CALL_TIMEOUT)"
        raise BackendUnavailable(server, "timeout", detail) from None


def remember(memo: OrderedDict[K, V], key: K, value: V | None) -> None:
    """Keep `key` in `memo` (forget it for None), newest last, dropping the oldest past `REMOTE_MAX_LIST_ITEMS`.

    What a gateway learns from a remote's listings (a tool's `x-mcp-header` arguments) stays bounded
    however many names the remote makes up over time.
    """
    memo.pop(key, None)
    if value is None:
        return
    memo[key] = value
    while len(memo) > client_settings.REMOTE_MAX_LIST_ITEMS:
        memo.popitem(last=False)
