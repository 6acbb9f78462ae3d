"""The example project's book card on its default endpoint (`/mcp`), through the in-memory client in both eras."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from example_project.demo.models import Book
from mcp_django.testing import MCPTestClient
from mcp_django.ui import APP_MIME_TYPE
from mcp_django.ui.extension import LANGUAGE_META
from tests.ui.catalogues import compile_demo_catalogues
from tests.ui.support import HOST

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.parametrize("era", ["handshake", "stateless"])]

CARD = "ui://apps/demo/book_card.html"


async def test_show_book_names_its_card_and_the_card_reads_as_an_app(era: str) -> None:
    user = await User.objects.acreate(username="dora")
    book = await Book.objects.acreate(title="Dune", author="Frank Herbert", year=1965)
    mcp = MCPTestClient("mcp", user=user, era=era, capabilities=HOST)  # type: ignore[arg-type]

    (show_book,) = [tool for tool in await mcp.list_tools() if tool["name"] == "show_book"]
    (card,) = (await mcp.read_resource(show_book["_meta"]["ui"]["resourceUri"]))["contents"]
    result = await mcp.call_tool("show_book", {"book_id": book.pk})

    assert show_book["_meta"]["ui"] == {"resourceUri": CARD}
    assert card["mimeType"] == APP_MIME_TYPE
    assert card["_meta"] == {"ui": {"prefersBorder": True}}
    assert "Shown to dora" in card["text"]
    assert ".card h1 {" in card["text"]  # the stylesheet, inlined
    assert 'app.callTool("search_books"' in card["text"]  # the card's script, inlined
    assert result["structuredContent"] == {"id": book.pk, "title": "Dune", "author": "Frank Herbert", "year": 1965}


async def test_a_client_without_the_extension_gets_show_book_as_a_plain_tool(era: str) -> None:
    user = await User.objects.acreate(username="eve")
    mcp = MCPTestClient("mcp", user=user, era=era)  # type: ignore[arg-type]

    (show_book,) = [tool for tool in await mcp.list_tools() if tool["name"] == "show_book"]

    assert "_meta" not in show_book
    assert CARD not in [resource["uri"] for resource in await mcp.list_resources()]


async def test_the_card_renders_in_french_from_the_demos_catalogue_when_the_read_names_fr(era: str) -> None:
    if not compile_demo_catalogues():
        pytest.skip("msgfmt (GNU gettext) is not installed: the demo's .po cannot be compiled")
    user = await User.objects.acreate(username="zoé")
    mcp = MCPTestClient("mcp", user=user, era=era, capabilities=HOST)  # type: ignore[arg-type]

    # LOCALE_PATHS changed (to the same value) clears Django's translation caches: a catalogue compiled
    # after French was first loaded in this process is read.
    with override_settings(LOCALE_PATHS=[]):
        french = (await mcp.request("resources/read", {"uri": CARD, "_meta": {LANGUAGE_META: "fr"}}))["contents"][0]
        default = (await mcp.read_resource(CARD))["contents"][0]

    assert '<html lang="fr">' in french["text"]
    assert "<title>Livre</title>" in french["text"]
    assert "Du même auteur" in french["text"]
    assert "Affiché pour zoé" in french["text"]
    assert "Shown to zoé" in default["text"]
