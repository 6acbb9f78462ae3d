"""The reference-server tier: `@modelcontextprotocol/server-everything` (pinned, installed by `make test` into
`.cache/` like the conformance suite) behind one hub of a live daphne, over stdio (`ev_*`) and Streamable
HTTP (`evh_*`), beside a remote that errs (`err_*`) and one that hangs (`hang_*`), driven by the official
`mcp` client in both eras, whose callbacks answer the server's sampling, elicitation and roots requests (a client
without them gets a clear error). Then the HTTP server is restarted: the hub opens a new session."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ResourceLink, TextContent

from tests.conftest import ROOT, LiveServer, _free_port, _wait_until_answering, serve_example, stop_process
from tests.gateway.conftest import plain_backend

pytestmark = pytest.mark.live

EVERYTHING_VERSION = "2026.8.31"
LIST_TIMEOUT = 3.0
"""The hub's REMOTE_LIST_TIMEOUT: a hung remote costs a list this, once."""
WAIT = 30.0
MODES = ["legacy", "2026-07-28"]


def everything() -> list[str]:
    """`node .../server-everything/dist/index.js`: skips the test without the server or Node 22 (make test has both)."""
    cache = Path(os.environ.get("MCP_TEST_CONFORMANCE_DIR") or ROOT / ".cache")
    package = cache / f"server-everything-{EVERYTHING_VERSION}/node_modules/@modelcontextprotocol/server-everything"
    node = shutil.which(
        "node", path=os.environ.get("MCP_TEST_NODE_BIN") or str(ROOT / ".cache/node22/node_modules/.bin")
    )
    if not (package / "dist/index.js").exists() or node is None:
        pytest.skip(f"server-everything {EVERYTHING_VERSION} or Node 22 is not installed (make test installs both)")
    return [node, str(package / "dist/index.js")]


class EverythingOverHTTP:
    """server-everything over Streamable HTTP on a port of its own, which a test may restart (a new process)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir, self.port = log_dir, _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log_path = self.log_dir / f"everything-{self.port}.log"
        with log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*everything(), "streamableHttp"],
                env={"PATH": os.environ.get("PATH", ""), "PORT": str(self.port)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        _wait_until_answering(self.process, "127.0.0.1", self.port, log_path, path="/mcp")  # 400: no session

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None


@dataclass
class Reference:
    hub: LiveServer
    http: EverythingOverHTTP


@pytest.fixture(scope="module")
def reference(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    logs = tmp_path_factory.mktemp("reference")
    node, script = everything()
    http = EverythingOverHTTP(logs)
    http.start()
    try:
        with plain_backend(logs, "error") as erring, plain_backend(logs, "hang") as hanging:
            env = {
                **live_server_env,
                "DJANGO_SETTINGS_MODULE": "tests.gateway.reference_settings",
                "MCP_TEST_NODE": node,
                "MCP_TEST_EVERYTHING_JS": script,
                "MCP_TEST_EVERYTHING_URL": http.url,
                "MCP_TEST_ERRING_URL": f"{erring}/mcp",
                "MCP_TEST_HANGING_URL": f"{hanging}/mcp",
                "MCP_TEST_LIST_TIMEOUT": str(LIST_TIMEOUT),
                "SECRET_KEY_OF_THE_SITE": "must-not-reach-a-stdio-server",
            }
            with serve_example(env, logs) as hub:
                yield Reference(hub, http)
    finally:
        http.stop()


@contextlib.asynccontextmanager
async def session(reference: Reference, mode: str, **callbacks: Any) -> AsyncIterator[Client]:
    async with create_mcp_http_client() as http:
        transport = streamable_http_client(reference.hub.url("/reference/mcp"), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=WAIT, **callbacks) as client:
            yield client


async def answer_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content
    question = asked.text if isinstance(asked, types.TextContent) else "?"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"echo: {question}"), model="test-model"
    )


async def answer_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})


async def answer_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult.model_validate({"roots": [{"uri": "file:///work/ada", "name": "Ada's work"}]})


ANSWERS: dict[str, Any] = {
    "sampling_callback": answer_sampling,
    "elicitation_callback": answer_elicitation,
    "list_roots_callback": answer_roots,
}
TRANSPORTS = ["ev", "evh"]
"""The hub's namespaces of server-everything over stdio and over Streamable HTTP."""


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


@pytest.mark.parametrize("mode", MODES)
async def test_the_hub_serves_the_reference_servers_tools_over_stdio_and_http_while_others_err_or_hang(
    reference: Reference, mode: str
) -> None:
    async with session(reference, mode) as client:
        names = {tool.name for tool in (await asyncio.wait_for(client.list_tools(), LIST_TIMEOUT + WAIT)).tools}
        # the hung remote cost the first list one budget; it stays out of the next ones without being asked
        again = await asyncio.wait_for(client.list_tools(), LIST_TIMEOUT)
        over_stdio = await client.call_tool("ev_echo", {"message": "stdio"})
        over_http = await client.call_tool("evh_echo", {"message": "http"})
        summed = await client.call_tool("evh_get-sum", {"a": 2, "b": 3})

    assert {"ev_echo", "ev_get-sum", "evh_echo", "evh_get-resource-links"} <= names
    assert not [name for name in names if name.startswith(("err_", "hang_"))]
    assert {tool.name for tool in again.tools} == names
    assert (text_of(over_stdio), text_of(over_http)) == ("Echo: stdio", "Echo: http")
    assert "5" in text_of(summed)


