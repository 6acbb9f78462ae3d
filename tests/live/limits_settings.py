"""The example project's settings with the request limits from `MCP_TEST_LIMITS` (JSON), for the limits tests."""

import json
import os

from example_project.settings import *  # noqa: F403  # the example project, unchanged but for the limits
from example_project.settings import MCP_DJANGO

MCP_DJANGO = {**MCP_DJANGO, **json.loads(os.environ.get("MCP_TEST_LIMITS", "{}"))}
