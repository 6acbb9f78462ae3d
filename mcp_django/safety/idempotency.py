"""Idempotency keys on `tools/call`: a retry gets the first call's result back instead of running the tool again.

A caller names a key with the `Idempotency-Key` header (Streamable HTTP; the transport hands it over in
`Connection.extra[HEADER_KEY]`) or `params._meta["mcp-django.dev/idempotency-key"]` (any transport). The
key is scoped to the caller and the endpoint and bound to a hash of the tool's name and arguments:

- the first call claims the key (an `IdempotentCall` row, `running`, committed at once so every worker
  sees it), runs, and its result is stored with the key: in the call's own transaction when the call is
  atomic on the row's database (`runtime.transactions.Settlement`), else right after it;
- a retry finds the stored result and gets it back, marked `_meta["mcp-django.dev/idempotent-replay"]`,
  without the tool running; while the first still runs, the retry waits for it (`IDEMPOTENCY_WAIT`),
  then answers `IdempotencyKeyInUse` (503 with `Retry-After`);
- the same key with another tool or other arguments is `IdempotencyKeyReused`;
- a call that failed (an `isError` result, an error) gives its key up: its transaction rolled back,
  so a retry runs the tool again; a tool annotated `idempotentHint` keeps nothing either;
- a key lives `IDEMPOTENCY_TTL` seconds; a caller keeps at most `IDEMPOTENCY_MAX_KEYS`; a `running` row
  older than `IDEMPOTENCY_LEASE` (its worker died) is taken over by the next retry.

`IdempotencyHook` is the innermost of an endpoint's hooks (`Endpoint.hooks`): the interceptor chain and
the audit trail see a replay as a call of its own.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.conf import mcp_settings
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.errors import ServiceUnavailable
from mcp_django.protocol.hooks import CallNext
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.runtime.executor import run_sync
from mcp_django.runtime.transactions import Settlement, settlement

logger = logging.getLogger("mcp_django.idempotency")

META_KEY: Final = "mcp-django.dev/idempotency-key"
"""The `params._meta` member naming a `tools/call`'s idempotency key, on every transport."""
REPLAYED: Final = "mcp-django.dev/idempotent-replay"
"""The result `_meta` member marking a stored result sent again (true)."""
HEADER_KEY: Final = "mcp_django.idempotency_key"
"""The `Connection.extra` member an HTTP transport puts the `Idempotency-Key` header's value in."""
MAX_KEY_CHARS: Final = 255

_FIRST_PAUSE: Final = 0.02
_LONGEST_PAUSE: Final = 0.5


class IdempotencyKeyReused(InvalidParams):
    """The key was first sent with another tool or other arguments: `-32602`, `data.reason` `idempotency_key_reused`."""

    default_message = "Idempotency key reused: it was first sent with another tool or other arguments; use a new key"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, data={"reason": "idempotency_key_reused"})


class IdempotencyKeyInUse(ServiceUnavailable):
    """The first call under the key still runs after `IDEMPOTENCY_WAIT`: 503 with `Retry-After` over HTTP."""

    default_message = "The first call with this idempotency key is still running; retry later"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, reason="idempotency_key_in_use")


def key_of(params: Mapping[str, Any], ctx: RequestContext) -> str | None:
    """The call's idempotency key (its header's or its `_meta`'s), or None when it has none.

    Raises:
        InvalidParams: the key is not 1 to 255 printable ASCII characters, or header and `_meta` differ.
    """
    meta = params.get("_meta")
    sent = meta.get(META_KEY) if isinstance(meta, Mapping) else None
    header = ctx.connection.extra.get(HEADER_KEY)
    if header is not None:
        header = header[1:-1] if len(header) >= 2 and header[0] == header[-1] == '"' else header  # an sf-string
        if sent is not None and sent != header:
            raise InvalidParams("The Idempotency-Key header and _meta's idempotency key differ")
        sent = header
    if sent is None:
        return None
    if not isinstance(sent, str) or not 0 < len(sent) <= MAX_KEY_CHARS or not sent.isascii() or not sent.isprintable():
        raise InvalidParams(f"An idempotency key is 1 to {MAX_KEY_CHARS} printable ASCII characters")
    return sent


def remote_key(key: str, ctx: RequestContext) -> str:
    """The key a gateway or hub sends a remote with a forwarded call: the caller's key namespaced per caller and
    endpoint (an HMAC keyed with `SECRET_KEY`), so two callers' keys never meet at the remote and it learns none."""
    from django.utils.crypto import salted_hmac

    scope = f"{ctx.connection.principal_id or ''}\0{getattr(ctx.endpoint, 'name', '') or ''}\0{key}"
    return salted_hmac("mcp_django.safety.idempotency.remote", scope, algorithm="sha256").hexdigest()


