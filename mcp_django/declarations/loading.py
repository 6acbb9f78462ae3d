"""Loading the apps' declaration modules (`mcp.py`) without letting one mistake stop the site.

Django's `autodiscover_modules` re-raises whatever an app's module raises, so one broken `mcp.py` would
stop `check`, `migrate` and every server from starting. Here each app's module is imported on its own;
an exception is logged with its traceback and kept in `load_failures`, which a system check reports
(`mcp_django.E261`): the site starts, and the declarations the module did not reach are left out.
Toolsets record what fails while they build in the same way (`Toolset.failed`, `mcp_django.E260`).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import traceback
from collections.abc import Iterable
from typing import Any

logger = logging.getLogger("mcp_django")

Failure = tuple[str, str, str]
"""`(check id, message, hint)`, as `Toolset.problems` holds them."""

load_failures: list[Failure] = []
"""What the apps' declaration modules raised while they loaded, for the system checks (E261)."""


def load_declaration_modules(app_configs: Iterable[Any], module_name: str) -> None:
    """Import `<app>.<module_name>` for every app that has one; a failure is recorded, not raised."""
    from django.utils.module_loading import module_has_submodule

    for app_config in app_configs:
        if not module_has_submodule(app_config.module, module_name):
            continue
        dotted = f"{app_config.name}.{module_name}"
        try:
            importlib.import_module(dotted)
        except Exception as error:
            sys.modules.pop(dotted, None)  # half-run: a later import must not take it for loaded
            where = source_file(dotted)
            logger.exception("%s raised while loading; the declarations after the failure are left out", where)
            load_failures.append(
                (
                    "mcp_django.E261",
                    f"{short_path(where, 40)} raised {type(error).__name__} while loading.",
                    f"Fix it ({failure_text(error)}); what follows it is left out.",
                )
            )


def source_file(module: str) -> str:
    """The file of a module (relative to the working directory when under it), or its dotted name."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    origin = str(getattr(spec, "origin", None) or "")
    if not origin:
        return module
    relative = os.path.relpath(origin)
    return origin if relative.startswith("..") else relative


def short_path(path: str, limit: int) -> str:
    """`path`, keeping its end when it is longer than `limit` characters."""
    return path if len(path) <= limit else f"...{path[-(limit - 3) :]}"


def failure_text(error: BaseException, limit: int = 90) -> str:
    """`"name 'x' is not defined, at shop/mcp.py:12"`: the error and the line of the innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    text = str(error).replace("\n", " ") or type(error).__name__
    if len(text) > limit:
        text = f"{text[: limit - 3]}..."
    if not frames:
        return text
    last = frames[-1]
    relative = os.path.relpath(last.filename)
    return f"{text}, at {short_path(last.filename if relative.startswith('..') else relative, 50)}:{last.lineno}"
