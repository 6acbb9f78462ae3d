"""The audit spool: where audit rows wait, on local disk, while the database cannot take them.

Each process appends to a file of its own in the spool directory (`audit-<pid>-<random>.jsonl`),
one JSON object a line, and fsyncs before it says a row is stored. It holds an exclusive `flock`
on that file for as long as it owns it, so the files another process left behind (it died, or
was killed) are the ones whose lock can be taken: any process may replay those. A torn last
line (a crash in the middle of a write) is skipped on reading; it was never acknowledged.

Nothing here knows the database: `AuditWriter` (`mcp_django.interceptors.audit`) decides what
goes to the spool and replays it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import secrets
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

logger = logging.getLogger("mcp_django.interceptors")

PREFIX = "audit-"
SUFFIX = ".jsonl"


def dump_row(row: dict[str, Any]) -> bytes:
    """One spool line: the row as compact JSON (datetimes in ISO 8601) and a newline."""
    return (json.dumps(row, default=_iso, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def load_rows(data: bytes) -> list[dict[str, Any]]:
    """The rows of a spool file's content; lines that do not parse (a torn write) are skipped."""
    rows = []
    for line in data.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            if isinstance(row.get("created"), str):
                row["created"] = datetime.fromisoformat(row["created"])
            rows.append(row)
    return rows


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class Spool:
    """This process's spool file in `directory`, created on the first append.

    Args:
        directory: where spool files live; created when missing.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd: int | None = None
        self._path: Path | None = None
        self.size = 0

    @property
    def path(self) -> Path | None:
        """This process's file, once something was appended."""
        return self._path

    def append(self, lines: Sequence[bytes]) -> None:
        """Append `lines` and fsync them: when this returns, they survive a crash of the process.

        Raises:
            OSError: the directory or the disk refused (full, read-only, no permission).
        """
        fd = self._open()
        data = b"".join(lines)
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
        self.size += len(data)

    def read_own(self) -> list[dict[str, Any]]:
        """The rows in this process's file."""
        if self._fd is None:
            return []
        return load_rows(os.pread(self._fd, os.fstat(self._fd).st_size, 0))

    def clear_own(self) -> None:
        """Empty this process's file (every row in it is in the database now)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
        self.size = 0

    @contextlib.contextmanager
    def orphans(self) -> Iterator[list[tuple[Path, list[dict[str, Any]]]]]:
        """The files of processes that no longer hold them, with their rows, locked while the block runs.

        Leave the block normally once their rows are in the database: the files are removed. An
        exception leaves them where they are, for the next attempt.
        """
        claimed: list[tuple[Path, int, list[dict[str, Any]]]] = []
        try:
            for path in self._foreign_files():
                fd = _claim(path)
                if fd is not None:
                    claimed.append((path, fd, load_rows(os.pread(fd, os.fstat(fd).st_size, 0))))
            yield [(path, rows) for path, _, rows in claimed]
            for path, _, _ in claimed:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        finally:
            for _, fd, _ in claimed:
                os.close(fd)  # closing releases the lock

    def has_orphans(self) -> bool:
        """True when the directory holds another process's non-empty file (alive or not)."""
        for path in self._foreign_files():
            with contextlib.suppress(FileNotFoundError):  # replayed and removed meanwhile
                if path.stat().st_size > 0:
                    return True
        return False

    def close(self) -> None:
        """Let go of this process's file (and its lock): another process may now replay what is in it."""
        if self._fd is not None:
            path, self._path = self._path, None
            if self.size == 0 and path is not None:
                with contextlib.suppress(OSError):
                    path.unlink()
            os.close(self._fd)
            self._fd = None

    def _open(self) -> int:
        if self._fd is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new, unique name: nobody else holds it
            self._fd, self._path, self.size = fd, path, 0
        return self._fd

    def _foreign_files(self) -> list[Path]:
        try:
            paths = sorted(self.directory.glob(f"{PREFIX}*{SUFFIX}"))
        except OSError:
            return []
        return [path for path in paths if path != self._path]


def _claim(path: Path) -> int | None:
    """An open, exclusively locked descriptor of `path`, or None when its owner still holds it (or it is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
            return None
        raise
    if not path.exists():  # replayed and removed by another process between our open and our lock
        os.close(fd)
        return None
    return fd
