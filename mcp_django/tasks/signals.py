"""Signals of the tasks extension: what other parts of a site hear about tasks (the events extension's
`emit_on_task_finished`, a project's own receivers).
"""

from __future__ import annotations

from django.dispatch import Signal

task_finished = Signal()
"""Sent once a task settles as completed or failed (`store.finish`), after its row is saved: `sender` is
`MCPTask`, `task` the row (its `tool`, `status`, `result` or `error`, `user_id`, `endpoint`). Not sent for
a task cancelled."""
