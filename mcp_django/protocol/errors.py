"""One map from exceptions to the wire, used by the core and every transport.

- An `MCPError` travels as itself: its code, message and data. `ResourceNotFound` takes the code of
  the era: `-32002` in the handshake era, `-32602` (with `data.uri`) in 2026-07-28.
- Anything else is a fault of the server: the caller logs it with its traceback, and it travels as
  `-32603` "Internal error"; its text never reaches the client. (A tool's own failure is the one
  exception: it is the model's business and becomes an `isError` result.)
- Over HTTP, `http_status` gives the status that carries an error code in each era; an error whose
  `data.reason` is one of `UNAVAILABLE_REASONS` (`ServiceUnavailable`: the database cannot be used
  now) is a 503 with `Retry-After` in either era (`is_unavailable`).
- A pydantic validation error is described the same way everywhere (`validation_problems`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from mcp_django.protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND_LEGACY,
    UNSUPPORTED_PROTOCOL_VERSION,
    InternalError,
    MCPError,
    Message,
    RequestId,
    ResourceNotFound,
)
from mcp_django.protocol.versions import Era

if TYPE_CHECKING:
    import pydantic

_STATELESS_400: Final = frozenset(
    {
        PARSE_ERROR,
        INVALID_REQUEST,
        INVALID_PARAMS,
        HEADER_MISMATCH,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)
_HANDSHAKE_400: Final = frozenset({PARSE_ERROR, INVALID_REQUEST})


UNAVAILABLE_REASONS: Final = frozenset({"database_unavailable", "audit_unavailable", "idempotency_key_in_use"})
"""`data.reason` of the errors that mean "not now, retry later": answered 503 with `Retry-After` over HTTP."""


class ServiceUnavailable(MCPError):
    """The request could not be served now, for a reason that passes (the database is locked, read-only, down).

    `-32603` with `data.reason` naming what is unavailable; HTTP answers it 503 with `Retry-After`.
    """

    default_message = "Service unavailable: the database cannot be used right now; retry later"

    def __init__(self, message: str | None = None, *, reason: str = "database_unavailable") -> None:
        super().__init__(message, data={"reason": reason})


def is_unavailable(error: Any) -> bool:
    """True when the JSON-RPC `error` member `error` is a `ServiceUnavailable` (by its `data.reason`)."""
    data = error.get("data") if isinstance(error, dict) else None
    return isinstance(data, dict) and data.get("reason") in UNAVAILABLE_REASONS


def protocol_error(exc: BaseException) -> MCPError:
    """The protocol error `exc` travels as: itself when it is an `MCPError`, else an `InternalError`."""
    return exc if isinstance(exc, MCPError) else InternalError()


def error_response(exc: BaseException, request_id: RequestId | None, era: Era) -> Message:
    """The JSON-RPC error response answering request `request_id` that failed with `exc` in `era`."""
    error = protocol_error(exc)
    response = error.to_response(request_id)
    if isinstance(error, ResourceNotFound) and era is Era.HANDSHAKE:
        response["error"]["code"] = RESOURCE_NOT_FOUND_LEGACY
    return response


def http_status(era: Era, code: int) -> int:
    """Return the HTTP status of a response carrying the JSON-RPC error `code`.

    Stateless era: request-shape errors are 400 and an unknown method is 404, as the
    2026-07-28 transport requires. Handshake era: only unparseable or malformed envelopes
    are 400; every other error travels in a 200, as before.
    """
    if era is Era.STATELESS:
        if code == METHOD_NOT_FOUND:
            return 404
        return 400 if code in _STATELESS_400 else 200
    return 400 if code in _HANDSHAKE_400 else 200


@contextlib.contextmanager
def internal_errors(logger: logging.Logger, what: str, *args: Any) -> Iterator[None]:
    """Let protocol errors through; log anything else as `what % args` and raise an `InternalError` instead.

    Wraps calls into user code (a provider's `read_resource`, a declared prompt) whose failures the
    client must not see the text of.
    """
    try:
        yield
    except MCPError:
        raise
    except Exception:
        logger.exception(what, *args)
        raise InternalError() from None


class ValidationProblem(NamedTuple):
    """One problem pydantic found: where (dotted), what it says, pydantic's error type and the raw location."""

    location: str
    message: str
    type: str
    loc: tuple[int | str, ...]


def validation_problems(
    error: pydantic.ValidationError, *, prefix: str = "", skip: Collection[str] = ()
) -> list[ValidationProblem]:
    """Each problem of `error` in pydantic's order, located by a dotted path (`prefix` first, `skip` parts left out).

    The rejected input is never part of a description, so nothing a client sent is echoed back.
    """
    problems = []
    for item in error.errors(include_url=False, include_input=False):
        parts = [str(part) for part in item["loc"] if part not in skip]
        location = ".".join([prefix, *parts] if prefix else parts)
        problems.append(ValidationProblem(location, item["msg"], item["type"], tuple(item["loc"])))
    return problems
