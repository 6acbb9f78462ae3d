"""Standard Webhooks signatures, both ends: the server signs each POST, a receiver verifies it.

`webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed by the
base64-decoded part of a `whsec_` secret; during a rotation one `v1,…` per secret, space-separated. A
receiver accepts a message that one of its secrets signed, within `tolerance` seconds of its clock. The
header names and the prefix are `wire`'s.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as random
import time
from collections.abc import Mapping, Sequence
from typing import Final

from mcp_django.events import wire

__all__ = ["TOLERANCE", "InvalidSignature", "new_secret", "sign", "verify"]

TOLERANCE: Final = 300
"""Seconds a `webhook-timestamp` may be off the receiver's clock (what Standard Webhooks suggests)."""


class InvalidSignature(Exception):
    """A message no secret of the receiver signed, or signed too long ago (or in the future)."""


def new_secret(size: int = 32) -> str:
    """A fresh signing secret for a subscription: `whsec_` and the base64 of `size` random bytes."""
    return wire.SECRET_PREFIX + base64.b64encode(random.token_bytes(size)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(wire.SECRET_PREFIX))


def _signature(key: bytes, message_id: str, timestamp: int | str, body: bytes) -> str:
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def sign(secrets: Sequence[str], message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header: `v1,<signature>` for each secret, space-separated."""
    return " ".join(
        f"{wire.SIGNATURE_VERSION},{_signature(_key(secret), message_id, timestamp, body)}" for secret in secrets
    )


def verify(headers: Mapping[str, str], body: bytes, secrets: Sequence[str], *, tolerance: float = TOLERANCE) -> str:
    """The `webhook-id` of a message one of `secrets` signed within `tolerance` seconds of now.

    Args:
        headers: the request's headers, by lower-case name.
        body: the raw body, exactly as received.
        secrets: the receiver's secrets (more than one while it rotates them).

    Raises:
        InvalidSignature: a header is missing, the timestamp is too far from now, or no signature matches.
    """
    message_id = headers.get(wire.WEBHOOK_ID_HEADER, "")
    stamp = headers.get(wire.WEBHOOK_TIMESTAMP_HEADER, "")
    offered = headers.get(wire.WEBHOOK_SIGNATURE_HEADER, "")
    if not (message_id and stamp.isdigit() and offered):
        raise InvalidSignature("missing webhook headers")
    if abs(time.time() - int(stamp)) > tolerance:
        raise InvalidSignature("the timestamp is too far from now")
    given = [
        signature
        for version, _, signature in (part.partition(",") for part in offered.split(" "))
        if version == wire.SIGNATURE_VERSION
    ]
    for secret in secrets:
        try:
            expected = _signature(_key(secret), message_id, stamp, body)
        except (binascii.Error, ValueError):
            continue
        if any(hmac.compare_digest(expected, signature) for signature in given):
            return message_id
    raise InvalidSignature("no signature matches")
