"""The distribution: the sdist and the wheel build, pass `twine check`, and the wheel alone serves the Quickstart.

The build runs without network (`--no-isolation`: setuptools and build come from the test extra) on a
copy of the checkout, so the checkout gains no `build/` or `*.egg-info`. The wheel is built from the
sdist, as `python -m build` does, so a file the sdist forgets is missing from the wheel too.

The clean virtualenv gets the wheel with `--no-deps --no-index`; its dependencies come from this
virtualenv's site-packages through a `.pth` line. A `.pth` line only appends a directory: the `.pth`
files inside it (this checkout's editable install among them) are not run, so `mcp_django` can only
come from the wheel, which the test asserts before it runs `docs/quickstart.md` there.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

import mcp_django
from tests.live.test_quickstart import Shell, quickstart_blocks, shell

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT_S = 300
LEFT_OUT_OF_THE_COPY = shutil.ignore_patterns(
    ".git", ".venv*", ".cache", "node_modules", "__pycache__", "*.egg-info", "build", "dist", "db.sqlite3*",
    "test-artifacts", "results", "conformance-results", ".*_cache", "site",
)  # fmt: skip
CONSOLE_SCRIPTS = ("django-admin", "daphne")
"""The dependencies' console scripts the Quickstart runs, written into the clean virtualenv as pip would."""


def run(*command: str | Path, cwd: Path | None = None) -> str:
    """Run a command outside this test run: none of its Django or pytest environment variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "PYTEST", "PYTHONPATH"))}
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
    )
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel `python -m build` makes of a copy of this checkout."""
    source = tmp_path_factory.mktemp("source") / "django-mcp-host"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT_OF_THE_COPY)
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source)
    return out


def the_wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_the_sdist_and_the_wheel_carry_the_version_and_pass_twine_check(dist: Path) -> None:
    names = sorted(path.name for path in dist.iterdir())

    assert names == [
        f"django_mcp_host-{mcp_django.__version__}-py3-none-any.whl",
        f"django_mcp_host-{mcp_django.__version__}.tar.gz",
    ]
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir())


def test_the_wheel_holds_every_file_of_the_package(dist: Path) -> None:
    package = ROOT / "mcp_django"
    expected = {
        path.relative_to(ROOT).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }

    with zipfile.ZipFile(the_wheel(dist)) as wheel:
        shipped = {name for name in wheel.namelist() if name.startswith("mcp_django/")}

    assert shipped == expected
    assert {"mcp_django/py.typed", "mcp_django/migrations/0001_initial.py"} <= shipped
    assert any(name.startswith("mcp_django/templates/") for name in shipped)


def test_the_changelog_names_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()

    assert f"## {mcp_django.__version__}" in changelog


def clean_virtualenv(directory: Path, wheel: Path) -> Path:
    """A virtualenv holding only the wheel; the dependencies are this virtualenv's, by a `.pth` line."""
    run(sys.executable, "-m", "venv", "--without-pip", directory)
    python = directory / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel)
    site_packages = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip())
    (site_packages / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    for name in CONSOLE_SCRIPTS:
        (entry_point,) = importlib.metadata.entry_points(group="console_scripts", name=name)
        function = entry_point.attr.partition(".")[0]
        script = directory / "bin" / name
        script.write_text(
            f"#!{python}\nimport sys\nfrom {entry_point.module} import {function}\nsys.exit({entry_point.attr}())\n"
        )
        script.chmod(0o755)
    return python


def test_the_wheel_in_a_clean_virtualenv_serves_the_quickstart(dist: Path, tmp_path: Path) -> None:
    python = clean_virtualenv(tmp_path / "venv", the_wheel(dist))
    imported_from = run(python, "-c", "import mcp_django; print(mcp_django.__file__)", cwd=tmp_path)
    assert imported_from.startswith(str(tmp_path / "venv")), imported_from

    project = tmp_path / "project"
    project.mkdir()
    with shell(project) as session:
        session.env["PATH"] = f"{python.parent}:{session.env['PATH']}"
        run_page(session, "docs/quickstart.md")

    output = "\n".join(session.outputs)
    assert "System check identified no issues" in output, output
    assert "Dune (Frank Herbert, 1965)" in output.splitlines(), output


PLUGIN_PROJECT = {
    "pytest.ini": """
        [pytest]
        DJANGO_SETTINGS_MODULE = settings
        pythonpath = .
        asyncio_mode = auto
        asyncio_default_fixture_loop_scope = function
    """,
    "settings.py": """
        SECRET_KEY = "not-a-secret"
        INSTALLED_APPS = [
            "django.contrib.auth", "django.contrib.contenttypes", "rest_framework", "rest_framework.authtoken",
            "mcp_django", "shop",
        ]
        DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
        ROOT_URLCONF = "urls"
        ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
        USE_TZ = True
        STATIC_URL = "static/"
    """,
    "urls.py": """
        from django.urls import include, path

        urlpatterns = [path("", include("mcp_django.urls"))]
    """,
    "shop/__init__.py": "",
    "shop/mcp.py": """
        import mcp_django


        @mcp_django.tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b


        @mcp_django.tool
        def divide(a: int, b: int) -> float:
            \"\"\"Divide a by b.\"\"\"
            return a / b
    """,
    "test_shop.py": """
        import pytest

        from mcp_django.testing import assert_mcp_error, assert_tool_error, assert_tool_result

        pytestmark = pytest.mark.django_db(transaction=True)


        async def test_add_in_memory(mcp_client, mcp_era, django_user_model):
            user = await django_user_model.objects.acreate(username=f"ada-{mcp_era}")
            client = mcp_client("/mcp", user=user, era=mcp_era)
            assert_tool_result(await client.call_tool("add", {"a": 1, "b": 2}), structured={"result": 3})
            assert_tool_error(await client.call_tool("divide", {"a": 1, "b": 0}), match="division by zero")
            with assert_mcp_error(-32602):
                await client.call_tool("nope")


        async def test_add_over_http(mcp_http_client, mcp_era, django_user_model):
            user = await django_user_model.objects.acreate(username=f"bob-{mcp_era}")
            async with mcp_http_client("/mcp", user=user, era=mcp_era) as client:
                assert_tool_result(await client.call_tool("add", {"a": 2, "b": 3}), structured={"result": 5})
    """,
}
"""A small project of the plugin's users: one app's tools, tested with the fixtures the plugin brings."""


def test_the_wheels_pytest_plugin_serves_a_small_projects_tests(dist: Path, tmp_path: Path) -> None:
    python = clean_virtualenv(tmp_path / "venv", the_wheel(dist))
    project = tmp_path / "project"
    for name, text in PLUGIN_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(textwrap.dedent(text).lstrip())

    output = run(python, "-m", "pytest", "-p", "no:cacheprovider", "-v", cwd=project)

    assert "mcp_django.testing.pytest_plugin" in run(
        python, "-m", "pytest", "--trace-config", "--co", "-q", cwd=project
    )
    assert "4 passed" in output, output


def run_page(session: Shell, page: str) -> None:
    for block in quickstart_blocks(page):
        if block.language == "python":
            session.write(block)
        elif block.language in ("bash", "sh", "shell"):
            session.run(block)
