"""`CatalogueExtension`: an endpoint's discovery mode (`flat`, `search`, `grouped`) on the extension seam.

Off by default: an endpoint is flat unless `MCP_DJANGO["CATALOGUES"]` names it (with the extension
installed), or its `extensions=` gives it an instance with a mode of its own. A mode other than `flat` is
served as the hooks of `modes`; the extension is the server's alone (nothing is advertised: a client
sees tools, as always).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from django.core.checks import CheckMessage, Warning

from mcp_django.catalogues.conf import catalogue_settings, mode_entry
from mcp_django.catalogues.modes import MODES, GroupedHook, SearchHook
from mcp_django.extensions import Extension
from mcp_django.protocol.hooks import OperationHook

EXTENSION: Final = "mcp-django.dev/catalogues"
_W300: Final = "mcp_django_catalogues.W300"


class CatalogueExtension(Extension):
    """Serves an endpoint's tools in its discovery mode: `search` (a search tool over the caller's catalogue)
    or `grouped` (a dispatcher tool per group); `flat` (every tool listed) changes nothing.

    Args:
        mode: this instance's mode on every endpoint that names it in `extensions=`; None reads each
            endpoint's from `MCP_DJANGO["CATALOGUES"]` (flat when it is not there).
        pinned: in `search` mode, the tools listed besides the search tool (those the caller may see).

    Raises:
        ValueError: an unknown mode.
    """

    identifier = EXTENSION
    advertised = False
    settings = catalogue_settings

    def __init__(self, mode: str | None = None, *, pinned: Sequence[str] = ()) -> None:
        if mode is not None and mode not in MODES:
            raise ValueError(f"Unknown discovery mode {mode!r}: one of {', '.join(MODES)}")
        if isinstance(pinned, str):
            raise ValueError("pinned= takes a list of tool names, not one string")
        self.mode = mode
        self.pinned = tuple(pinned)

    def __repr__(self) -> str:
        return f"<CatalogueExtension {self.mode or 'from settings'}>"

    def mode_of(self, endpoint: Any) -> tuple[str, tuple[str, ...]]:
        """The endpoint's `(mode, pinned tool names)`: this instance's, else its `CATALOGUES` entry's, else flat."""
        if self.mode is not None:
            return self.mode, self.pinned
        configured = catalogue_settings.CATALOGUES
        entry = configured.get(getattr(endpoint, "name", None)) if isinstance(configured, Mapping) else None
        return mode_entry(entry) or ("flat", ())

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{}` where the endpoint's mode is `search` or `grouped`; None where it is flat."""
        return None if self.mode_of(endpoint)[0] == "flat" else {}

    def hooks(self, endpoint: Any) -> Sequence[OperationHook]:
        mode, pinned = self.mode_of(endpoint)
        if mode == "search":
            return (SearchHook(pinned),)
        if mode != "grouped":
            return ()
        namespaces = [getattr(source, "namespace", "") for source in getattr(endpoint, "remote_sources", ())]
        return (GroupedHook([namespace for namespace in namespaces if namespace]),)

    def check(self) -> list[CheckMessage]:
        """W300: `CATALOGUES` names an endpoint the URLconf does not mount."""
        configured = catalogue_settings.CATALOGUES
        if not isinstance(configured, Mapping) or not configured:
            return []  # a bad value is mcp_django.E004 (the setting's rule)
        from mcp_django.endpoints import mounted_endpoints

        try:
            mounted = {endpoint.name for endpoint in mounted_endpoints()}
        except Exception:  # a broken URLconf: Django's URL checks and mcp_django.E013 report it
            return []
        return [
            Warning(
                f"MCP_DJANGO['CATALOGUES'] names {name[:40]!r}, which no URL mounts.",
                hint="Name an endpoint by its name= (manage.py mcp_inspect lists them), or remove the entry.",
                id=_W300,
            )
            for name in configured
            if name not in mounted
        ]
