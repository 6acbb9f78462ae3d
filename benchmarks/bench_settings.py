"""Settings of the in-process benchmarks: the benchmark project's (no optional extras), routed to two endpoints.

`make bench` runs these scripts in `.venv-bench`, which has the `bench` extra only; the example project
needs the optional extras (OAuth, tasks), so they do not use its settings. The database is a temporary
file unless ``BENCH_DB`` names one.
"""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("BENCH_DB", str(Path(tempfile.mkdtemp(prefix="mcp-bench-")) / "db.sqlite3"))

from benchmarks.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.bench_urls"
MCP_DJANGO = {**MCP_DJANGO, "INTERCEPTORS": []}  # noqa: F405