@pytest.mark.parametrize("mode", MODES)
async def test_resources_and_prompts_of_the_reference_server_read_through_the_hub_under_its_namespace(
    reference: Reference, mode: str
) -> None:
    async with session(reference, mode) as client:
        resources = [str(item.uri) for item in (await client.list_resources()).resources]
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        linked = await client.call_tool("evh_get-resource-links", {"count": 2})
        links = [str(block.uri) for block in linked.content if isinstance(block, ResourceLink)]
        read = await client.read_resource(links[1])
        simple = await client.get_prompt("ev_simple-prompt", {})

    assert any(uri.startswith("ev+demo://") for uri in resources)
    assert any(uri.startswith("evh+demo://") for uri in resources)
    assert {"ev_simple-prompt", "evh_simple-prompt"} <= prompts
    assert len(links) == 2
    assert all(link.startswith("evh+demo://resource/dynamic/") for link in links)
    assert str(read.contents[0].uri) == links[1]
    assert simple.messages


async def test_a_stdio_reference_server_sees_none_of_the_sites_secrets(reference: Reference) -> None:
    async with session(reference, "2026-07-28") as client:
        env = json.loads(text_of(await client.call_tool("ev_get-env", {})))

    assert "PATH" in env
    assert not {"SECRET_KEY_OF_THE_SITE", "DJANGO_SETTINGS_MODULE", "MCP_EXAMPLE_DB"} & set(env)


async def test_after_the_reference_server_restarts_the_hub_opens_a_new_session(reference: Reference) -> None:
    async with session(reference, "legacy") as client:
        before = await client.call_tool("evh_echo", {"message": "before"})
    reference.http.stop()
    reference.http.start()  # the same port, a new process: it knows no session, and answers 400 to the hub's
    async with session(reference, "legacy") as client:
        after = await asyncio.wait_for(client.call_tool("evh_echo", {"message": "after"}), WAIT)

    assert (text_of(before), text_of(after)) == ("Echo: before", "Echo: after")


@pytest.mark.parametrize("prefix", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_the_reference_servers_questions_are_answered_by_the_caller_that_declared_them(
    reference: Reference, mode: str, prefix: str
) -> None:
    async with session(reference, mode, **ANSWERS) as client:
        names = {tool.name for tool in (await asyncio.wait_for(client.list_tools(), LIST_TIMEOUT + WAIT)).tools}
        sampled = await asyncio.wait_for(
            client.call_tool(f"{prefix}_trigger-sampling-request", {"prompt": "What is MCP?", "maxTokens": 20}), WAIT
        )
        elicited = await asyncio.wait_for(client.call_tool(f"{prefix}_trigger-elicitation-request", {}), WAIT)
        rooted = await asyncio.wait_for(client.call_tool(f"{prefix}_get-roots-list", {}), WAIT)

    assert {f"{prefix}_trigger-sampling-request", f"{prefix}_trigger-elicitation-request"} <= names
    assert not sampled.is_error, sampled
    assert "echo: Resource trigger-sampling-request context: What is MCP?" in text_of(sampled)
    assert not elicited.is_error, elicited
    assert "- Name: Ada Lovelace" in text_of(elicited)
    assert not rooted.is_error, rooted
    assert "URI: file:///work/ada" in text_of(rooted)


@pytest.mark.parametrize("prefix", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_a_caller_that_declared_no_sampling_gets_a_clear_error_not_a_hang(
    reference: Reference, mode: str, prefix: str
) -> None:
    async with session(reference, mode) as client:
        result = await asyncio.wait_for(
            client.call_tool(f"{prefix}_trigger-sampling-request", {"prompt": "What is MCP?"}), WAIT
        )

    assert result.is_error
    assert "did not declare the sampling capability" in text_of(result)


@pytest.mark.parametrize(
    ("url", "reaches_the_caller"),
    [("https://connect.example/login", True), ("javascript:alert(document.cookie)", False)],
)
@pytest.mark.parametrize("mode", MODES)
async def test_the_reference_servers_url_elicitation_reaches_the_caller_only_with_an_http_url(
    reference: Reference, mode: str, url: str, reaches_the_caller: bool
) -> None:
    asked: list[str] = []

    async def open_in_browser(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(str(getattr(params, "url", None)))
        return types.ElicitResult(action="accept")

    async with session(reference, mode, elicitation_callback=open_in_browser) as client:
        result = await asyncio.wait_for(client.call_tool("evh_trigger-url-elicitation", {"url": url}), WAIT)

    if reaches_the_caller:
        assert (asked, result.is_error) == ([url], False)
    else:
        assert (asked, result.is_error) == ([], True)
        assert "not http(s)" in text_of(result)
        assert url not in text_of(result)
