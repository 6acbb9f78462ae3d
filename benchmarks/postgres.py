"""The token + audit rows on PostgreSQL (issue 40): a throwaway cluster for the run, never the system's.

`database_env` starts a cluster the way the production tests do (`tests/services_support.py`: Debian's
`initdb` under /usr/lib/postgresql/*/bin, a temporary directory, a free loopback port, trust authentication,
durability off), creates and migrates the benchmark database in it, and returns the environment a server
process serves it with (`BENCH_DATABASE_URL`, read by `benchmarks/settings.py`). The cluster stops when the
run's `ExitStack` closes. The database server's own CPU is not the server's: it is another process, as in a
deployment, so the rows' CPU per call is the Python process's alone.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

from tests.services_support import ServiceUnavailable, postgres_cluster

ROOT = Path(__file__).resolve().parent.parent
DATABASE = "bench"


def database_env(env: dict[str, str], stack: contextlib.ExitStack) -> dict[str, str] | str:
    """The environment of a server on a fresh, migrated PostgreSQL database; or why there is none."""
    try:
        cluster = stack.enter_context(postgres_cluster("bench"))
    except ServiceUnavailable as missing:
        return f"PostgreSQL unavailable: {str(missing).splitlines()[0]}"
    cluster.execute(f'CREATE DATABASE "{DATABASE}"')
    served = {**env, "BENCH_DATABASE_URL": cluster.url(DATABASE)}
    subprocess.run([sys.executable, "-m", "benchmarks.prepare"], cwd=ROOT, env=served, check=True)
    return served
