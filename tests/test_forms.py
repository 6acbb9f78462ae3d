"""Django forms as elicitation questions (`ctx.elicit_form`): the schema a form becomes, and the rounds of
asking until the form validates, in both eras with the in-memory client (tests/live/test_form_questions.py
runs the official client)."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest
from django import forms
from django.utils import timezone

import mcp_django
from example_project.demo.models import Book
from mcp_django.forms import MAX_CHOICES, FormNotExpressible, requested_schema
from mcp_django.testing import MCPTestClient

ERAS = ["handshake", "stateless"]


def property_of(field: forms.Field) -> dict[str, Any]:
    form_class = type("OneFieldForm", (forms.Form,), {"answer": field})
    prop: dict[str, Any] = requested_schema(form_class())["properties"]["answer"]
    assert prop.pop("title") == "Answer"
    return prop


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (forms.CharField(min_length=2, max_length=20), {"type": "string", "minLength": 2, "maxLength": 20}),
        (forms.SlugField(), {"type": "string"}),
        (forms.UUIDField(), {"type": "string"}),
        (forms.EmailField(), {"type": "string", "format": "email"}),
        (forms.URLField(assume_scheme="https"), {"type": "string", "format": "uri"}),
        (forms.DateField(), {"type": "string", "format": "date"}),
        (forms.DateTimeField(), {"type": "string", "format": "date-time"}),
        (forms.TimeField(), {"type": "string"}),
        (forms.DurationField(), {"type": "string"}),
        (forms.IntegerField(min_value=1, max_value=5), {"type": "integer", "minimum": 1, "maximum": 5}),
        (forms.FloatField(min_value=0.5), {"type": "number", "minimum": 0.5}),
        (forms.DecimalField(max_value=decimal.Decimal("9.5")), {"type": "number", "maximum": 9.5}),
        (forms.BooleanField(), {"type": "boolean"}),
        (forms.NullBooleanField(), {"type": "boolean"}),
        (
            forms.ChoiceField(choices=[("", "---------"), ("s", "Small"), ("Big", [("l", "Large"), ("xl", "Huge")])]),
            {
                "type": "string",
                "oneOf": [
                    {"const": "s", "title": "Small"},
                    {"const": "l", "title": "Large"},
                    {"const": "xl", "title": "Huge"},
                ],
            },
        ),
        (
            forms.TypedChoiceField(choices=[(1, "One"), (2, "Two")], coerce=int),
            {"type": "string", "oneOf": [{"const": "1", "title": "One"}, {"const": "2", "title": "Two"}]},
        ),
        (
            forms.MultipleChoiceField(choices=[("r", "Read"), ("w", "Write")]),
            {
                "type": "array",
                "items": {"anyOf": [{"const": "r", "title": "Read"}, {"const": "w", "title": "Write"}]},
                "minItems": 1,
            },
        ),
        (
            forms.MultipleChoiceField(choices=[("r", "Read")], required=False),
            {"type": "array", "items": {"anyOf": [{"const": "r", "title": "Read"}]}},
        ),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, forms.Field) else "",
)
def test_each_flat_field_becomes_the_property_elicitation_defines_for_it(field, expected):
    assert property_of(field) == expected


class ProfileForm(forms.Form):
    """Tell us about yourself."""

    name = forms.CharField(label="Your name", help_text="As it should appear on the card", max_length=50)
    born = forms.DateField(required=False, initial=datetime.date(1815, 12, 10))
    size = forms.ChoiceField(choices=[("s", "Small"), ("l", "Large")], initial="l")
    newsletter = forms.BooleanField(required=False, initial=True)
    owner = forms.CharField(disabled=True, initial="staff")


def test_a_form_becomes_one_flat_schema_with_titles_descriptions_defaults_and_required_fields():
    assert requested_schema(ProfileForm(initial={"name": "Ada"})) == {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "maxLength": 50,
                "title": "Your name",
                "description": "As it should appear on the card",
                "default": "Ada",
            },
            "born": {"type": "string", "format": "date", "title": "Born", "default": "1815-12-10"},
            "size": {
                "type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
                "title": "Size",
                "default": "l",
            },
            "newsletter": {"type": "boolean", "title": "Newsletter", "default": True},
        },
        "required": ["name", "size"],
    }


def test_an_initial_value_that_is_not_a_choice_is_no_default():
    schema = requested_schema(ProfileForm(initial={"size": "xxl"}))
    assert "default" not in schema["properties"]["size"]


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (
            forms.FileField(),
            "OneFieldForm.answer (FileField) cannot be asked through elicitation: elicitation answers carry no files.",
        ),
        (
            forms.ImageField(),
            "OneFieldForm.answer (ImageField) cannot be asked through elicitation: elicitation answers carry no files.",
        ),
        (
            forms.SplitDateTimeField(),
            "OneFieldForm.answer (SplitDateTimeField) cannot be asked through elicitation: "
            "it is made of several fields: declare them one by one.",
        ),
        (
            forms.JSONField(),
            "OneFieldForm.answer (JSONField) cannot be asked through elicitation: "
            "elicitation answers are flat values, not JSON documents.",
        ),
        (
            forms.ComboField(fields=[forms.CharField(), forms.EmailField()]),
            "OneFieldForm.answer (ComboField) cannot be asked through elicitation: "
            "mcp_django does not know which flat JSON value it takes.",
        ),
        (
            forms.ChoiceField(choices=[(str(n), str(n)) for n in range(MAX_CHOICES + 1)]),
            "OneFieldForm.answer (ChoiceField) cannot be asked through elicitation: "
            "it offers more than 100 choices, and elicitation lists each one.",
        ),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, forms.Field) else "",
)
def test_a_field_elicitation_cannot_express_is_refused_naming_the_field_and_the_reason(field, message):
    with pytest.raises(FormNotExpressible) as raised:
        property_of(field)
    assert str(raised.value) == message


@pytest.mark.django_db
def test_model_choices_are_offered_by_primary_key_with_the_objects_as_titles():
    dune = Book.objects.create(title="Dune", author="Frank Herbert", year=1965)
    emma = Book.objects.create(title="Emma", author="Jane Austen", year=1815)
    field = forms.ModelChoiceField(Book.objects.filter(pk__in=[dune.pk, emma.pk]).order_by("title"), initial=emma)
    assert property_of(field) == {
        "type": "string",
        "oneOf": [{"const": str(dune.pk), "title": str(dune)}, {"const": str(emma.pk), "title": str(emma)}],
        "default": str(emma.pk),
    }


@pytest.mark.django_db
def test_a_model_multiple_choice_field_over_too_many_rows_is_refused():
    Book.objects.bulk_create(Book(title=f"Volume {n}", author="Anon", year=2000) for n in range(MAX_CHOICES + 1))
    with pytest.raises(FormNotExpressible) as raised:
        property_of(forms.ModelMultipleChoiceField(Book.objects.all()))
    assert str(raised.value) == (
        "OneFieldForm.answer (ModelMultipleChoiceField) cannot be asked through elicitation: "
        "it offers more than 100 choices, and elicitation lists each one."
    )


# ---------------------------------------------------------------- asking, in both eras

registry = mcp_django.Registry("form-questions")


class RatingForm(forms.Form):
    """How did you like the book?"""

    stars = forms.TypedChoiceField(choices=[(n, "★" * n) for n in range(1, 6)], coerce=int)
    pages_read = forms.IntegerField(min_value=0, required=False)
    comment = forms.CharField(max_length=20, required=False)

    def clean(self) -> dict[str, Any] | None:
        data = super().clean() or {}
        if data.get("stars") == 1 and not data.get("comment"):
            raise forms.ValidationError("Say why in a comment when you give one star.")
        return data


@registry.tool
async def rate(ctx: mcp_django.Context) -> str:
    """Ask for a rating."""
    answer = await ctx.elicit_form(RatingForm, initial={"stars": 3}, key="rating")
    if not answer.accepted:
        return f"No rating ({answer.action})."
    assert answer.form is not None
    return f"{answer.form.cleaned_data['stars']} stars, {answer.form.cleaned_data['comment'] or 'no comment'}"


@registry.tool
def rate_sync(ctx: mcp_django.Context) -> str:
    """Ask for a rating from sync code."""
    answer = ctx.elicit_form_sync(RatingForm, message="Rate it, please.")
    if answer.form is None:
        return f"No rating ({answer.action})."
    return f"{answer.form.cleaned_data['stars']} stars"


class Answers:
    """Answers the form questions in turn, and keeps what each question asked."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert method == "elicitation/create"
        # the 2026 era runs the tool again from the start: a question already answered is not asked again
        self.asked.append(params)
        return self.answers[len(self.asked) - 1]


