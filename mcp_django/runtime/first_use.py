"""`first_use(module, name)`: a name imported on its first use and then kept, for code on the hot path.

Some of the runtime's per-call code needs what it cannot import at its module's top: `mcp_django.conf`
and Django's database layer (the runtime is imported where Django may not be set up: the protocol core
reaches it), the package's models (they need the app registry, ready only later). An import statement
inside the function would do, but it runs on every call and costs several µs even for a module long
loaded (8 to 10 µs each on the benchmark machine, benchmarks/README.md, issue 40); `first_use` imports
once and answers later calls from `functools.cache` (some 50 ns):

```python
_record_model = first_use("mcp_django.models", "ToolCallRecord")
...
ToolCallRecord = _record_model()
```

tests/test_architecture.py reads a `first_use("<module>", ...)` call as an import of `<module>`: the layer
rules and the no-cycle rule hold for these imports as for the import statements.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any


def first_use(module: str, name: str) -> Callable[[], Any]:
    """A function answering `module.name`, imported on its first call (not before), the same object after."""

    @functools.cache
    def imported() -> Any:
        return getattr(importlib.import_module(module), name)

    imported.__qualname__ = imported.__name__ = f"first_use({module}.{name})"
    return imported
