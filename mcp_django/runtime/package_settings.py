"""`mcp_settings` for the runtime's per-call code, imported on its first use and then kept.

The runtime is imported where Django may not be set up (the protocol core reaches it), so it cannot import
`mcp_django.conf` at the top; an import statement inside a function, run on every call, costs several µs
even for a module long loaded (8 to 10 µs each on the benchmark machine, two per `tools/call`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_django.conf import MCPSettings


@functools.cache
def package_settings() -> MCPSettings:
    """`mcp_django.conf.mcp_settings` (one object for the process: it reloads itself when settings change)."""
    from mcp_django.conf import mcp_settings

    return mcp_settings