def text_of(result: dict[str, Any]) -> str:
    text: str = result["content"][0]["text"]
    return text


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", ["rate", "rate_sync"])
async def test_an_answer_the_form_rejects_is_asked_again_with_the_forms_own_message(era, tool):
    answers = Answers(
        {"action": "accept", "content": {"stars": "9", "comment": "gripping"}},
        {"action": "accept", "content": {"stars": "4", "comment": "gripping"}},
    )
    result = await MCPTestClient(registry, era=era, on_input=answers).call_tool(tool)
    assert text_of(result).startswith("4 stars"), result
    first, second = answers.asked
    assert first["requestedSchema"]["required"] == ["stars"]
    assert first["requestedSchema"]["properties"]["stars"]["oneOf"][0] == {"const": "1", "title": "★"}
    message = "How did you like the book?" if tool == "rate" else "Rate it, please."
    assert second["message"] == (
        f"{message}\n\nPlease correct your answer:\n"
        "- Stars: Select a valid choice. 9 is not one of the available choices."
    )
    # what was right in the first answer is the next question's default
    assert second["requestedSchema"]["properties"]["comment"]["default"] == "gripping"


@pytest.mark.parametrize("era", ERAS)
async def test_the_forms_own_clean_speaks_in_the_next_question(era):
    answers = Answers(
        {"action": "accept", "content": {"stars": "1"}},
        {"action": "accept", "content": {"stars": "1", "comment": "too long by half"}},
    )
    result = await MCPTestClient(registry, era=era, on_input=answers).call_tool("rate")
    assert text_of(result) == "1 stars, too long by half"
    assert answers.asked[1]["message"].endswith("\n- Say why in a comment when you give one star.")


