"""The `ServerCapabilities` an endpoint advertises in each era, assembled once per handler.

The backend's features, `logging`, the notification-dependent flags (`listChanged`, resource
subscriptions) and the protocol extensions (SEP-2133's `capabilities.extensions`), each extension in the
eras it exists in: one defined for the stateless revisions only (its methods answer `-32601` in a
handshake session) is not advertised by `initialize`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from mcp_django.protocol.versions import Era


def advertised_capabilities(
    backend: Mapping[str, Mapping[str, Any]],
    *,
    notifications: bool,
    extensions: Mapping[str, Mapping[str, Any]] | None,
    stateless_extensions: Collection[str] = (),
) -> tuple[frozenset[str], dict[Era, dict[str, Any]]]:
    """The features served (the capability keys, `notifications` when delivered) and the capabilities by era.

    Args:
        backend: the backend's `capabilities()`.
        notifications: whether server notifications reach listening clients (`listChanged`, `subscribe`).
        extensions: the extensions to advertise, by identifier; in the handshake era, whose schema has no
            `extensions`, under `capabilities.experimental` too, where clients of that schema look.
        stateless_extensions: identifiers among `extensions` that exist in the stateless era only: left
            out of the handshake era's capabilities.
    """
    served = {name: dict(value) for name, value in backend.items()}
    served["logging"] = {}
    # A backend whose resources nobody could subscribe to says `subscribe: False` (a remote server's).
    subscribable = "resources" in served and served["resources"].pop("subscribe", True) is not False
    if notifications:
        for name in ("tools", "prompts", "resources"):
            if name in served:
                served[name]["listChanged"] = True
        if subscribable:
            served["resources"]["subscribe"] = True
    features = frozenset(served) | ({"notifications"} if notifications else frozenset())
    handshake = dict(served)
    if subscribable:
        # Handshake sessions may subscribe even without a notification transport (nothing is lost:
        # the subscription is remembered and updates flow once a stream can carry them).
        handshake["resources"] = {**handshake["resources"], "subscribe": True}
    if extensions:
        advertised = {name: dict(value) for name, value in extensions.items()}
        older = {name: value for name, value in advertised.items() if name not in stateless_extensions}
        if older:
            handshake["experimental"] = {**handshake.get("experimental", {}), **older}
            handshake["extensions"] = dict(older)  # what SEP-2133 clients (the Inspector, TS SDK v2) read
        served = {**served, "extensions": {**served.get("extensions", {}), **advertised}}
    return features, {Era.HANDSHAKE: handshake, Era.STATELESS: served}
