"""A third-party extension owns its settings and checks: the example of docs/extensions.md, run as written.

Its keys are accepted and their values checked where it is installed (and unknown where it is not), read
through its own `MCPSettings` and through `mcp_settings`, and its check reports under its own namespace.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.checks.settings import check_settings
from mcp_django.conf import mcp_settings
from mcp_django.extensions import Extension, MCPSettings, check_extensions

DOCS = Path(__file__).resolve().parent.parent / "docs" / "extensions.md"
MODULE = "shop_docs_example.mcp_printing"
EXTENSION = f"{MODULE}.PrintingExtension"


@pytest.fixture(scope="module", autouse=True)
def printing() -> Iterator[types.ModuleType]:
    """docs/extensions.md's `catalogue/mcp_printing.py`, importable as `shop_docs_example.mcp_printing`."""
    [source] = re.findall(r"```python\n# catalogue/mcp_printing.py\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    package, module = types.ModuleType("shop_docs_example"), types.ModuleType(MODULE)
    package.__path__ = []
    sys.modules.update({"shop_docs_example": package, MODULE: module})
    exec(compile(source, str(DOCS), "exec"), module.__dict__)  # the documented code itself
    yield module
    del sys.modules[MODULE], sys.modules["shop_docs_example"]


def ids(messages: list) -> list[str]:
    return [message.id for message in messages]


def test_an_installed_extensions_keys_are_accepted_and_read_through_its_settings_and_the_cores(
    printing: types.ModuleType,
) -> None:
    with override_settings(MCP_DJANGO={"EXTENSIONS": [EXTENSION], "RECEIPTS_KEEP_DAYS": 7, "RECEIPTS_PRINTER": "hall"}):
        assert check_settings() == []
        assert printing.printing_settings.RECEIPTS_KEEP_DAYS == 7
        assert mcp_settings.RECEIPTS_KEEP_DAYS == 7
        assert mcp_settings.RECEIPTS_PRINTER == "hall"
    with override_settings(MCP_DJANGO={"EXTENSIONS": [EXTENSION]}):
        assert printing.printing_settings.RECEIPTS_KEEP_DAYS == 30  # re-read: the default again


def test_an_extensions_value_rule_is_checked_as_e004() -> None:
    with override_settings(MCP_DJANGO={"EXTENSIONS": [EXTENSION], "RECEIPTS_KEEP_DAYS": "a month"}):
        assert check_settings() == [
            Error(
                "MCP_DJANGO['RECEIPTS_KEEP_DAYS'] must be a positive integer.",
                hint="It is 'a month': fix it, or remove it to use the default.",
                id="mcp_django.E004",
            )
        ]


def test_the_key_of_an_extension_that_is_not_installed_is_unknown() -> None:
    with override_settings(MCP_DJANGO={"RECEIPTS_KEEP_DAYS": 7}):
        assert check_settings() == [
            Error(
                "MCP_DJANGO has an unknown key 'RECEIPTS_KEEP_DAYS'.",
                hint="Remove it, or install what declares it. See docs/settings.md.",
                id="mcp_django.E002",
            )
        ]


def test_the_extensions_own_check_reports_under_its_own_namespace() -> None:
    with override_settings(MCP_DJANGO={"EXTENSIONS": [EXTENSION]}):
        assert [message for message in check_extensions() if str(message.id).startswith("shop.")] == [
            Warning(
                "Receipts are kept but never printed.",
                hint="Set MCP_DJANGO['RECEIPTS_PRINTER'] to the printer's name.",
                id="shop.W001",
            )
        ]
    with override_settings(MCP_DJANGO={"EXTENSIONS": [EXTENSION], "RECEIPTS_PRINTER": "hall"}):
        assert "shop.W001" not in ids(check_extensions())


def test_a_key_two_owners_declare_is_e025() -> None:
    class Rival(Extension):
        identifier = "example.com/rival"
        settings = MCPSettings({"RECEIPTS_PRINTER": "lobby"}, owner="rival")

    with override_settings(MCP_DJANGO={"EXTENSIONS": [EXTENSION, Rival]}):
        assert [message for message in check_settings() if message.id == "mcp_django.E025"] == [
            Error(
                "MCP_DJANGO['RECEIPTS_PRINTER'] is declared by 'shop' and 'rival'.",
                hint="Rename the key of one of them: each key has one owner (docs/extensions.md).",
                id="mcp_django.E025",
            )
        ]
