"""Asking the client for input while a request runs: elicitation, sampling and roots.

The same user code works in both eras. It asks through its context
(`await ctx.request_input({...})`, or the `elicit`/`sample`/`list_roots` shortcuts) and
the core chooses how:

- handshake era: the question goes out as a JSON-RPC request on the request's own stream
  and the client's answer, which arrives as a separate message, is routed back to the
  waiting coroutine (`PendingRequests`);
- stateless 2026-07-28 era: there is no stream to push a request on, so the core answers
  the call with an `input_required` result. The client retries with `inputResponses` and
  the `requestState` the core minted; the function runs again from the start and this
  time its questions find their answers. Functions must therefore ask the same questions
  in the same order, under the same keys, on every run (deterministic up to their asks).

`requestState` is encrypted with authenticated encryption (AES-256-GCM): the client can
neither read the answers and `ctx.state` it carries nor change them. It is bound to the
principal, the method, the tool/prompt/resource and its arguments, and expires.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import secrets
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol

from mcp_django.protocol.jsonrpc import InvalidParams, Message

CAPABILITY_OF: Final[Mapping[str, str]] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""The client capability each kind of input request needs."""

INPUT_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get"})
"""The only methods that may answer `input_required` (2026-07-28)."""


class InputRequired(BaseException):
    """Raised inside user code in the stateless era when a question has no answer yet.

    A `BaseException`, like `asyncio.CancelledError`, so that the `except Exception`
    blocks of user code and of the tool wrappers let it through to the core, which turns
    it into an `input_required` result.
    """

    def __init__(self, requests: Mapping[str, Message]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = dict(requests)


class ClientRequestError(Exception):
    """The client answered a server-to-client request with an error, or not in time.

    Args:
        code: the JSON-RPC error code the client sent (0 for a timeout).
        message: what went wrong.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


class ResponseRelay(Protocol):
    """Carries clients' responses between worker processes.

    A client may post its answer to a server-to-client request to any worker. The worker
    whose request waits `watch`es the request's id; a worker that receives an answer it is
    not waiting for `forward`s it. (`mcp_django.runtime.relay.ChannelLayerRelay` does this over the
    Channels layer.)
    """

    async def watch(self, request_id: str, deliver: Callable[[Message, str | None], object]) -> None:
        """Start handing answers to `request_id` that reach other workers to `deliver(message, owner)`."""

    async def unwatch(self, request_id: str) -> None:
        """Stop watching `request_id`."""

    async def forward(self, message: Message, owner: str | None) -> None:
        """Send an answer this worker is not waiting for to the worker that is."""


class PendingRequests:
    """Server-to-client requests waiting for their responses.

    Request ids are random UUIDs, so a response is matched by id alone and cannot be
    guessed by another client; the owner key (the session) is checked as well. With a
    `relay`, answers that reach another worker process find their way here too.
    """

    def __init__(self, relay: ResponseRelay | None = None) -> None:
        self._waiting: dict[str, tuple[str | None, asyncio.Future[Message]]] = {}
        self.relay = relay

    def open(self, owner: str | None) -> tuple[str, asyncio.Future[Message]]:
        """Register a new request for `owner`; return its id and the future its response resolves."""
        request_id = f"mcpdj-{uuid.uuid4().hex}"
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = (owner, future)
        return request_id, future

    def close(self, request_id: str) -> None:
        """Forget a request (answered, timed out or cancelled)."""
        self._waiting.pop(request_id, None)

    async def watch(self, request_id: str) -> None:
        """Let answers to `request_id` that reach other workers come here (no-op without a relay)."""
        if self.relay is not None:
            await self.relay.watch(request_id, self.deliver)

    async def unwatch(self, request_id: str) -> None:
        """Stop watching `request_id` across workers."""
        if self.relay is not None:
            await self.relay.unwatch(request_id)

    async def route(self, message: Message, owner: str | None) -> None:
        """Deliver a client's response here, or forward it to the worker whose request waits for it."""
        if not self.deliver(message, owner) and self.relay is not None and isinstance(message.get("id"), str):
            await self.relay.forward(message, owner)

    def deliver(self, message: Message, owner: str | None) -> bool:
        """Hand a client's response to the request waiting for it; False when none is (here)."""
        request_id = message.get("id")
        entry = self._waiting.get(request_id) if isinstance(request_id, str) else None
        if entry is None or entry[0] != owner or entry[1].done():
            return False
        entry[1].set_result(message)
        return True


class RequestStateCodec:
    """Mints and opens the opaque `requestState` of `input_required` results.

    A state is `nonce || AES-256-GCM(body)`, base64url-encoded: the body (binding, expiry,
    payload) is unreadable without the key and any change to it is detected.

    Args:
        key: the 32-byte key states are minted with (the Django side derives it from
            `SECRET_KEY`); None picks a random per-process key, which only works while every
            retry reaches this process.
        ttl_seconds: how long a minted state stays valid.
        fallback_keys: older keys that still open states (the Django side derives them from
            `SECRET_KEY_FALLBACKS`), so rotating the secret does not break retries in flight.
    """

    def __init__(
        self, key: bytes | None = None, *, ttl_seconds: int = 600, fallback_keys: Sequence[bytes] = ()
    ) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # not before a codec is made

        self._ciphers = [AESGCM(_key_of(k)) for k in (key or secrets.token_bytes(32), *fallback_keys)]
        self.ttl_seconds = ttl_seconds

    def mint(self, binding: str, payload: Mapping[str, Any]) -> str:
        """Return an encrypted state carrying `payload`, bound to `binding` (see `binding_of`)."""
        body = json.dumps(
            {"b": binding, "x": int(time.time()) + self.ttl_seconds, "p": payload},
            separators=(",", ":"),
            sort_keys=True,
        ).encode()
        nonce = secrets.token_bytes(_NONCE_BYTES)
        return _b64(nonce + self._ciphers[0].encrypt(nonce, body, _STATE_AAD))

    def open(self, state: Any, binding: str) -> dict[str, Any]:
        """Decrypt a state the client echoed and return its payload.

        Raises:
            InvalidParams: the state is malformed, tampered with, minted with another key,
                expired, or minted for another principal, method, target or arguments.
        """
        if not isinstance(state, str) or len(state) > _MAX_STATE_CHARS:
            raise InvalidParams("Invalid requestState")
        try:
            sealed = _unb64(state)
        except (binascii.Error, ValueError):
            raise InvalidParams("Invalid requestState") from None
        from cryptography.exceptions import InvalidTag

        nonce, ciphertext = sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:]
        body = None
        if len(nonce) == _NONCE_BYTES and ciphertext:
            for cipher in self._ciphers:
                try:
                    body = cipher.decrypt(nonce, ciphertext, _STATE_AAD)
                    break
                except InvalidTag:
                    continue
        if body is None:
            raise InvalidParams("Invalid requestState")
        content = json.loads(body)
        if content["b"] != binding:
            raise InvalidParams("Invalid requestState: it was issued for another request")
        if content["x"] < time.time():
            raise InvalidParams("Invalid requestState: it has expired")
        payload: dict[str, Any] = content["p"]
        return payload


_NONCE_BYTES: Final = 12
_STATE_AAD: Final = b"mcp_django.requestState.v1"
"""Authenticated with every state, so a ciphertext made with the same key for another purpose never opens as one."""
_MAX_STATE_CHARS: Final = 4 * 1024 * 1024


def _key_of(key: bytes) -> bytes:
    """A 32-byte AES key: `key` itself when it has that length, else its SHA-256."""
    return key if len(key) == 32 else hashlib.sha256(key).digest()


def binding_of(principal_id: str | None, method: str, params: Mapping[str, Any]) -> str:
    """What a `requestState` is bound to: the principal, the method, its target and its arguments."""
    target = params.get("name", params.get("uri"))
    arguments = json.dumps(params.get("arguments") or {}, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(f"{principal_id}\0{method}\0{target}\0{arguments}".encode()).hexdigest()
    return digest


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def error_of(error: Any) -> ClientRequestError:
    """The exception for a client's error object, tolerating malformed ones."""
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        return ClientRequestError(code if isinstance(code, int) else 0, message if isinstance(message, str) else "")
    return ClientRequestError(0, "The client sent a malformed error")
