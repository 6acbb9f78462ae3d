"""Unique words for the live tests' tool arguments: letters only. The demo redacts tool arguments, and a run of
nine or more digits is a phone number to it: a hexadecimal id made only of digits (about one in a hundred of ten
characters) came back `[REDACTED]` and failed whichever test drew it."""

from __future__ import annotations

import uuid

_LETTERS_FOR_DIGITS = str.maketrans("0123456789", "ghijklmnop")


def unique_word(length: int = 12) -> str:
    """A word of `length` lowercase letters, unique to this call."""
    return uuid.uuid4().hex[:length].translate(_LETTERS_FOR_DIGITS)
