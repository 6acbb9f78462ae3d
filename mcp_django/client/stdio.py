"""The stdio side of a remote MCP connection: a subprocess speaking newline-delimited JSON-RPC.

One process serves every caller: requests are matched to answers by id, the server's notifications
go to the request they name (progress by its token; a log message to the only request in flight, if
only one is) or to the listeners, and its questions (on a task each) to the only request in flight
that may ask. When the process exits,
every pending request fails with `BackendUnavailable` and the next request starts a new process.
Its stderr is passed through to ours (logs), never read as protocol. It starts with a few variables of
our environment (`default_environment`, as the official SDKs do) and its entry's `ENV`, never Django's
whole environment. A line past `REMOTE_MAX_MESSAGE_BYTES` is dropped as it grows (`client.limits`), and
every pending request fails with `reason = "limit"`: the answer it may have been is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.client.conf import client_settings
from mcp_django.client.limits import LIMIT
from mcp_django.client.remote import RemoteConnection
from mcp_django.client.streams import NotificationListener
from mcp_django.protocol.jsonrpc import Message, ParseError, dump_json, notification, parse_json, request_id_of
from mcp_django.protocol.versions import Era

_EXIT_GRACE: Final = 2.0
INHERITED_ENVIRONMENT: Final = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if os.name == "nt"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)
"""The variables of Django's environment a stdio server inherits: what the official SDKs pass (no secrets)."""


def default_environment() -> dict[str, str]:
    """The environment a stdio server starts with before its entry's `ENV`: `INHERITED_ENVIRONMENT`'s variables.

    Django's own environment (`SECRET_KEY`, a database URL, `DJANGO_SETTINGS_MODULE`) stays out: a
    server that needs more names it in `ENV`. A value that starts with `()` (a shell function) is left out.
    """
    return {
        key: value
        for key in INHERITED_ENVIRONMENT
        if (value := os.environ.get(key)) is not None and not value.startswith("()")
    }


class StdioConnection(RemoteConnection):
    """A remote MCP server run as a subprocess (`"BACKEND": "mcp_django.client.stdio.StdioConnection"`, the
    kind of an entry with a `COMMAND`): `COMMAND` the argument list, `ENV` added to its environment, `CWD`."""

    transport = "stdio"
    config_keys = frozenset({"COMMAND", "ENV", "CWD"})

    @classmethod
    def config_problems(cls, config: Mapping[str, Any]) -> list[str]:
        problems = []
        command = config.get("COMMAND")
        if not (isinstance(command, (list, tuple)) and command and all(isinstance(part, str) for part in command)):
            problems.append("COMMAND must be a non-empty list of strings")
        env = config.get("ENV", {})
        if not (isinstance(env, Mapping) and all(isinstance(value, str) for value in env.values())):
            problems.append("ENV must be a dict of strings")
        return problems

    @classmethod
    def configure(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        env = config.get("ENV") or {}
        return {"command": tuple(config["COMMAND"]), "env": tuple(sorted(env.items())), "cwd": config.get("CWD")}

    @classmethod
    def location(cls, config: Mapping[str, Any]) -> str:
        return " ".join(config["COMMAND"])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[Any, asyncio.Future[Message]] = {}
        self._progress: dict[Any, NotificationListener] = {}
        self._write_lock = asyncio.Lock()

    async def _start(self) -> None:
        if self._reader is not None and not self._reader.done():
            return  # the process is still talking to us
        await self._stop()
        env = {**default_environment(), **dict(self.server.env)}
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.server.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.server.cwd,
                limit=client_settings.REMOTE_MAX_MESSAGE_BYTES,
            )
        except OSError as error:
            raise self.unavailable("unreachable", f"cannot start the command: {error}") from None
        self._reader = asyncio.get_running_loop().create_task(self._read(self._process))

    async def _stop(self) -> None:
        process, reader = self._process, self._reader
        self._process, self._reader = None, None
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), _EXIT_GRACE)
            except TimeoutError:
                process.kill()
                await process.wait()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        self._fail_pending("the process was stopped")

    def _fail_pending(self, detail: str, reason: str = "closed") -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self.unavailable(reason, detail))
        self._pending.clear()

    async def _write(self, message: Message) -> None:
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            raise self.unavailable("closed", "the process is not running")
        async with self._write_lock:
            try:
                process.stdin.write(dump_json(message) + b"\n")
                await process.stdin.drain()
            except (ConnectionError, RuntimeError) as error:
                raise self.unavailable("closed", f"cannot write to the process: {error}") from None

    async def _round_trip(self, request: Message, on_notification: NotificationListener | None) -> Message:
        request_id = request["id"]
        params = request["params"]
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        token = (params.get("_meta") or {}).get("progressToken")
        if on_notification is not None and token is not None:
            self._progress[token] = on_notification
        try:
            await self._write(request)
            answer = await future
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self._write(notification("notifications/cancelled", {"requestId": request_id}))
            raise
        finally:
            self._pending.pop(request_id, None)
            if token is not None:
                self._progress.pop(token, None)
        return answer

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        await self._write(notification(method, params))

    async def _listen(self) -> bool:
        if self.era is Era.STATELESS:
            params = self.listen_params()
            if not params["notifications"]:
                return False
            # The answer only comes when the server ends the subscription; notifications arrive meanwhile.
            await self._exchange("subscriptions/listen", params, None)
            return True
        return False  # handshake era: the server writes its notifications to stdout anyway

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        try:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:  # a line over the limit, dropped: it may have been any pending answer
                    limit = client_settings.REMOTE_MAX_MESSAGE_BYTES
                    detail = f"a message over {limit} bytes (REMOTE_MAX_MESSAGE_BYTES)"
                    self._fail_pending(detail, LIMIT)
                    continue
                if not line:
                    break
                await self._received(line)
        finally:
            if self._process is process:
                self._opened = False
            code = process.returncode
            self._fail_pending("the process exited" + ("" if code is None else f" with code {code}"))

    async def _received(self, line: bytes) -> None:
        try:
            message = parse_json(line.strip())
        except ParseError:
            return  # not protocol (a stray print); the server's problem, not the callers'
        if not isinstance(message, dict):
            return
        if "method" not in message:
            future = self._pending.get(request_id_of(message))
            if future is not None and not future.done():
                future.set_result(message)
            return
        if request_id_of(message) is not None:  # a question, maybe for a caller who takes a while
            self.answer_soon(message, self._listener_of(message), self._write)
            return
        await self.dispatch(message, self._listener_of(message))

    def _listener_of(self, message: Message) -> NotificationListener | None:
        """The request a message is about: progress names its token; a log message, the only one in flight.

        stdio has no per-request stream, so a log message names no request: with several in flight
        it could be about any (and reach another caller), so it goes to the listeners instead. A
        question goes to the only request in flight that may ask (`ServerStream.dispatch`).
        """
        params = message.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        if token is not None:
            return self._progress.get(token)
        if message.get("method") == "notifications/message":
            return self.sole_in_flight()
        return None
