"""The demo's interceptor server: interceptors other chains run remotely (docs/remote-interceptors.md).

`/interceptors/mcp` (example_project/urls.py) serves them with `interceptors/list` and
`interceptor/invoke`; `MCP_DJANGO["SERVERS"]["demo"]` points at it, and the chain of
`/guarded/mcp` names it.
"""

from __future__ import annotations

from mcp_django import Registry
from mcp_django.interceptors import Invocation, ValidationInterceptor, ValidationMessage, ValidationResult

registry = Registry("interceptor-host")
"""No tools: the interceptor server's endpoint serves only its interceptors."""


class ForbiddenWordGuard(ValidationInterceptor):
    """Refuses a tool call whose arguments contain the word 'forbidden'."""

    name = "demo-guard"
    events = ("tools/call",)
    phases = ("request",)

    def validate(self, invocation: Invocation) -> ValidationResult:
        if "forbidden" in str(invocation.payload.get("arguments", "")).lower():
            return ValidationResult(valid=False, messages=[ValidationMessage("the arguments say 'forbidden'")])
        return ValidationResult(valid=True)
