"""How often one address may register a client (RFC 7591 registration is open to anyone, by design).

Registration needs no credentials: a user's login and consent are what authorize a client. Without a
limit, a script could fill the `Application` table. `RegistrationThrottle` is Django REST framework's
throttle keyed by the caller's address (`REMOTE_ADDR`, or `X-Forwarded-For` as DRF's `NUM_PROXIES`
allows), at the rate `MCP_DJANGO["OAUTH_REGISTRATION_RATE"]` ("30/hour" by default; None: no limit).
Counts live in Django's default cache, so several workers share them when that cache is shared.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rest_framework.throttling import SimpleRateThrottle

from mcp_django.conf import mcp_settings

__all__ = ["RegistrationThrottle", "rate_problem"]


class RegistrationThrottle(SimpleRateThrottle):
    """DRF's rate throttle for `/oauth/register/`, one count per calling address."""

    scope = "mcp_oauth_registration"

    def get_rate(self) -> str | None:
        rate = mcp_settings.OAUTH_REGISTRATION_RATE
        return None if rate is None else str(rate)

    def get_cache_key(self, request: Any, view: Any) -> str:
        return str(self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)})

    def retry_after(self) -> int:
        """Whole seconds until the next registration from this address is allowed (at least 1)."""
        return max(1, math.ceil(self.wait() or 1))


RATE = re.compile(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


def rate_problem(rate: Any) -> str | None:
    """Why `rate` is no `OAUTH_REGISTRATION_RATE` ("<count>/<second|minute|hour|day>" or None), else None."""
    if rate is None or (isinstance(rate, str) and RATE.fullmatch(rate)):
        return None
    return f"OAUTH_REGISTRATION_RATE {rate!r} is not a rate like '30/hour' or None."
