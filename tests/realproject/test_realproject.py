"""The real-project tier (DESIGN.md decision 27): mcp_django added, as the docs say, to a project nobody
shaped for it, and driven by the official MCP client over a real socket.

`tests/realproject/project/` is what real projects run: a custom user model, DRF viewsets filtered with
django-filter's `DjangoFilterBackend` (the newest django-filter, which no longer describes OpenAPI
parameters), German as `LANGUAGE_CODE` with per-user languages (`LocaleMiddleware`), WhiteNoise,
django-cors-headers. mcp_django is added as docs/quickstart.md adds it (the settings, the URLs, its
`asgi.py` as written there) and an `APIToolset` publishes the viewset. The test copies the project to a
temporary folder, makes its migrations, migrates, collects its static files, runs `check`, and serves it
with daphne.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent

from tests.conftest import _free_port, _wait_until_answering

pytestmark = pytest.mark.live

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
COMMAND_TIMEOUT_S = 120


def quickstart_asgi() -> str:
    """docs/quickstart.md's `asgi.py`, as the page writes it (for `mysite`)."""
    page = (ROOT / "docs" / "quickstart.md").read_text()
    found = re.search(r"```python\n# mysite/asgi.py\n(.*?)```", page, re.S)
    assert found is not None, "docs/quickstart.md lost its asgi.py"
    return found.group(1).replace("mysite.settings", "realproject.settings")


def manage(folder: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=folder, env=env, capture_output=True, text=True,
        timeout=COMMAND_TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


class Project:
    def __init__(self, folder: Path, port: int, token: str, env: dict[str, str]) -> None:
        self.folder, self.port, self.token, self.env = folder, port, token, env

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path: str) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    folder = tmp_path_factory.mktemp("realproject") / "project"
    shutil.copytree(HERE / "project", folder)
    (folder / "realproject" / "asgi.py").write_text(quickstart_asgi())
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")}
    env["PYTHONPATH"] = str(folder)
    manage(folder, env, "makemigrations", "nursery")
    manage(folder, env, "migrate")
    manage(folder, env, "collectstatic", "--noinput")
    # A file only in STATIC_ROOT (what a build step leaves there): WhiteNoise serves it, staticfiles' finders do not.
    (folder / "staticfiles" / "build.txt").write_text("built")
    token = manage(
        folder, env, "shell", "-c",
        "from rest_framework.authtoken.models import Token\n"
        "from nursery.models import Note, Parent\n"
        "ada = Parent.objects.create_user('ada', nickname='A')\n"
        "for title, kind, year in [('Nap', 'sleep', 2024), ('Porridge', 'meal', 2024), ('Park', 'walk', 2025),"
        " ('Bottle', 'meal', 2025), ('Night', 'sleep', 2023)]:\n"
        "    Note.objects.create(title=title, kind=kind, year=year, author=ada)\n"
        "print(Token.objects.create(user=ada).key)",
    ).split()[-1]  # fmt: skip
    checked = manage(folder, env, "check")
    assert "System check identified no issues" in checked, checked
    port = _free_port()
    log_path = folder / "daphne.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "realproject.asgi:application"],
            cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait_until_answering(server, "127.0.0.1", port, log_path)
        yield Project(folder, port, token, env)
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextlib.asynccontextmanager
async def client(project: Project, mode: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {project.token}", "Accept-Language": "ru"}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(project.url("/mcp"), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30) as session:
            yield session


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_client_lists_the_viewset_s_tools_by_their_untranslated_names(
    project: Project, mode: str
) -> None:
    async with client(project, mode) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}

    assert set(tools) == {"list_log_entries", "get_log_entry", "create_log_entry"}  # German: Logeinträge
    listed = tools["list_log_entries"].input_schema["properties"]
    assert sorted(listed) == ["kind", "page", "since", "title__icontains", "year__in"]
    assert listed["kind"]["enum"] == ["sleep", "meal", "walk"]
    assert tools["get_log_entry"].input_schema["required"] == ["id"]
    created = tools["create_log_entry"].output_schema
    assert created is not None
    assert created["properties"]["kind"]["enum"] == ["sleep", "meal", "walk"]


async def test_a_filtered_list_runs_through_django_filter_and_links_the_next_page_to_the_api(
    project: Project,
) -> None:
    async with client(project, "2026-07-28") as session:
        meals = await session.call_tool("list_log_entries", {"kind": "meal"})
        years = await session.call_tool("list_log_entries", {"year__in": [2023, 2025]})
        wrong = await session.call_tool("list_log_entries", {"kind": "bath"})

    assert [row["title"] for row in json.loads(text_of(meals))["results"]] == ["Bottle", "Porridge"]
    page = json.loads(text_of(years))
    assert (page["count"], page["next"]) == (3, "https://localhost/api/notes/?page=2&year__in=2023%2C2025")
    assert wrong.is_error


async def test_a_write_is_made_by_the_caller_and_answers_with_the_row(project: Project) -> None:
    async with client(project, "legacy") as session:
        created = await session.call_tool("create_log_entry", {"title": "Swim", "kind": "walk", "year": 2025})

    assert not created.is_error, text_of(created)
    assert created.structured_content is not None
    assert created.structured_content["title"] == "Swim"
    assert isinstance(created.structured_content["author"], int)


def test_whitenoise_serves_static_files_through_the_quickstart_s_asgi_py_in_debug(project: Project) -> None:
    assert project.get("/static/nursery/app.css")[0] == 200
    assert project.get("/static/build.txt") == (200, b"built")  # in STATIC_ROOT only: WhiteNoise's


def test_a_project_without_the_gateway_loads_no_mcp_client_gateway_or_admin_inventory_when_django_starts(
    project: Project,
) -> None:
    # The admin's and the checks' start-up read the client's settings; the client (httpx, OAuth) stays unloaded,
    # and so do the admin's inventory and dashboard and the gateway the overlay wraps remote sources with.
    loaded = manage(
        project.folder, project.env, "shell", "-c",
        "import sys; print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('httpx2', 'httpx', 'authlib', 'cryptography')"
        " or m in ('mcp_django.client.mcpclient', 'mcp_django.client.http')"
        " or m.startswith(('mcp_django.gateway', 'mcp_django.control.inventory', 'mcp_django.control.dashboard'))))",
    )  # fmt: skip
    assert loaded.splitlines()[-1] == "[]", loaded
