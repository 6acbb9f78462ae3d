"""How a call runs: threads for sync code, time limits, units of work, results, notifications."""
