"""Public keys given as a JWKS by value or by URL: a machine client's, a trusted identity provider's.

A JWKS URL is fetched by `MCPMetadataFetcher.fetch_document` (the configured `CIMD_METADATA_FETCHER` when
it is one; https only, public addresses only, no
redirects, a size cap and a deadline, as client ID metadata documents) and kept in Django's cache for
as long as its `Cache-Control: max-age` says, never longer than `OAUTH_JWKS_MAX_AGE` seconds (the
toolkit's `CIMD_METADATA_MIN_AGE_SECONDS` is the floor it applies to every document). The cache
backend bounds how many sets are kept; the fetcher bounds each one's size. A token whose `kid` is in
none of the cached keys makes one fresh fetch (the signer may have rotated its keys), not one per
attempt: the set fetched so is cached like any other, and for `REFETCH_PAUSE` seconds after it an
unknown `kid` makes no other fetch of that URL (tokens with made-up `kid`s cannot make this server fetch
as often as they are sent).
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import jwt
from django.core.cache import cache
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from mcp_django.oauth.cimd import MCPMetadataFetcher
from mcp_django.oauth.conf import oauth_settings

REFETCH_PAUSE: Final = 30
"""Seconds after a fetch for an unknown `kid` during which another unknown `kid` fetches nothing."""


class KeysUnavailable(ValueError):
    """A JWKS that could not be fetched or read; the message says why (for the log)."""


def _cache_key(url: str, what: str = "jwks") -> str:
    return f"mcp_django.oauth.{what}:" + hashlib.sha256(url.encode()).hexdigest()


def key_set(jwks: Any) -> list[jwt.PyJWK]:
    """The keys of the JWKS `jwks` (a dict).

    Raises:
        KeysUnavailable: not a usable JWKS.
    """
    try:
        return list(jwt.PyJWKSet.from_dict(jwks).keys)
    except (jwt.PyJWTError, TypeError, AttributeError, KeyError, ValueError) as error:
        raise KeysUnavailable(f"Not a usable JWKS: {error}") from None


def _fetcher() -> MCPMetadataFetcher:
    """The configured `CIMD_METADATA_FETCHER` when it is an `MCPMetadataFetcher` (it keeps the limits), else one."""
    configured = oauth2_settings.CIMD_METADATA_FETCHER
    if isinstance(configured, type) and issubclass(configured, MCPMetadataFetcher):
        return configured()
    return MCPMetadataFetcher()


def _fetched(url: str) -> Any:
    try:
        jwks, max_age = _fetcher().fetch_document(url)
    except cimd.CIMDError as error:
        raise KeysUnavailable(f"JWKS not fetched: {error}") from None
    key_set(jwks)  # an unusable set is not cached
    cache.set(_cache_key(url), jwks, timeout=max(1, min(int(max_age), int(oauth_settings.OAUTH_JWKS_MAX_AGE))))
    return jwks


def signing_keys(jwks: Any, jwks_uri: str, kid: Any) -> list[jwt.PyJWK]:
    """The keys that may have signed a token with header `kid`: from `jwks`, or the set at `jwks_uri`.

    A `kid` of None matches every key. A set from a URL comes from the cache while it is fresh; when no
    cached key has the `kid`, the set is fetched once more.

    Raises:
        KeysUnavailable: the set could not be fetched or is not a usable JWKS.
    """
    if not jwks_uri:
        return _matching(key_set(jwks), kid)
    cached = cache.get(_cache_key(jwks_uri))
    if cached is not None:
        keys = _matching(key_set(cached), kid)
        if keys or not cache.add(_cache_key(jwks_uri, "jwks-refetched"), True, timeout=REFETCH_PAUSE):
            return keys
    return _matching(key_set(_fetched(jwks_uri)), kid)


def _matching(keys: list[jwt.PyJWK], kid: Any) -> list[jwt.PyJWK]:
    return [key for key in keys if kid is None or key.key_id == kid]


def decode_with(token: str, keys: list[jwt.PyJWK], algorithm: str, **checks: Any) -> dict[str, Any]:
    """The claims of `token`, verified by the first of `keys` whose signature it carries, with PyJWT's `checks`
    (`audience`, `issuer`, `leeway`, `options`).

    Raises:
        jwt.InvalidSignatureError: no key of `keys` signed it.
        jwt.PyJWTError: a key signed it, and a claim does not hold.
    """
    for key in keys:
        try:
            claims: dict[str, Any] = jwt.decode(token, key=key.key, algorithms=[algorithm], **checks)
        except (jwt.InvalidSignatureError, jwt.InvalidKeyError, jwt.InvalidAlgorithmError):
            continue  # another of the keys may have signed it
        return claims
    raise jwt.InvalidSignatureError("not signed by any of the keys")
