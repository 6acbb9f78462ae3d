"""What a management command pays for mcp_django: `check` on the example project loads no wire types."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_manage_py_check_on_the_example_project_does_not_load_the_wire_types() -> None:
    script = (
        "import sys\n"
        "from django.core.management import execute_from_command_line\n"
        "execute_from_command_line(['manage.py', 'check'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp_types'))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "example_project.settings"}
    root = Path(__file__).resolve().parent.parent
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[-1] == "[]", completed.stdout