def digest_of(name: Any, arguments: Any) -> str:
    """SHA-256 (hex) of a call's tool name and arguments, in a canonical JSON form (keys sorted)."""
    canonical = json.dumps(
        {"name": name, "arguments": arguments or {}}, sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class IdempotencyHook:
    """Runs a keyed `tools/call` at most once per key (the module docstring); any other operation passes."""

    __slots__ = ()

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        key = key_of(params, ctx) if method == "tools/call" else None
        if key is None:
            return await call_next(params)
        scope = (ctx.connection.principal_id or "", str(getattr(ctx.endpoint, "name", "") or ""), key)
        claimed, found = await _claimed_or_stored(
            scope, str(params.get("name")), digest_of(params.get("name"), params.get("arguments"))
        )
        if not claimed:
            return {**found, "_meta": {**(found.get("_meta") or {}), REPLAYED: True}}
        database, pk = found["database"], found["pk"]
        settling = Settlement(database, functools.partial(_keep, database, pk))
        token = settlement.set(settling)
        try:
            result = await call_next(params)
        except BaseException:
            await asyncio.shield(run_sync(_release, database, pk))
            raise
        finally:
            settlement.reset(token)
        if settling.kept:
            return result
        if result.get("isError") or settling.skip:
            await run_sync(_release, database, pk)
        else:  # not atomic on the row's database (an async, remote or non-atomic tool): kept after the call
            await run_sync(_keep, database, pk, result)
        return result


async def _claimed_or_stored(scope: tuple[str, str, str], tool: str, digest: str) -> tuple[bool, dict[str, Any]]:
    """(True, the claimed row's database and pk) or (False, the stored result), waiting for a running first call.

    Raises:
        IdempotencyKeyReused: the key was first used for another call.
        IdempotencyKeyInUse: the first call still runs after `IDEMPOTENCY_WAIT`.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + mcp_settings.IDEMPOTENCY_WAIT
    pause = _FIRST_PAUSE
    while True:
        found = await run_sync(_claim, scope, tool, digest)
        if found is not None:
            return found
        left = deadline - loop.time()
        if left <= 0:
            raise IdempotencyKeyInUse()
        await asyncio.sleep(min(pause, left))  # the first call runs elsewhere (maybe another worker): poll its row
        pause = min(pause * 2, _LONGEST_PAUSE)


def _claim(scope: tuple[str, str, str], tool: str, digest: str) -> tuple[bool, dict[str, Any]] | None:
    """Claim the key, or find its stored result; None while another call runs under it.

    A retry only reads (a SQLite writer holding the database for its call does not stall it).
    """
    from django.db import IntegrityError, router, transaction
    from django.utils import timezone

    from mcp_django.models import IdempotentCall

    principal, endpoint, key = scope
    database = router.db_for_write(IdempotentCall)
    calls = IdempotentCall.objects.using(database)
    now = timezone.now()
    row = calls.filter(principal=principal, endpoint=endpoint, key=key).first()
    if row is not None and row.expires <= now:
        calls.filter(pk=row.pk, expires__lte=now).delete()
        row = None
    if row is None:
        try:
            with transaction.atomic(using=database):
                calls.filter(principal=principal, expires__lte=now).delete()
                row = calls.create(
                    principal=principal,
                    endpoint=endpoint,
                    key=key,
                    tool=tool[: IdempotentCall._meta.get_field("tool").max_length or 255],
                    digest=digest,
                    started=now,
                    expires=now + datetime.timedelta(seconds=mcp_settings.IDEMPOTENCY_TTL),
                )
                _bound(calls, principal)
        except IntegrityError:  # another call claimed it in between
            return None
        return True, {"database": database, "pk": row.pk}
    if row.digest != digest:
        raise IdempotencyKeyReused()
    if row.state == IdempotentCall.State.DONE:
        return False, dict(row.result or {})
    if row.started <= now - datetime.timedelta(seconds=mcp_settings.IDEMPOTENCY_LEASE):
        taken = calls.filter(pk=row.pk, state=IdempotentCall.State.RUNNING, started=row.started).update(started=now)
        if taken:
            logger.warning(
                "idempotency key %r: the call holding it started %s and never finished; running it again",
                key,
                row.started,
            )
            return True, {"database": database, "pk": row.pk}
    return None


def _bound(calls: Any, principal: str) -> None:
    """Forget the caller's oldest finished keys beyond `IDEMPOTENCY_MAX_KEYS`."""
    from mcp_django.models import IdempotentCall

    older = list(
        calls.filter(principal=principal)
        .order_by("-started")
        .values_list("pk", flat=True)[mcp_settings.IDEMPOTENCY_MAX_KEYS :]
    )
    if older:
        calls.filter(pk__in=older, state=IdempotentCall.State.DONE).delete()


def _keep(database: str, pk: int, result: dict[str, Any]) -> None:
    """Store the call's result with its key (in the call's transaction when called from within it)."""
    from mcp_django.models import IdempotentCall

    IdempotentCall.objects.using(database).filter(pk=pk).update(state=IdempotentCall.State.DONE, result=result)


def _release(database: str, pk: int) -> None:
    """Give the key up: the call failed (or keeps nothing), so a retry runs the tool again."""
    from mcp_django.models import IdempotentCall

    IdempotentCall.objects.using(database).filter(pk=pk, state=IdempotentCall.State.RUNNING).delete()
