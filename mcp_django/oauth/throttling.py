"""How often one address may register a client, and fail to log in (the OAuth server's open doors).

Registration needs no credentials: a user's login and consent are what authorize a client. Without a
limit, a script could fill the `Application` table. `RegistrationThrottle` is Django REST framework's
throttle keyed by the caller's address, at the rate `MCP_DJANGO["OAUTH_REGISTRATION_RATE"]`
("30/hour" by default; None: no limit). `LoginThrottle` counts the failed logins of the OAuth login
page per address, at `MCP_DJANGO["OAUTH_LOGIN_RATE"]` ("5/minute"): past it the page refuses every
attempt, the right password too, until the oldest failure leaves the window. `TokenThrottle` counts
token requests at `MCP_DJANGO["OAUTH_TOKEN_RATE"]` ("60/minute"), once per address and once per
client (the `client_id` of the Basic header, the body or a client assertion's `iss`, unverified:
a client's count is only a bound, never a credential); past it, nothing more is counted or stored.

The address is `REMOTE_ADDR`. `X-Forwarded-For` is read only when DRF's `NUM_PROXIES` says how many
proxies stand in front (the client's own entry in that header is whatever it wants: read without
`NUM_PROXIES`, it would let one client pass as many, or lock another address out). Counts live in
Django's default cache, so several workers share them when that cache is shared.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import re
from typing import Any
from urllib.parse import unquote_plus

import jwt
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from mcp_django.oauth.conf import oauth_settings


class AddressThrottle(SimpleRateThrottle):
    """DRF's rate throttle, one count per calling address; `X-Forwarded-For` only as `NUM_PROXIES` allows."""

    setting = ""
    """The `MCP_DJANGO` key holding the rate."""

    def get_rate(self) -> str | None:
        rate = getattr(oauth_settings, self.setting)
        return None if rate is None else str(rate)

    def get_ident(self, request: Any) -> str:
        if api_settings.NUM_PROXIES is None:
            return str(request.META.get("REMOTE_ADDR") or "")
        return str(super().get_ident(request))

    def get_cache_key(self, request: Any, view: Any) -> str:
        return str(self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)})

    def within_rate(self, request: Any) -> bool:
        """Whether one more request is within the rate; counts nothing (`throttle_success` counts it)."""
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, None)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        return bool(len(self.history) < self.num_requests)

    def retry_after(self) -> int:
        """Whole seconds until the next request from this address is allowed (at least 1)."""
        return max(1, math.ceil(self.wait() or 1))


class RegistrationThrottle(AddressThrottle):
    """The throttle of `/oauth/register/`: every registration counts."""

    scope = "mcp_oauth_registration"
    setting = "OAUTH_REGISTRATION_RATE"


class LoginThrottle(AddressThrottle):
    """The throttle of `/oauth/login/`: only failed logins count, and past the rate no attempt is tried."""

    scope = "mcp_oauth_login"
    setting = "OAUTH_LOGIN_RATE"

    def blocked(self, request: Any) -> bool:
        """Whether this address has failed as often as the rate allows, within its window."""
        return not self.within_rate(request)

    def failed(self, request: Any) -> None:
        """Count one failed login of this address."""
        if self.rate is not None:
            self.blocked(request)
            self.throttle_success()


class TokenThrottle(AddressThrottle):
    """The throttle of `/oauth/token/`: every request counts, once for its address, once for its client."""

    scope = "mcp_oauth_token"
    setting = "OAUTH_TOKEN_RATE"

    def __init__(self, client_id: str | None = None) -> None:
        super().__init__()
        self.client_id = client_id
        """Count this client's requests instead of the address's (None: the address)."""

    def within_rate(self, request: Any) -> bool:
        if self.client_id == "":
            return True  # a request naming no client is counted by its address alone
        return super().within_rate(request)

    def count(self) -> None:
        """Count the request `within_rate` looked at."""
        if self.rate is not None and self.client_id != "":
            self.throttle_success()

    def get_ident(self, request: Any) -> str:
        if self.client_id is None:
            return super().get_ident(request)
        return "client:" + hashlib.sha256(self.client_id.encode("utf-8", "surrogateescape")).hexdigest()


def token_client_id(request: Any) -> str:
    """The client a token request says it comes from (unverified); "" when it names none."""
    kind, _, credentials = str(request.META.get("HTTP_AUTHORIZATION", "")).partition(" ")
    if kind == "Basic":
        try:
            decoded = base64.b64decode(credentials, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return ""
        return unquote_plus(decoded.partition(":")[0])
    client_id = request.POST.get("client_id")
    if client_id:
        return str(client_id)
    assertion = request.POST.get("client_assertion")
    if assertion:
        try:
            issuer = jwt.decode(assertion, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError:
            return ""
        return issuer if isinstance(issuer, str) else ""
    return ""


RATE = re.compile(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


def rate_problem(name: str, rate: Any) -> str | None:
    """Why `rate` is no rate for the setting `name` ("<count>/<second|minute|hour|day>" or None), else None."""
    if rate is None or (isinstance(rate, str) and RATE.fullmatch(rate)):
        return None
    return f"{name} {rate!r} is not a rate like '30/hour' or None."
