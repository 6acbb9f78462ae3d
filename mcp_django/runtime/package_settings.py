"""`mcp_settings` for the runtime's per-call code, imported on its first use and then kept.

The runtime is imported where Django may not be set up (the protocol core reaches it), so it cannot import
`mcp_django.conf` at the top; `first_use` (`runtime/first_use.py`) spares the per-call import statement
(two per `tools/call`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_django.runtime.first_use import first_use

if TYPE_CHECKING:
    from mcp_django.conf import MCPSettings

package_settings: Callable[[], MCPSettings] = first_use("mcp_django.conf", "mcp_settings")
"""`mcp_django.conf.mcp_settings` (one object for the process: it reloads itself when settings change)."""
