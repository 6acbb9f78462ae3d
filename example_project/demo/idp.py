"""The demo's identity provider: a signing key of its own, and the ID-JAGs it signs for the demo users.

Enterprise sign-in (docs/oauth.md) needs an identity provider the site trusts. This one is a key file and
a function, for trying the JWT bearer grant on the demo without an Okta or Entra tenant: nothing here is
an identity provider to deploy.

The key is made on first use (an EC P-256 key, mode 0600) in the file `MCP_EXAMPLE_DEMO_IDP_KEY` names,
by default `demo-idp-key.pem` at the repository's root, which git ignores. It is never committed: a
private key in a public repository lets anyone who clones it sign assertions that a copy of the demo,
served where others reach it, would turn into tokens for its users. The settings trust it only while
`MCP_EXAMPLE_DEMO_IDP_KEY` is set, as `make demo` sets it, so the example project's settings everywhere
else (the in-memory tests included) trust no issuer.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ISSUER: Final = "https://idp.demo.invalid"
"""The demo identity provider's issuer (`iss`): a name only (`.invalid` resolves nowhere); its keys go by value."""
KEY_ID: Final = "demo-idp-1"
KEY_ENV: Final = "MCP_EXAMPLE_DEMO_IDP_KEY"
"""The environment variable that names the key file and, set, makes the settings trust the demo provider."""
DEFAULT_KEY_FILE: Final = Path(__file__).resolve().parents[2] / "demo-idp-key.pem"
LIFETIME: Final = 300
"""How long an ID-JAG it signs lives, in seconds: the trusted issuer's default `MAX_AGE`."""


def key_file() -> Path:
    """Where the demo provider's private key is kept: `MCP_EXAMPLE_DEMO_IDP_KEY`, else `demo-idp-key.pem`."""
    return Path(os.environ.get(KEY_ENV) or DEFAULT_KEY_FILE)


def private_key(path: Path | None = None) -> ec.EllipticCurvePrivateKey:
    """The demo provider's signing key, read from `path` (default: `key_file()`), made there if it is missing."""
    path = path or key_file()
    if not path.exists():
        _create(path)
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path} holds no EC private key")
    return key


def _create(path: Path) -> None:
    """Write a new key to `path` unless another process got there first (the server and a command may race)."""
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, written = tempfile.mkstemp(dir=path.parent, prefix=".demo-idp-")  # mode 0600
    try:
        with os.fdopen(descriptor, "wb") as temporary:
            temporary.write(pem)
        # a link appears whole or not at all, and never replaces a key another process made
        with contextlib.suppress(FileExistsError):
            os.link(written, path)
    finally:
        os.unlink(written)


def jwks(path: Path | None = None) -> dict[str, Any]:
    """The public half of the demo provider's key as a JWKS: what the settings trust, by value."""
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private_key(path).public_key()))
    return {"keys": [{**public, "kid": KEY_ID, "use": "sig", "alg": "ES256"}]}


def trusted_issuers() -> dict[str, dict[str, Any]]:
    """The `OAUTH_TRUSTED_ISSUERS` entry for the demo provider: its subjects are `LinkedIdentity` rows (seed_demo)."""
    return {ISSUER: {"JWKS": jwks(), "USERS": "linked"}}


def id_jag(subject: str, client_id: str, *, audience: str, resource: str, scope: str = "") -> str:
    """An ID-JAG (RFC 8693's identity assertion JWT grant) for `subject`, to be presented by `client_id`.

    `audience` is the site's issuer (its base URL), `resource` the MCP endpoint the token is for;
    `scope`, when given, bounds the scopes the token may get.
    """
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": subject,
        "aud": audience,
        "client_id": client_id,
        "resource": resource,
        "jti": str(uuid.uuid4()),
        "iat": now,
        "exp": now + LIFETIME,
    }
    if scope:
        claims["scope"] = scope
    return jwt.encode(claims, private_key(), algorithm="ES256", headers={"kid": KEY_ID, "typ": "oauth-id-jag+jwt"})
