"""Sources that hand out tasks of their own (a gateway's remote servers): the tasks extension serves them.

There is one tasks extension (`mcp_django.tasks`): it is served where a source hands out tasks, and
each `tasks/*` request goes to the source that gave its task id out, else to the `MCPTask` rows
(docs/tasks.md, "Tasks a source hands out"). The remote servers' own are `gateway.tasks.RemoteTasks`,
tried end to end in `tests/gateway/test_tasks_through_gateway_live.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_django.endpoints import Endpoint
from mcp_django.extensions import Extension
from mcp_django.gateway.extension import IDENTIFIER as GATEWAY
from mcp_django.protocol.context import RequestContext
from mcp_django.sources import Source
from mcp_django.tasks.methods import EXTENSION, TaskSource
from mcp_django.testing import MCPTestClient, assert_mcp_error

DECLARES: dict[str, Any] = {"extensions": {EXTENSION: {}}}


class HandingOut(Source):
    """Serves nothing to list; hands out the task ids that start with its prefix, and answers for them."""

    def __init__(self, prefix: str, *, handing_out: bool = True) -> None:
        self.prefix = prefix
        self.handing_out = handing_out
        self.asked: list[str] = []

    def capabilities(self) -> dict[str, Any]:
        return {}

    def hands_out_tasks(self) -> bool:
        return self.handing_out

    async def answer_task(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any] | None:
        task_id = params.get("taskId")
        self.asked.append(str(task_id))
        if not isinstance(task_id, str) or not task_id.startswith(self.prefix):
            return None
        return {"taskId": task_id, "status": "working", "answeredBy": self.prefix, "method": method}


class HandingOutServers(Extension):
    """Serves an endpoint's `servers=` as the given sources, as the gateway serves its remote servers."""

    identifier = "tests/handing-out"

    def __init__(self, sources: list[HandingOut]) -> None:
        self.handing_out = sources

    def capability(self, endpoint: Any) -> None:
        return None

    def server_sources(self, endpoint: Any) -> list[Source]:
        return list(self.handing_out)


def client(*sources: HandingOut, capabilities: dict[str, Any] = DECLARES) -> MCPTestClient:
    endpoint = Endpoint(
        "handing-out/mcp",
        name="handing-out",
        allow_anonymous=True,
        registry="tests.interceptors.tools.registry",
        servers=["handing-out"],
        extensions=[HandingOutServers(list(sources))],
        exclude_extensions=[GATEWAY],
    )
    return MCPTestClient(endpoint, era="stateless", capabilities=capabilities)


def test_a_source_that_hands_out_tasks_is_a_task_source() -> None:
    assert isinstance(HandingOut("a-"), TaskSource)
    assert not isinstance(Source(), TaskSource)


async def test_an_endpoint_whose_source_hands_out_tasks_serves_the_tasks_extension() -> None:
    discovered = await client(HandingOut("a-")).request("server/discover")

    assert discovered["capabilities"]["extensions"][EXTENSION] == {}


async def test_an_endpoint_with_no_task_tool_and_no_source_handing_out_tasks_serves_no_tasks() -> None:
    mcp = client(HandingOut("a-", handing_out=False))

    discovered = await mcp.request("server/discover")
    assert EXTENSION not in discovered["capabilities"].get("extensions", {})
    with assert_mcp_error(-32601):
        await mcp.request("tasks/get", {"taskId": "a-1"})


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_a_tasks_request_goes_to_the_source_that_gave_the_task_out(method: str) -> None:
    first, second = HandingOut("a-"), HandingOut("b-")

    answer = await client(first, second).request(method, {"taskId": "b-7", "inputResponses": {}})

    assert (answer["answeredBy"], answer["method"]) == ("b-", method)
    assert (first.asked, second.asked) == (["b-7"], ["b-7"])


@pytest.mark.django_db
async def test_a_task_id_no_source_gave_out_is_looked_up_among_the_endpoint_s_own_tasks() -> None:
    source = HandingOut("a-")

    with assert_mcp_error(-32602, match="Unknown task: z-1"):
        await client(source).request("tasks/get", {"taskId": "z-1"})
    assert source.asked == ["z-1"]


async def test_a_client_that_did_not_declare_the_extension_is_refused_before_any_source_is_asked() -> None:
    source = HandingOut("a-")

    with assert_mcp_error(-32021):
        await client(source, capabilities={}).request("tasks/get", {"taskId": "a-1"})
    assert source.asked == []
