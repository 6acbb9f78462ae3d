"""The one signal of refusals whose reason the client is not told, for whoever counts them (telemetry).

A caller who asks for a tool or prompt beyond its scope is answered exactly as for a name nobody
serves, so that nothing says it exists; `refused` says why, in process. Its own module, so that the
core sends it without importing Django until a refusal happens.
"""

from __future__ import annotations

from django.dispatch import Signal

refused = Signal()
"""Sent (by `sources.composite.CompositeBackend`) when a caller was refused something and told only that it is unknown,
with `reason` (`"scope"`: a caller of higher scope would have reached it), `method` (`tools/call`,
`prompts/get`), `name` and `scope` (the caller's). Sent only while someone listens; receivers run in the
request's context, synchronously: keep them quick."""
