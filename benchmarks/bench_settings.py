"""The example project's settings, routed to the benchmark's two endpoints."""

from example_project.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.bench_urls"
MCP_DJANGO = {**MCP_DJANGO, "INTERCEPTORS": []}  # noqa: F405
