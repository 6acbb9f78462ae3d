"""What a hub knows of each remote: whether it answers, and a circuit that keeps one that does not out.

A hub asks every remote for every list, and a caller waits for the slowest. `Health` keeps a remote
that failed to answer from costing every caller its wait: the first failure (not reached, timed out,
broke the protocol) *opens* the circuit, and for `REMOTE_RETRY_AFTER` seconds the hub leaves the
remote out of its lists (and its handshake) without asking it; then the next list asks it again,
one caller at a time (the probe), the others still leaving it out; an answer closes the circuit.
A remote that answers one list with an error (or nonsense) stays in: only that list leaves it out.

`state` is what the manifest shows (`unknown` until it was asked, `up`, `degraded` while some list
answers with an error, `down` while the circuit is open); `detail` (the admin's) says why.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeVar

from mcp_django.client.conf import client_settings
from mcp_django.exceptions import BackendUnavailable, RemoteError

logger = logging.getLogger("mcp_django.gateway")

T = TypeVar("T")

State = Literal["unknown", "up", "degraded", "down"]

_NOT_THE_REMOTES_FAULT: Final = frozenset({"refused", "not_connected"})
"""`BackendUnavailable` reasons about one caller's credentials, not the remote: they open no circuit."""


def opens_circuit(reason: str) -> bool:
    """Whether a `BackendUnavailable` of `reason` says the remote, rather than one caller's token, is at fault."""
    return reason not in _NOT_THE_REMOTES_FAULT


class Health:
    """One remote's health in one hub (a source's), and its circuit.

    Args:
        clock: seconds, monotonic (`time.monotonic`; a test passes its own).
    """

    __slots__ = ("_clock", "_probe_until", "_retry_at", "detail", "errors", "since", "state")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.state: State = "unknown"
        self.detail: str | None = None
        self.since: float = time.time()
        """When `state` last changed (seconds since the epoch)."""
        self.errors: dict[str, str] = {}
        """The lists the remote answered with an error or nonsense last time: method → what it said."""
        self._retry_at: float | None = None
        self._probe_until: float | None = None

    def admits(self) -> bool:
        """Whether to ask the remote now: always while the circuit is closed; once open, one probe per wait.

        The caller that gets True while the circuit is open is the probe: until it reports (`answered`,
        `failed`), or for one `REMOTE_LIST_TIMEOUT` if it never does, the others get False.
        """
        if self._retry_at is None:
            return True
        now = self._clock()
        if now < self._retry_at or (self._probe_until is not None and now < self._probe_until):
            return False
        self._probe_until = now + float(client_settings.REMOTE_LIST_TIMEOUT)
        return True

    def answered(self, method: str | None = None) -> None:
        """The remote answered (`method`, a list, or its handshake when None): the circuit closes."""
        if method is not None:
            self.errors.pop(method, None)
        self._retry_at = self._probe_until = None
        self._set("degraded" if self.errors else "up", self._errors_detail())

    def erred(self, method: str, detail: str) -> None:
        """The remote answered `method` with an error or nonsense: that list leaves it out; the circuit stays closed."""
        self.errors[method] = detail
        self._retry_at = self._probe_until = None
        self._set("degraded", self._errors_detail())

    def failed(self, detail: str) -> None:
        """The remote did not answer (down, timed out, broke the protocol): the circuit opens."""
        self._retry_at = self._clock() + float(client_settings.REMOTE_RETRY_AFTER)
        self._probe_until = None
        self._set("down", detail)

    def retry_in(self) -> float | None:
        """Seconds until the circuit lets a probe through (0 when one may go now); None while closed."""
        return None if self._retry_at is None else max(0.0, self._retry_at - self._clock())

    def summary(self) -> str:
        """One line for the admin: the state, since when, why, and when a list asks it again."""
        if self.state == "unknown":
            return "not asked yet"
        line = f"{self.state} since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.since))}"
        line += f": {self.detail}" if self.detail else ""
        retry_in = self.retry_in()
        return line if retry_in is None else f"{line}; asked again in {retry_in:.0f} s"

    def as_dict(self) -> dict[str, Any]:
        """Everything known, for the admin: state, detail, since (epoch seconds), retry_in (seconds or None)."""
        return {"state": self.state, "detail": self.detail, "since": self.since, "retry_in": self.retry_in()}

    def _errors_detail(self) -> str | None:
        return "; ".join(f"{method}: {detail}" for method, detail in sorted(self.errors.items())) or None

    def _set(self, state: State, detail: str | None) -> None:
        if state != self.state:
            self.since = time.time()
        self.state, self.detail = state, detail


async def tolerated_list(health: Health, server: str, method: str, fetch: Callable[[], Awaitable[list[T]]]) -> list[T]:
    """`fetch()` (one remote's whole listing) for a hub: within `REMOTE_LIST_TIMEOUT`, never an error.

    Nothing, without asking, while the remote's circuit is open; nothing (logged, recorded in
    `health`) when it times out, cannot be reached, answers with an error, or with anything that
    breaks the listing: the hub's other sources answer all the same.
    """
    if not health.admits():
        return []
    budget = float(client_settings.REMOTE_LIST_TIMEOUT)
    try:
        async with asyncio.timeout(budget) as deadline:
            items = await fetch()
    except TimeoutError:
        if not deadline.expired():
            raise
        detail = f"no complete {method} within {budget:g}s (REMOTE_LIST_TIMEOUT)"
        health.failed(detail)
        logger.warning("Remote server %r left out of %s: %s", server, method, detail)
        return []
    except BackendUnavailable as error:
        if opens_circuit(error.reason):
            health.failed(error.message)
        logger.warning("Remote server %r left out of %s: %s", server, method, error.message)
        return []
    except RemoteError as error:
        health.erred(method, f"error {error.code}: {error.message}")
        logger.warning("Remote server %r left out of %s: it answered error %s", server, method, error.code)
        return []
    except Exception as error:  # a remote's nonsense that got past the listing's checks: never the others' problem
        health.erred(method, f"an answer that broke the listing ({type(error).__name__})")
        logger.exception("Remote server %r left out of %s: its answer broke the listing", server, method)
        return []
    health.answered(method)
    return items


async def tolerated_open(health: Health, server: str, opening: asyncio.Task[bool]) -> bool:
    """Wait up to `REMOTE_LIST_TIMEOUT` for `opening` (a connection's handshake, run on its own); True once open.

    A handshake still going on at the budget's end goes on (a slow-starting stdio server is not
    killed for it): the remote is left out until it is done. `opening` records its outcome in `health`.
    """
    try:
        return await asyncio.wait_for(asyncio.shield(opening), float(client_settings.REMOTE_LIST_TIMEOUT))
    except TimeoutError:
        logger.info("Remote server %r is still opening; left out until it answers", server)
        return False


async def recorded_open(health: Health, server: str, open_: Callable[[], Awaitable[None]]) -> bool:
    """`open_()`, its outcome in `health` (the circuit opens when the remote cannot be reached); True if open."""
    try:
        await open_()
    except (BackendUnavailable, RemoteError) as error:
        health.failed(error.message)
        logger.warning("Remote server %r cannot be reached: %s", server, error.message)
        return False
    health.answered()
    return True
