"""An app whose `mcp.py` raises halfway (tests/toolsets/test_checks.py, check E261)."""
