"""The Quickstart, run as written: README's and docs/quickstart.md's snippets, in a fresh `startproject`.

Between the page's `<!-- quickstart: start -->` and `<!-- quickstart: end -->` marks, every fenced block
runs, in order, in a temporary directory with this virtualenv first on the PATH:

- a block whose first line is a path comment (`# catalogue/models.py`, `<!-- catalogue/templates/x.html -->`)
  is that file, written relative to the current directory; `# mysite/settings.py: add at the end` appends
  it instead; a block whose fence has a path for title (```` ```markdown title="catalogue/skills/x/SKILL.md" ````)
  is that file, for a file whose first line cannot be a comment (a SKILL.md starts with its front matter);
- a `bash` block runs in one `bash -e`, and the directory and environment it leaves carry over to the
  next block (`cd mysite`, `export MCP_TOKEN=...`). A `pip install` line is skipped: the project under
  test is installed in this virtualenv already. A `daphne` line starts the server in the background
  (stopping the one already serving: a page that changed the project's code serves it again);
- a `text` block right after a `bash` block is what that block prints: each of its lines must be a line
  of the output;
- `8000` becomes a free port everywhere.

A python block without a path comment fails the test, and so does a `text` block after anything but a
`bash` block; blocks of other languages without a path comment are prose. The test then checks what the
page promises besides the commands succeeding: `check` finds no issue, the first tool calls print what
they should, and the admin's static files are served.

A how-to page's blocks between `<!-- how-to: start (after docs/quickstart.md ...) -->` and
`<!-- how-to: end -->` (any number of such sections) run the same way, in the project the quickstart
leaves: the start mark names the page its blocks depend on. The quickstart runs once per module
(`quickstart_project`); each page gets a copy of the project it left (`copied`), with a port of its own,
so pages run independently of each other and in parallel; a page whose blocks name the port (`8000`)
and no `daphne` line of its own gets the quickstart's server serving the copy, as the quickstart left it.
"""

from __future__ import annotations

import ast
import contextlib
import http.client
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import LiveServer, _free_port

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
FIRST_CALL = {
    "README.md": "{'result': [{'id': 1, 'name': 'Dune', 'category': 'books'}]}",
    "docs/quickstart.md": "Dune (Frank Herbert, 1965)",
}
"""A line each page's first successful tool calls print."""
START, END = "<!-- quickstart: start", "<!-- quickstart: end"
HOW_TO_START, HOW_TO_END = "<!-- how-to: start (after docs/quickstart.md", "<!-- how-to: end -->"
HOW_TO_PAGES = (
    "docs/testing.md",
    "docs/providers.md",
    "docs/toolsets.md",
    "docs/apps.md",
    "docs/permissions.md",
    "docs/federation.md",
    "docs/asking-the-client.md",
    "docs/scopes.md",
    "docs/catalogues.md",
    "docs/declarations.md",
    "docs/admin-actions.md",
    "docs/ninja.md",
    "docs/bus.md",
    "docs/forms.md",
    "docs/authentication.md",
    "docs/tasks.md",
    "docs/side-effects.md",
    "docs/events.md",
    "docs/interceptors.md",
    "docs/cors.md",
    "docs/stdio.md",
    "docs/endpoints.md",
    "docs/inspect.md",
    "docs/fast-path.md",
    "docs/extensions.md",
    "docs/client.md",
    "docs/gateway.md",
    "docs/websocket.md",
    "docs/discovery.md",
    "docs/skills.md",
    "docs/remote-interceptors.md",
    "docs/oauth.md",
    "docs/notifications.md",
)
"""How-to pages whose marked blocks run in the project docs/quickstart.md leaves (their start mark says so)."""
FENCE = re.compile(r'^```(\w*)(?: title="([\w./-]+)")?\n(.*?)^```', re.MULTILINE | re.DOTALL)
PATH_COMMENT = re.compile(r"(?:# ([\w./-]+\.\w+)(: add at the end)?|<!-- ([\w./-]+\.\w+) -->)\s*$")
COMMAND_TIMEOUT_S = 120
SERVER_START_TIMEOUT_S = 30


@dataclass
class Block:
    language: str
    text: str
    path: str | None = None
    """The file a block titled with a path is (`title="catalogue/skills/x/SKILL.md"`), for a file whose
    first line cannot be a path comment: a SKILL.md starts with its front matter."""