@pytest.mark.parametrize("era", ERAS)
async def test_values_of_the_wrong_type_get_the_fields_messages_and_extra_keys_are_ignored(era):
    answers = Answers(
        {"action": "accept", "content": {"stars": 4, "pages_read": "many", "comment": ["a"], "admin": True}},
        {"action": "accept", "content": {"stars": "4", "pages_read": 120.0, "admin": True}},
    )
    result = await MCPTestClient(registry, era=era, on_input=answers).call_tool("rate")
    assert not result.get("isError"), result
    assert text_of(result) == "4 stars, no comment"
    assert answers.asked[1]["message"].splitlines()[3:] == [
        "- Stars: Select a valid choice. 4 is not one of the available choices.",
        "- Pages read: Enter a whole number.",
        "- Comment: Enter a valid value.",
    ]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_question_is_an_answer_the_tool_sees(era, action):
    answers = Answers({"action": action})
    result = await MCPTestClient(registry, era=era, on_input=answers).call_tool("rate")
    assert text_of(result) == f"No rating ({action})."


@pytest.mark.parametrize("era", ERAS)
async def test_an_answer_still_invalid_after_the_last_round_is_a_tool_error_with_the_forms_messages(era):
    wrong = {"action": "accept", "content": {"stars": "0"}}
    answers = Answers(wrong, wrong, wrong)
    result = await MCPTestClient(registry, era=era, on_input=answers).call_tool("rate")
    assert result["isError"]
    assert text_of(result) == (
        "The answer to RatingForm was still invalid after 3 rounds: "
        "Stars: Select a valid choice. 0 is not one of the available choices."
    )
    assert len(answers.asked) == 3


