"""Hypothesis profiles of the fuzz tests: `ci` (the default, a few thousand cases in all, part of `make test`),
`quick` (`make quick`: a few hundred) and `fuzz` (`make fuzz`: at least 125,000 cases in all).
`MCP_FUZZ_PROFILE` picks one."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILES = {"ci": 600, "quick": 100, "fuzz": int(os.environ.get("MCP_FUZZ_CASES", "25000"))}
"""Cases per test: five Hypothesis tests, 3,000 cases in `make test`, 500 in `make quick`, 125,000 in `make fuzz`
(FUZZ_CASES)."""

for name, cases in PROFILES.items():
    settings.register_profile(
        name,
        max_examples=cases,
        deadline=None,  # the machine is shared: no case is too slow, only wrong
        database=None,  # nothing written to the checkout; a failure prints its reproduction blob
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    )
settings.load_profile(os.environ.get("MCP_FUZZ_PROFILE", "ci"))
