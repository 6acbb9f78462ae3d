"""The example project's translation catalogues, compiled for the tests: the `.po` files are committed, the
`.mo` files are not (`make demo` runs `compilemessages`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

LOCALE = Path(__file__).resolve().parents[2] / "example_project" / "demo" / "locale"


def compile_demo_catalogues() -> bool:
    """Compile each demo `.po` whose `.mo` is missing or older, with GNU gettext's `msgfmt`; False without it."""
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        return False
    for po in LOCALE.glob("*/LC_MESSAGES/*.po"):
        mo = po.with_suffix(".mo")
        if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        # Written beside, then renamed: a test of another worker never reads half a catalogue.
        handle, partial = tempfile.mkstemp(dir=po.parent, suffix=".mo.part")
        os.close(handle)
        subprocess.run([msgfmt, "--check", "-o", partial, str(po)], check=True, timeout=30)
        os.replace(partial, mo)
    return True