def quickstart_blocks(page: str, start: str = START, end: str = END) -> list[Block]:
    """The fenced blocks between the page's quickstart marks (or the `start` and `end` marks, each time)."""
    text = (ROOT / page).read_text()
    assert start in text, f"{page} has no start mark {start!r}"
    assert end in text, f"{page} has no end mark {end!r}"
    blocks = []
    while start in text:
        part = text[text.index(start) : text.index(end)]
        blocks += [Block(match.group(1), match.group(3), match.group(2)) for match in FENCE.finditer(part)]
        text = text[text.index(end) + len(end) :]
    return blocks


@dataclass
class Shell:
    """A shell session spread over blocks: the directory and environment one block leaves, the next starts in."""

    cwd: Path
    env: dict[str, str]
    port: int
    home: Path
    """The directory the session started in: every file it writes or makes is under it."""
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    """The commands that started the servers, as run (their port in them)."""
    written: list[Path] = field(default_factory=list)
    """The files the blocks wrote (with the port in them where a block names it)."""
    outputs: list[str] = field(default_factory=list)

    def write(self, block: Block) -> None:
        if block.path is not None:
            path = self.cwd / block.path
            self.written.append(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.localize(block.text))
            return
        first = block.text.partition("\n")[0]
        found = PATH_COMMENT.match(first)
        assert found is not None, f"a python block of the quickstart names no file: {first!r}"
        path = self.cwd / (found.group(1) or found.group(3))
        text = self.localize(block.text)
        self.written.append(path)
        if found.group(2):
            with path.open("a") as file:
                file.write("\n" + text)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def run(self, block: Block) -> str:
        lines = []
        for line in self.localize(block.text).replace("\\\n", " ").splitlines():
            command = line.strip()
            if command.startswith("pip install"):
                continue
            if command.startswith("daphne "):
                self.serve(command)
                continue
            lines.append(line)
        if not any(line.strip() for line in lines):
            return ""
        state = self.cwd / ".quickstart-state"
        script = "\n".join(["set -e", *lines, f'pwd > "{state}.cwd"', f'env -0 > "{state}.env"'])
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        self.outputs.append(result.stdout)
        assert result.returncode == 0, f"{block.text}\nfailed:\n{result.stdout}\n{result.stderr}"
        cwd = Path(Path(f"{state}.cwd").read_text().strip())
        self.env = dict(item.split("=", 1) for item in Path(f"{state}.env").read_text().split("\0") if "=" in item)
        Path(f"{state}.cwd").unlink()
        Path(f"{state}.env").unlink()
        self.cwd = cwd
        return result.stdout

    def run_all(self, blocks: list[Block]) -> None:
        """Each block as the module's docstring says: files written, commands run, outputs compared."""
        previous, output = None, ""
        for block in blocks:
            if block.language in ("bash", "sh", "shell"):
                output = self.run(block)  # fails the test when a command of the page fails
            elif block.language == "text":
                assert previous in ("bash", "sh", "shell"), f"a text block follows no shell block:\n{block.text}"
                printed = output.splitlines()
                for line in self.localize(block.text).splitlines():
                    assert line in printed, f"{line!r} is not printed; the output was:\n{output}"
            elif block.language == "python" or block.path or PATH_COMMENT.match(block.text.partition("\n")[0]):
                self.write(block)
            previous = block.language

    def serve(self, command: str) -> None:
        """Start `command` in the background, once the server it replaces stopped, and wait for it to answer."""
        self.stop()  # a page that changed the project's code serves it again, as a reader restarts daphne
        log = (self.cwd / "daphne.log").open("wb")
        process = subprocess.Popen(
            ["bash", "-c", "exec " + command], cwd=self.cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        self.servers.append(process)
        self.served = [command]
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while status("127.0.0.1", self.port, "/admin/login/") is None:
            assert process.poll() is None, (self.cwd / "daphne.log").read_text()
            assert time.monotonic() < deadline, "daphne did not start:\n" + (self.cwd / "daphne.log").read_text()
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the servers the session started."""
        for server in self.servers:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
        self.servers = []

    def localize(self, text: str) -> str:
        return text.replace("8000", str(self.port))


def status(host: str, port: int, path: str) -> int | None:
    """The HTTP status of a GET (None when nothing answers)."""
    connection = http.client.HTTPConnection(host, port, timeout=5)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


@contextlib.contextmanager
def shell(directory: Path) -> Iterator[Shell]:
    """A shell session in `directory`, with a free port; the servers it starts are stopped on leaving."""
    venv_bin = str(Path(sys.executable).parent)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "MCP_EXAMPLE", "PYTEST", "COV_"))
    }
    env.update(PATH=venv_bin + os.pathsep + env.get("PATH", ""), PYTHONPATH="", PYTHONUNBUFFERED="1")
    session = Shell(cwd=directory, env=env, port=_free_port(), home=directory)
    try:
        yield session
    finally:
        session.stop()


@contextlib.contextmanager
def copied(project: Shell, directory: Path, serving: bool) -> Iterator[Shell]:
    """A copy of `project` in `directory`, as its session left it, with a port of its own.

    The files its blocks wrote name the new port, the environment and the current directory the new
    place; with `serving`, the project's servers are started again on the copy.
    """
    shutil.copytree(
        project.home, directory, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "daphne.log")
    )
    with shell(directory) as session:
        old_port, new_port = str(project.port), str(session.port)
        for written in dict.fromkeys(project.written):
            path = directory / written.relative_to(project.home)
            path.write_text(path.read_text().replace(old_port, new_port))
        session.written = [directory / path.relative_to(project.home) for path in project.written]
        session.env = {key: value.replace(str(project.home), str(directory)) for key, value in project.env.items()}
        session.cwd = directory / project.cwd.relative_to(project.home)
        if serving:
            for command in project.served:
                session.serve(command.replace(old_port, new_port))
        yield session


@pytest.fixture(scope="module")
def quickstart_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    """docs/quickstart.md run as written, once for the module, its server still serving."""
    with shell(tmp_path_factory.mktemp("quickstart")) as session:
        session.run_all(quickstart_blocks("docs/quickstart.md"))
        yield session


def assert_first_call(page: str, session: Shell) -> None:
    """The page served its project, which passed `check`, answered the first calls and served static files."""
    assert session.servers, f"{page} never serves the project"
    static = status("127.0.0.1", session.port, "/static/admin/css/base.css")
    output = "\n".join(session.outputs)
    assert "System check identified no issues" in output, output
    assert FIRST_CALL[page] in output.splitlines(), output
    assert static == 200, "the admin's static files are not served"


def test_the_readme_quickstart_runs_as_written_to_a_first_tool_call(tmp_path: Path) -> None:
    with shell(tmp_path) as session:
        session.run_all(quickstart_blocks("README.md"))
        assert_first_call("README.md", session)


def test_the_docs_quickstart_runs_as_written_to_a_first_tool_call(quickstart_project: Shell) -> None:
    assert_first_call("docs/quickstart.md", quickstart_project)


@pytest.mark.parametrize("page", HOW_TO_PAGES)
def test_a_how_to_page_runs_as_written_in_the_quickstart_s_project(
    page: str, quickstart_project: Shell, tmp_path: Path
) -> None:
    blocks = quickstart_blocks(page, HOW_TO_START, HOW_TO_END)
    serving = any("8000" in block.text for block in blocks) and not any("daphne " in block.text for block in blocks)
    with copied(quickstart_project, tmp_path, serving=serving) as session:
        session.run_all(blocks)


def test_the_quickstart_s_client_script_runs_against_the_demo_too(example_server: LiveServer, tmp_path: Path) -> None:
    """quickstart.md calls the demo a fuller example of the same kind: its script calls the demo's tools too."""
    (script,) = [block for block in quickstart_blocks("docs/quickstart.md") if block.text.startswith("# call_")]
    path = tmp_path / "call_catalogue.py"
    path.write_text(script.text.replace("http://127.0.0.1:8000", example_server.base_url))
    env = {**os.environ, "MCP_TOKEN": example_server.tokens["alice"]}

    ran = subprocess.run(
        [sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
    )

    assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
    tools, found, by_herbert, stats = ran.stdout.splitlines()
    assert {"search_books", "books_by", "catalogue_stats"} <= set(ast.literal_eval(tools))
    assert found.endswith(" Dune (Frank Herbert, 1965)"), found
    assert "'title': 'Dune'" in by_herbert, by_herbert
    assert stats.startswith("{'books': "), stats
