"""What a remote server lists, made fit to pass on: cleaned, without duplicates, and bounded.

A remote's tools, prompts, resources and resource templates reach the gateway's callers (and their
models) as the remote wrote them. `Listing` collects one listing page by page and keeps:

- only items with a usable key: a tool's or prompt's `name` matching `NAME_PATTERN` (as local names
  must), a resource's `uri`, a template's `uriTemplate`, as a single line without control characters;
- the first item of each key (a duplicate is dropped);
- no tool that runs only as a task of 2025-11-25 (`execution.taskSupport: "required"`): a gateway
  neither advertises nor forwards that form of task, so a caller could never call it;
- descriptions and titles (also inside schemas and prompt arguments) without terminal escape sequences,
  control characters (but newlines and tabs in descriptions) or invisible and bidirectional formatting
  characters (U+202E and its kin, tag characters), cut to `REMOTE_MAX_DESCRIPTION_CHARS`;
- no item nested more than 64 levels deep (schemas included);
- at most `REMOTE_MAX_LIST_ITEMS` items, and no more than `REMOTE_MAX_MESSAGE_BYTES` of them in all:
  past either the listing fails with `reason = "limit"` rather than being served cut.

Dropped items are logged (`mcp_django.gateway`), never passed on.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.client.conf import client_settings
from mcp_django.client.limits import over_limit
from mcp_django.declarations import NAME_PATTERN
from mcp_django.exceptions import BackendUnavailable
from mcp_django.protocol.jsonrpc import dump_json

logger = logging.getLogger("mcp_django.gateway")

KEYS: Final[Mapping[str, tuple[str, str]]] = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
"""Each list method: the result's list member, and the member that names an item in it."""
_NAMED: Final = frozenset({"tools/list", "prompts/list"})
_MAX_KEY_CHARS: Final = 4096
_TEXT_FIELDS: Final = ("description", "title")
_MAX_DEPTH: Final = 64
"""Nesting an item may have (its schemas included); a deeper one is dropped, not walked."""
_ESCAPES: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]")
"""Terminal escape sequences (CSI, OSC, and the short ones such as `ESC c` or `ESC ( B`), removed whole."""
_INVISIBLE: Final = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff"
)
_UNSEEN: Final = re.compile(f"[{_INVISIBLE}]")
"""Controls (not tab and newline), bidirectional and invisible formatting characters, lone surrogates."""
_LINE_BREAKS: Final = re.compile(r"[\t\n\u2028\u2029]+")


def clean_text(value: str, *, single_line: bool = False, limit: int | None = None) -> str:
    """`value` without escape sequences and unseen characters, on one line if asked, cut to `limit` characters.

    `limit` defaults to `REMOTE_MAX_DESCRIPTION_CHARS`; a cut text ends with an ellipsis.
    """
    limit = client_settings.REMOTE_MAX_DESCRIPTION_CHARS if limit is None else limit
    text = _UNSEEN.sub("", _ESCAPES.sub("", value))
    if single_line:
        text = _LINE_BREAKS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _TooDeep(Exception):
    pass


def _clean_texts(value: Any, depth: int = 0) -> Any:
    """`value` with every `description` and `title` string inside it cleaned (schemas, arguments, annotations).

    Raises:
        _TooDeep: nested more than `_MAX_DEPTH` levels.
    """
    if depth > _MAX_DEPTH:
        raise _TooDeep()
    if isinstance(value, list):
        return [_clean_texts(item, depth + 1) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in _TEXT_FIELDS and isinstance(item, str):
            out[key] = clean_text(item, single_line=key == "title")
        else:
            out[key] = _clean_texts(item, depth + 1)
    return out


def _task_only(tool: Mapping[str, Any]) -> bool:
    """Whether a tool runs only as a task of 2025-11-25 (`execution.taskSupport: "required"`): no gateway serves it."""
    execution = tool.get("execution")
    return isinstance(execution, Mapping) and execution.get("taskSupport") == "required"


class Listing:
    """One listing of a remote server, collected page by page (`add`), cleaned, deduplicated and bounded.

    Args:
        server: the remote's configured name (for errors and logs).
        method: the list method (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`).
    """

    def __init__(self, server: str, method: str) -> None:
        self.server = server
        self.method = method
        self.member, self.key = KEYS[method]
        self.items: list[dict[str, Any]] = []
        self._seen: set[str] = set()
        self._bytes = 0
        self._dropped = 0
        self._task_only: list[str] = []

    def add(self, page: Any) -> None:
        """Keep the usable items of one page (a result's list member; anything else counts as empty).

        Raises:
            BackendUnavailable: (`reason = "limit"`) the listing passed `REMOTE_MAX_LIST_ITEMS` items or
                `REMOTE_MAX_MESSAGE_BYTES` in all.
        """
        for raw in page if isinstance(page, list) else ():
            item = self._usable(raw)
            if item is not None and self.method == "tools/list" and _task_only(item):
                self._task_only.append(item[self.key])
                continue
            if item is None:
                self._dropped += 1
                continue
            self._seen.add(item[self.key])
            self.items.append(item)
            self._bytes += len(dump_json(item))
            if len(self.items) > client_settings.REMOTE_MAX_LIST_ITEMS:
                raise self._over(f"more than {client_settings.REMOTE_MAX_LIST_ITEMS} items (REMOTE_MAX_LIST_ITEMS)")
            if self._bytes > client_settings.REMOTE_MAX_MESSAGE_BYTES:
                raise self._over(
                    f"more than {client_settings.REMOTE_MAX_MESSAGE_BYTES} bytes (REMOTE_MAX_MESSAGE_BYTES)"
                )

    def done(self) -> list[dict[str, Any]]:
        """The items kept, once the last page is in; logs how many were dropped."""
        if self._task_only:
            logger.warning(
                "Remote MCP server %r lists tools that run only as tasks of 2025-11-25 (execution.taskSupport "
                "'required'), which a gateway does not forward; they are not passed on: %s",
                self.server,
                ", ".join(self._task_only[:20]),
            )
        if self._dropped:
            logger.warning(
                "Remote MCP server %r listed %d unusable or duplicate items in %s; they are not passed on",
                self.server,
                self._dropped,
                self.method,
            )
        return self.items

    def too_many_pages(self) -> BackendUnavailable:
        """The error for a listing still going after `REMOTE_MAX_LIST_PAGES` pages."""
        return self._over(f"more than {client_settings.REMOTE_MAX_LIST_PAGES} pages (REMOTE_MAX_LIST_PAGES)")

    def _over(self, detail: str) -> BackendUnavailable:
        return over_limit(self.server, f"{self.method} has {detail}")

    def _usable(self, raw: Any) -> dict[str, Any] | None:
        if not isinstance(raw, dict):
            return None
        key = raw.get(self.key)
        if not isinstance(key, str) or key in self._seen:
            return None
        if self.method in _NAMED:
            if not NAME_PATTERN.fullmatch(key):  # match() would take a trailing newline
                return None
        elif len(key) > _MAX_KEY_CHARS or clean_text(key, single_line=True, limit=_MAX_KEY_CHARS) != key:
            return None
        try:
            item: dict[str, Any] = _clean_texts(raw)
        except _TooDeep:
            return None
        if isinstance(item.get("name"), str) and self.method not in _NAMED:
            item["name"] = clean_text(item["name"], single_line=True)  # a resource's name is display text
        return item
