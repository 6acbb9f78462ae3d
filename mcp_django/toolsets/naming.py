"""How toolsets name their tools: one rule for `ModelToolset` and `APIToolset`, the same in every language.

A model's tools are named after its verbose names as its source code spells them, read with translation
switched off (`gettext_lazy("diaper change")` is `diaper_change` whatever `LANGUAGE_CODE` or the active
language is): `list_diaper_changes`, `get_diaper_change`. A verbose name that leaves nothing once
reduced to ASCII letters and digits falls back to the model's class name (`diaperchange`, plural
`diaperchanges`), both nouns from the same source so they always agree. An explicit `basename` names
the tools and `basename + "s"` the list, unless `plural` is given too. docs/toolsets.md, "Tool names".
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from django.utils import translation


def slug(text: str) -> str:
    """`text` as a name part: accents dropped, lower case, every run of other characters one `_`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")


def model_nouns(model: Any) -> tuple[str, str]:
    """A model's nouns for tool names, singular and plural, from its untranslated verbose names."""
    opts = model._meta
    with translation.override(None):  # the source strings, not the active language's translations
        singular, plural = slug(str(opts.verbose_name)), slug(str(opts.verbose_name_plural))
    if singular and plural and singular != plural:
        return singular, plural
    return opts.model_name, f"{opts.model_name}s"


def tool_nouns(basename: str, plural: str, default: tuple[str, str]) -> tuple[str, str]:
    """The nouns a toolset's tools are named with: `basename` and `plural` when set, else `default`'s."""
    if basename:
        return basename, plural or f"{basename}s"
    return default[0], plural or default[1]


def pk_argument(model: Any, lookup: str) -> str:
    """The argument that names one row: the primary key's own name (`id`) for DRF's `pk`, else `lookup`."""
    return model._meta.pk.name if model is not None and lookup == "pk" else lookup
