"""The demo's Django forms: questions its tools ask the user through elicitation (docs/forms.md)."""

from __future__ import annotations

from typing import Any

from django import forms

STARS = [
    (5, "★★★★★ Loved it"),
    (4, "★★★★ Liked it"),
    (3, "★★★ It was fine"),
    (2, "★★ Not for me"),
    (1, "★ Disliked it"),
]


class RatingForm(forms.Form):
    """How did you like the book?"""

    stars = forms.TypedChoiceField(choices=STARS, coerce=int, label="Your rating")
    comment = forms.CharField(
        max_length=280, required=False, help_text="A sentence for other readers (required for one star)"
    )

    def clean(self) -> dict[str, Any] | None:
        data = super().clean() or {}
        if data.get("stars") == 1 and not data.get("comment"):
            raise forms.ValidationError("Please say in a comment what you disliked.")
        return data
