"""The wire types (mcp-types) load with the first message served, and the constants spelled here are theirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mcp_types.jsonrpc
import mcp_types.version

from mcp_django.protocol import jsonrpc, versions

CODES = (
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "CONNECTION_CLOSED",
    "REQUEST_TIMEOUT",
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
)


def test_the_error_codes_and_protocol_versions_spelled_here_are_mcp_types_own() -> None:
    assert {name: getattr(jsonrpc, name) for name in CODES} == {
        name: getattr(mcp_types.jsonrpc, name) for name in CODES
    }
    assert versions.HANDSHAKE_VERSIONS == mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS
    assert versions.STATELESS_VERSIONS == mcp_types.version.MODERN_PROTOCOL_VERSIONS


def test_importing_the_protocol_core_loads_no_wire_types_until_a_handler_is_made() -> None:
    script = (
        "import sys\n"
        "import mcp_django.protocol, mcp_django.protocol.handler, mcp_django.protocol.errors\n"
        "before = sorted(m for m in sys.modules if m.split('.')[0] == 'mcp_types')\n"
        "from tests.protocol.backends import EchoBackend\n"
        "mcp_django.protocol.MessageHandler(EchoBackend(), server_info={'name': 'x', 'version': '1'})\n"
        "print(before, 'mcp_types.methods' in sys.modules)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.stdout.strip() == "[] True", completed.stdout + completed.stderr
