"""Webhook callbacks: which URLs may be called, how a POST is signed, and the POST itself.

A callback must be an https URL whose host resolves only to public addresses, and the connection goes to
the address that was checked (`mcp_django.client.auth.http.public_addresses`, the rule the site's OAuth
client follows), so a name cannot be pointed at an internal service between the check and the POST.
Hosts named in `EVENTS_WEBHOOK_ALLOWED_HOSTS` may use plain http and any address (a receiver on this
machine in development). Redirects are not followed, proxies from the environment not used.

Every POST is signed the Standard Webhooks way: `webhook-id`, `webhook-timestamp` (Unix seconds) and
`webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the base64-decoded
part of the client's `whsec_` secret; during a rotation one signature per secret, space-separated.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx2

from mcp_django.client.auth.http import NonPublicAddress, public_addresses
from mcp_django.events import wire
from mcp_django.events.conf import events_settings
from mcp_django.events.signatures import sign
from mcp_django.protocol import InvalidParams


def check_secret(secret: object) -> str:
    """The client's signing secret: `whsec_` and the base64 of 24 to 64 bytes.

    Raises:
        InvalidParams: it is not one.
    """
    low, high = wire.SECRET_BYTES
    if isinstance(secret, str) and secret.startswith(wire.SECRET_PREFIX):
        try:
            key = base64.b64decode(secret.removeprefix(wire.SECRET_PREFIX), validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if low <= len(key) <= high:
            return secret
    raise InvalidParams(
        f"Invalid params: delivery.secret must be {wire.SECRET_PREFIX} and the base64 of {low} to {high} bytes"
    )


def check_callback(url: object) -> tuple[str, str]:
    """`(url, address)`: the callback URL and the address to connect to (runs a DNS lookup).

    Raises:
        InvalidParams: not an https URL of a public host (nor an allowed development host).
    """
    parts = urlsplit(url) if isinstance(url, str) else None
    host = (parts.hostname or "").lower() if parts is not None else ""
    allowed = host in {name.lower() for name in events_settings.EVENTS_WEBHOOK_ALLOWED_HOSTS}
    if parts is None or not host or parts.scheme not in (("https", "http") if allowed else ("https",)):
        raise InvalidParams("Invalid params: delivery.url must be an https URL", data={"reason": "scheme"})
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = public_addresses(host, port, private=allowed)
    except (NonPublicAddress, ValueError) as error:
        raise InvalidParams(f"Invalid params: delivery.url: {error}", data={"reason": "address"}) from None
    return str(url), addresses[0]


@dataclasses.dataclass(frozen=True)
class Answer:
    """What a callback answered: its status (None: no answer) and, for a 2xx, its body (at most 64 KiB)."""

    status: int | None
    body: bytes = b""
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(url: str, secrets: Sequence[str], message_id: str, body: bytes, subscription_id: str) -> Answer:
    """POST `body` to the callback, signed; never raises for what the callback does."""
    try:
        url, address = check_callback(url)  # again at each POST: the name may resolve elsewhere by now
    except InvalidParams as refused:
        return Answer(None, error=refused.message[:200])
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        wire.WEBHOOK_ID_HEADER: message_id,
        wire.WEBHOOK_TIMESTAMP_HEADER: str(timestamp),
        wire.WEBHOOK_SIGNATURE_HEADER: sign(secrets, message_id, timestamp, body),
        wire.SUBSCRIPTION_ID_HEADER: subscription_id,
        "Accept-Encoding": "identity",
    }
    request = httpx2.Request("POST", url, headers=headers, content=body)
    host = request.url.host
    request.url = request.url.copy_with(host=address)  # the checked address: no second lookup
    request.headers["Host"] = host if request.url.port is None else f"{host}:{request.url.port}"
    request.extensions = {**request.extensions, "sni_hostname": host}
    seconds = float(events_settings.EVENTS_WEBHOOK_TIMEOUT)
    try:
        with httpx2.Client(timeout=seconds, follow_redirects=False, trust_env=False) as client:
            response = client.send(request, stream=True)
            try:
                content = b""
                if 200 <= response.status_code < 300:
                    for part in response.iter_raw():
                        content += part
                        if len(content) > 64 * 1024:
                            break
                return Answer(response.status_code, content)
            finally:
                response.close()
    except httpx2.HTTPError as error:
        return Answer(None, error=f"{type(error).__name__}: {error}"[:200])
