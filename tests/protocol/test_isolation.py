"""The protocol core never imports Django (DESIGN.md decision 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_importing_and_using_the_protocol_core_loads_no_django():
    script = (
        "import asyncio, sys\n"
        "from mcp_django.protocol import MessageHandler, Connection\n"
        "from tests.protocol.backends import EchoBackend\n"
        "h = MessageHandler(EchoBackend(), server_info={'name': 'x', 'version': '1'})\n"
        "message = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'}\n"
        "reply = asyncio.run(h.handle(message, Connection(sessions=False)))\n"
        "assert reply['result']['tools'], reply\n"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "print(loaded)\n"
        "sys.exit(1 if loaded else 0)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
