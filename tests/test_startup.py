"""What a management command pays for mcp_django (issue 34): `check` loads no wire types, and on the quickstart's
project no pydantic at all."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOADED = (
    "import sys\n"
    "from django.core.management import execute_from_command_line\n"
    "execute_from_command_line(['manage.py', 'check'])\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] in {prefixes!r}))\n"
)


def loaded_by_check(folder: Path, env: dict[str, str], *prefixes: str) -> list[str]:
    """The modules under `prefixes` that `manage.py check` in `folder` has loaded when it is done."""
    completed = subprocess.run(
        [sys.executable, "-c", LOADED.format(prefixes=prefixes)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    return list(eval(completed.stdout.splitlines()[-1]))  # a list of strings, printed by the script above


def test_manage_py_check_on_the_example_project_does_not_load_the_wire_types() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "example_project.settings"}
    assert loaded_by_check(ROOT, env, "mcp_types") == []


def test_manage_py_check_on_the_quickstart_s_project_loads_no_pydantic(tmp_path: Path) -> None:
    # The project benchmarks/startup.py measures (its `mcp` variant: two tools with plain annotations, the admin,
    # the URLs): their definitions, the interceptors' option models and the bus's `Empty` wait for first use,
    # and the modules `check` loads import pydantic where they use it.
    spec = importlib.util.spec_from_file_location("startup_benchmark", ROOT / "benchmarks" / "startup.py")
    assert spec is not None
    assert spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    folder = benchmark.make_project(tmp_path, "mcp")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "mysite.settings"}
    assert loaded_by_check(folder, env, "pydantic", "pydantic_core") == []
