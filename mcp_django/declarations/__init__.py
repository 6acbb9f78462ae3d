"""Tools, resources, prompts and completions declared as plain Python functions.

Everything a declaration can work out from its function — the input schema, the
output schema, the argument model, the wire dict `tools/list` sends — is worked
out once, when it is declared. A call only validates, runs and converts (the
conversions are `mcp_django.runtime.results`').

The classes here are what `Registry.tool()`, `.resource()`, `.prompt()` and
`.completion()` build; users meet them through those decorators. One module a job:
`docstrings`, `signatures` (arguments and output schemas), `tools`, `lean` (the lean form of a tool's
definition, served by default), `resources` (with the RFC 6570 matcher), `prompts`, `completions`;
`common` holds what they share.
"""

from mcp_django.declarations.apps import APP_MIME_TYPE, App
from mcp_django.declarations.common import NAME_PATTERN, Icon, ToolAnnotations, function_name
from mcp_django.declarations.completions import Completion, CompletionRef
from mcp_django.declarations.docstrings import parse_docstring
from mcp_django.declarations.prompts import Prompt
from mcp_django.declarations.resources import Resource, ResourceTemplate
from mcp_django.declarations.tools import Tool
from mcp_django.declarations.uri_templates import UriTemplate
from mcp_django.exceptions import DeclarationError, ToolError
from mcp_django.protocol.results import MAX_COMPLETION_VALUES
from mcp_django.runtime.results import resource_contents, to_content
from mcp_django.safety.approvals import Approval

__all__ = [
    "APP_MIME_TYPE",
    "MAX_COMPLETION_VALUES",
    "NAME_PATTERN",
    "App",
    "Approval",
    "Completion",
    "CompletionRef",
    "DeclarationError",
    "Icon",
    "Prompt",
    "Resource",
    "ResourceTemplate",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "UriTemplate",
    "function_name",
    "parse_docstring",
    "resource_contents",
    "to_content",
]
