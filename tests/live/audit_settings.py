"""The example project's settings with the audit trail's settings from `MCP_TEST_AUDIT` (JSON), for the fault tests."""

import json
import os

from example_project.settings import *  # noqa: F403  # the example project, unchanged but for the audit keys
from example_project.settings import MCP_DJANGO

MCP_DJANGO = {**MCP_DJANGO, **json.loads(os.environ.get("MCP_TEST_AUDIT", "{}"))}