class BookForm(forms.ModelForm):
    """Suggest a book for the catalogue."""

    class Meta:
        model = Book
        fields = ["title", "author", "year"]


@registry.tool
def suggest(ctx: mcp_django.Context) -> str:
    """Ask for a book and add it."""
    answer = ctx.elicit_form_sync(BookForm)
    if answer.form is None:
        return "Nothing added."
    book = answer.form.save()
    return f"Added #{book.pk}"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("era", ERAS)
async def test_a_model_forms_save_adds_the_answered_row_and_nothing_the_form_does_not_ask(era):
    answers = Answers(
        {"action": "accept", "content": {"title": "Kindred", "author": "Octavia Butler", "year": -5}},
        {"action": "accept", "content": {"title": "Kindred", "author": "Octavia Butler", "year": 1979, "summary": "x"}},
    )
    result = await MCPTestClient(registry, era=era, on_input=answers).call_tool("suggest")
    book = await Book.objects.aget(title="Kindred")
    assert text_of(result) == f"Added #{book.pk}"
    assert (book.author, book.year, book.summary) == ("Octavia Butler", 1979, "")
    assert answers.asked[0]["requestedSchema"]["properties"]["year"] == {
        "type": "integer",
        "minimum": 0,
        "title": "Year",
    }
    assert "Ensure this value is greater than or equal to 0." in answers.asked[1]["message"]


class UploadForm(forms.Form):
    name = forms.CharField()
    attachment = forms.FileField()


@registry.tool
async def upload(ctx: mcp_django.Context) -> str:
    """Ask for a file, which elicitation cannot."""
    await ctx.elicit_form(UploadForm)
    return "never"


async def test_a_form_elicitation_cannot_express_fails_the_call_before_anything_is_asked():
    answers = Answers()
    result = await MCPTestClient(registry, on_input=answers).call_tool("upload")
    assert result["isError"]
    assert "UploadForm.attachment (FileField) cannot be asked through elicitation" in text_of(result)
    assert answers.asked == []


class WhenForm(forms.Form):
    at = forms.DateTimeField()
    lasts = forms.DurationField()
    starts = forms.TimeField()
    token = forms.UUIDField()
    price = forms.DecimalField()


def test_initial_dates_durations_uuids_and_decimals_become_json_defaults():
    at = datetime.datetime(2026, 7, 28, 9, 30, tzinfo=datetime.UTC)
    initial = {
        "at": at,
        "lasts": datetime.timedelta(hours=1, minutes=5),
        "starts": datetime.time(9, 30),
        "token": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        "price": decimal.Decimal("9.50"),
    }
    defaults = {
        name: prop["default"] for name, prop in requested_schema(WhenForm(initial=initial))["properties"].items()
    }
    assert defaults == {
        "at": timezone.localtime(at).isoformat(),
        "lasts": "01:05:00",
        "starts": "09:30:00",
        "token": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        "price": 9.5,
    }


@pytest.mark.django_db
def test_a_model_forms_instance_gives_the_defaults_of_the_question():
    book = Book.objects.create(title="Kindred", author="Octavia Butler", year=1979)
    properties = requested_schema(BookForm(instance=book, initial=None))["properties"]
    assert {name: prop["default"] for name, prop in properties.items()} == {
        "title": "Kindred",
        "author": "Octavia Butler",
        "year": 1979,
    }
