"""What a client of this authorization server may be: a public MCP client, however it registers.

One rule for RFC 7591 registration (`/oauth/register/`), its RFC 7592 updates (`PUT` on the
registration URI) and client ID metadata documents (`mcp_django.oauth.cimd`): no secret
(`token_endpoint_auth_method: none`, assumed when omitted), the authorization code grant (and refresh
tokens), the `code` response type, and at most `MAX_REDIRECT_URIS` redirect URIs, each on `https` or
a loopback address (`http://127.0.0.1:<port>/...`, `[::1]`, `localhost`), as MCP clients need.

`application_type` (SEP-837, from OpenID Connect registration) ties the redirect URIs to the kind
of client: a `web` client's are all https on a host that is not a loopback address; a `native`
client's may be loopback (RFC 8252 §7.3) or https (claimed https URIs, §7.2). A client that omits
it (clients before SEP-837) is taken as `native` when one of its redirect URIs is a loopback one,
else as `web`: the URIs it sends decide, so no client registering today is refused for the omission.
Imports nothing of Django.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any, Final
from urllib.parse import urlsplit

LOOPBACK_NAMES: Final = frozenset({"localhost"})
GRANT_TYPES: Final = frozenset({"authorization_code", "refresh_token"})
MAX_REDIRECT_URIS: Final = 10
"""Redirect URIs one client may register (an MCP client has one or two: its local listener, its web callback)."""
MAX_REDIRECT_URI_LENGTH: Final = 2000
"""The longest redirect URI accepted, in characters."""


APPLICATION_TYPES: Final = ("native", "web")
"""The values of `application_type` (SEP-837)."""


class MetadataProblem(ValueError):
    """Client metadata this server does not accept; the message is the `error_description`."""


def redirect_uri_allowed(uri: Any, application_type: str = "native") -> bool:
    """True for an `https` URI, or (a native client's local listener) an `http` one on a loopback address;
    for a `web` client, an `https` URI on a host that is not a loopback address."""
    if not isinstance(uri, str) or len(uri) > MAX_REDIRECT_URI_LENGTH:
        return False
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  # a port out of range raises here
    except ValueError:
        return False
    if not parts.hostname or parts.fragment or parts.username is not None:
        return False
    if application_type == "web":
        return parts.scheme == "https" and not _loopback(parts.hostname)
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and _loopback(parts.hostname)


def _loopback(hostname: str) -> bool:
    if hostname in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def _inferred_application_type(redirect_uris: list[Any]) -> str:
    for uri in redirect_uris:
        try:
            hostname = urlsplit(uri).hostname if isinstance(uri, str) else None
        except ValueError:
            continue
        if hostname and _loopback(hostname):
            return "native"
    return "web"


def client_metadata(body: bytes) -> dict[str, Any]:
    """Parse a registration body and check it (`metadata_problem`); the metadata with its defaults filled in.

    Raises:
        MetadataProblem: not a JSON object (too deeply nested counts), or metadata this server refuses.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise MetadataProblem("Request body must be valid JSON") from None
    if not isinstance(data, dict):
        raise MetadataProblem("Request body must be a JSON object")
    problem = metadata_problem(data)
    if problem is not None:
        raise MetadataProblem(problem)
    return data


def metadata_problem(data: dict[str, Any]) -> str | None:
    """Why `data` is no public MCP client's metadata, else None; fills in the defaults it assumes."""
    method = data.setdefault("token_endpoint_auth_method", "none")
    if method != "none":
        return "Only public clients register here: token_endpoint_auth_method must be none"
    if "client_secret" in data:
        return "A public client has no client_secret"
    grant_types = data.setdefault("grant_types", ["authorization_code", "refresh_token"])
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
        return "grant_types must include authorization_code"
    if not set(map(str, grant_types)) <= GRANT_TYPES:
        return "Only the authorization_code and refresh_token grants are supported"
    response_types = data.get("response_types", ["code"])
    if not isinstance(response_types, list) or not set(map(str, response_types)) <= {"code"}:
        return "Only the code response type is supported"
    redirect_uris = data.get("redirect_uris")
    if not isinstance(redirect_uris, list) or not redirect_uris:
        return "redirect_uris must be a non-empty array"
    if len(redirect_uris) > MAX_REDIRECT_URIS:
        return f"At most {MAX_REDIRECT_URIS} redirect URIs"
    if any(isinstance(uri, str) and len(uri) > MAX_REDIRECT_URI_LENGTH for uri in redirect_uris):
        return f"A redirect URI is longer than {MAX_REDIRECT_URI_LENGTH} characters"
    declared = "application_type" in data
    application_type = data.setdefault("application_type", _inferred_application_type(redirect_uris))
    if application_type not in APPLICATION_TYPES:
        return "application_type must be native or web"
    refused = [uri for uri in redirect_uris if not redirect_uri_allowed(uri, application_type)]
    if refused and declared and application_type == "web":
        return f"A web client's redirect URIs must use https, not a loopback address: {refused[0]!r}"
    if refused:
        return f"Redirect URIs must use https or a loopback address: {refused[0]!r}"
    return None
