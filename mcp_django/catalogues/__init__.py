"""Large catalogues: an endpoint's discovery mode, `flat`, `search` or `grouped` (docs/catalogues.md).

Install the extension (`MCP_DJANGO["EXTENSIONS"] = ["mcp_django.catalogues.CatalogueExtension"]`) and name
endpoints in `MCP_DJANGO["CATALOGUES"]`, or give one endpoint its own:
`endpoint("mcp", name="shop", extensions=[CatalogueExtension("search")])`.
"""

from mcp_django.catalogues.extension import EXTENSION, CatalogueExtension
from mcp_django.catalogues.modes import MODES, SEARCH_TOOL, grouped_listing, groups, visible_tools
from mcp_django.catalogues.ranking import Index, rank

__all__ = [
    "EXTENSION",
    "MODES",
    "SEARCH_TOOL",
    "CatalogueExtension",
    "Index",
    "grouped_listing",
    "groups",
    "rank",
    "visible_tools",
]
