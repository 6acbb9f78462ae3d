"""Every wire name of the Events extension (SEP-3415), in one place: a change of the spec is a change here.

The revision implemented is recorded in docs/events.md ("The revision implemented"): the extension's
Beta text (`modelcontextprotocol/ext-events`, `specification/beta/events/events.mdx`), defined for
protocol revision 2026-07-28 and later only.
"""

from __future__ import annotations

from typing import Final

EXTENSION: Final = "io.modelcontextprotocol/events"
"""The key under `capabilities.extensions`."""

LIST: Final = "events/list"
POLL: Final = "events/poll"
STREAM: Final = "events/stream"
SUBSCRIBE: Final = "events/subscribe"
UNSUBSCRIBE: Final = "events/unsubscribe"

EVENT_NOTIFICATION: Final = "notifications/events/event"
ACTIVE_NOTIFICATION: Final = "notifications/events/active"
HEARTBEAT_NOTIFICATION: Final = "notifications/events/heartbeat"
ERROR_NOTIFICATION: Final = "notifications/events/error"
TERMINATED_NOTIFICATION: Final = "notifications/events/terminated"
SUBSCRIPTION_ID_META: Final = "io.modelcontextprotocol/subscriptionId"
"""The `_meta` key of every `notifications/events/*` on a push stream: the `events/stream` request's id."""

POLL_MODE: Final = "poll"
PUSH_MODE: Final = "push"
WEBHOOK_MODE: Final = "webhook"
DELIVERY_MODES: Final = (POLL_MODE, PUSH_MODE, WEBHOOK_MODE)
"""An event type's `delivery`: any non-empty subset; none is mandatory."""

# The codes the extension defines, each with a typed `data` (SEP-3415 names them for reuse across MCP).
NOT_FOUND: Final = -32011
FORBIDDEN: Final = -32012
RESOURCE_EXHAUSTED: Final = -32013
UNSUPPORTED: Final = -32014
CALLBACK_ENDPOINT_ERROR: Final = -32015

# Webhook delivery: Standard Webhooks signatures (`webhook-signature: v1,<base64 HMAC-SHA256>` of
# `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64-decoded `whsec_` secret the client gives).
WEBHOOK_ID_HEADER: Final = "webhook-id"
WEBHOOK_TIMESTAMP_HEADER: Final = "webhook-timestamp"
WEBHOOK_SIGNATURE_HEADER: Final = "webhook-signature"
SUBSCRIPTION_ID_HEADER: Final = "X-MCP-Subscription-Id"
SIGNATURE_VERSION: Final = "v1"
SECRET_PREFIX: Final = "whsec_"
SECRET_BYTES: Final = (24, 64)
"""The decoded length a client's secret must have, inclusive."""
VERIFICATION_TYPE: Final = "verification"
"""The body `{"type": "verification", "challenge": ...}` the callback must echo `{"challenge": ...}` to."""
TERMINATED_TYPE: Final = "terminated"
"""The control envelope `{"type": "terminated", "error": {code, message, data}}`: the subscription has ended."""
GAP_TYPE: Final = "gap"
"""The control envelope `{"type": "gap", "cursor": ...}`: occurrences were skipped (not sent here: see docs)."""
CONTROL_ID: Final = "msg_{type}_{random}"
"""A control envelope's `webhook-id`."""
MAX_WEBHOOK_BODY: Final = 256 * 1024
"""One event per POST, at most 256 KiB of body."""
SUBSCRIPTION_ID_PREFIX: Final = "sub_"

TEST_EVENT: Final = "mcp-django.dev/test"
"""Not the spec's: the name of the test occurrence the admin's "Send a test event" action POSTs to a
subscription's callback (signed like any delivery, its `data` `{"test": true}`, no cursor). A `/` keeps it
apart from every declared type."""
