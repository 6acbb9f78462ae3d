"""Django forms as elicitation questions: `answer = await ctx.elicit_form(RatingForm)`.

A `Form` or `ModelForm` already says what a question asks: its fields, their labels, help texts,
choices, initial values and validators, and the error messages a wrong answer gets. This module turns
a form into elicitation's flat `requestedSchema`, binds the client's answer to the form, and asks
again, with the form's own error messages, while the answer does not validate.

The asking itself is `ctx.elicit`'s, so both eras work as elicitation does: a request pushed on the
call's stream in the handshake era, `input_required` rounds in 2026-07-28 (where the tool runs again
from the start, and every round asked before finds its answer in the `requestState`).

Elicitation answers are flat JSON values. A field that has no such value (a file, a field made of
several fields, a JSON document, a choice among more than `MAX_CHOICES`) cannot be asked: building
the question raises `FormNotExpressible`, naming the field and the reason, before anything is asked.

This module imports Django's forms; `mcp_django.context` imports it only when a form is asked.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, Literal, TypeVar

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ImproperlyConfigured, ValidationError
from django.utils import timezone
from django.utils.translation import gettext

from mcp_django.exceptions import ToolError
from mcp_django.protocol.context import RequestContext
from mcp_django.runtime.executor import run_sync

F = TypeVar("F", bound=forms.BaseForm)

MAX_CHOICES: Final = 100
"""The most choices one field may offer: elicitation lists every one of them in the question."""

DEFAULT_ROUNDS: Final = 3
"""How many answers `elicit_form` takes before it gives up on an answer that does not validate."""

Action = Literal["accept", "decline", "cancel"]


class FormNotExpressible(ImproperlyConfigured):
    """A form has a field that elicitation's flat schema cannot ask for (the message names it and why)."""


@dataclass(frozen=True)
class FormAnswer(Generic[F]):
    """What the user did with a form question.

    Attributes:
        action: `"accept"` (the form is bound and valid), `"decline"` or `"cancel"`, as the
            client's `ElicitResult` said.
        form: the bound, valid form when accepted; None otherwise.
    """

    action: Action
    form: F | None = None

    @property
    def accepted(self) -> bool:
        """True when the user answered and the answer validated."""
        return self.action == "accept" and self.form is not None


# ---------------------------------------------------------------- the question


def requested_schema(form: forms.BaseForm) -> dict[str, Any]:
    """The elicitation `requestedSchema` that asks for `form`'s fields (disabled fields are not asked).

    Labels become titles, help texts descriptions, initial values defaults, choices titled enums
    (`oneOf`, or `items.anyOf` for a multiple-choice field), and length and value limits `minLength`,
    `maxLength`, `minimum` and `maximum`. Call it where the database may be used: a
    `ModelChoiceField` reads its choices.

    Raises:
        FormNotExpressible: a field has no flat JSON value elicitation can ask for.
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    for bound in form:
        field = bound.field
        if field.disabled:
            continue
        prop = _property(type(form).__name__, bound.name, field)
        prop["title"] = str(bound.label)
        if field.help_text:
            prop["description"] = str(field.help_text)
        default = _default(prop, _prepared(field, bound.initial))
        if default is not None:
            prop["default"] = default
        properties[bound.name] = prop
        # A NullBooleanField's "required" still accepts "unknown": the key may be left out.
        if field.required and not isinstance(field, forms.NullBooleanField):
            required.append(bound.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


_FORMATS: Final[tuple[tuple[type[forms.Field], str], ...]] = (
    (forms.EmailField, "email"),
    (forms.URLField, "uri"),
    (forms.DateTimeField, "date-time"),
    (forms.DateField, "date"),
)

_NOT_FLAT: Final[tuple[tuple[type[forms.Field], str], ...]] = (
    (forms.FileField, "elicitation answers carry no files"),
    (forms.MultiValueField, "it is made of several fields: declare them one by one"),
    (forms.JSONField, "elicitation answers are flat values, not JSON documents"),
)


def _property(form_name: str, name: str, field: forms.Field) -> dict[str, Any]:
    """The schema of one field, without its title, description and default."""

    def refuse(reason: str) -> FormNotExpressible:
        return FormNotExpressible(
            f"{form_name}.{name} ({type(field).__name__}) cannot be asked through elicitation: {reason}."
        )

    for kind, reason in _NOT_FLAT:
        if isinstance(field, kind):
            raise refuse(reason)
    if isinstance(field, forms.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, (forms.MultipleChoiceField, forms.ModelMultipleChoiceField)):
        options = _options(field.choices, refuse)
        prop: dict[str, Any] = {"type": "array", "items": {"anyOf": options}}
        if field.required:
            prop["minItems"] = 1
        return prop
    if isinstance(field, forms.ChoiceField):
        return {"type": "string", "oneOf": _options(field.choices, refuse)}
    if isinstance(field, forms.IntegerField):
        prop = {"type": "number" if isinstance(field, (forms.FloatField, forms.DecimalField)) else "integer"}
        for key, limit in (("minimum", field.min_value), ("maximum", field.max_value)):
            if limit is not None:
                prop[key] = float(limit) if isinstance(limit, decimal.Decimal) else limit
        return prop
    for kind, format_ in _FORMATS:
        if isinstance(field, kind):
            return {"type": "string", "format": format_}
    if isinstance(field, forms.CharField):
        prop = {"type": "string"}
        for key, length in (("minLength", field.min_length), ("maxLength", field.max_length)):
            if length is not None:
                prop[key] = length
        return prop
    if isinstance(field, (forms.TimeField, forms.DurationField)):
        return {"type": "string"}
    raise refuse("mcp_django does not know which flat JSON value it takes")


def _options(choices: Any, refuse: Callable[[str], FormNotExpressible]) -> list[dict[str, str]]:
    """Django choices (groups flattened, the blank choice left out) as `{"const", "title"}` options."""
    options: list[dict[str, str]] = []
    for value, label in choices:
        group = label if isinstance(label, (list, tuple)) else [(value, label)]
        for member, title in group:
            if member in ("", None) or str(member) == "":
                continue
            if len(options) == MAX_CHOICES:
                raise refuse(f"it offers more than {MAX_CHOICES} choices, and elicitation lists each one")
            options.append({"const": str(member), "title": str(title)})
    return options


def _prepared(field: forms.Field, value: Any) -> Any:
    """The initial value as the field would show it, an aware datetime in the current time zone with its offset.

    (`prepare_value` would make it naive, as a widget shows it; a `date-time` needs the offset.)
    """
    if isinstance(value, datetime.datetime) and timezone.is_aware(value):
        return timezone.localtime(value)
    return field.prepare_value(value)


def _default(prop: Mapping[str, Any], value: Any) -> Any:
    """A field's prepared initial value as the JSON default its schema takes, or None for none."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, (datetime.date, datetime.time)):
        value = value.isoformat()
    elif isinstance(value, decimal.Decimal):
        value = float(value) if prop["type"] == "number" else str(value)
    elif prop["type"] == "array" and isinstance(value, (list, tuple)):
        value = [str(item) for item in value]
    elif prop["type"] == "string" and not isinstance(value, str):
        value = str(value)
    return value if _fits(prop, value) and _offered(prop, value) else None


def _offered(prop: Mapping[str, Any], value: Any) -> bool:
    """True when `value` is among the choices the schema offers (always, for a field without choices)."""
    options = prop.get("oneOf") or prop.get("items", {}).get("anyOf")
    if options is None:
        return True
    consts = {option["const"] for option in options}
    return all(item in consts for item in value) if isinstance(value, list) else value in consts


# ---------------------------------------------------------------- the answer


def _fits(prop: Mapping[str, Any], value: Any) -> bool:
    """True when `value` has the JSON type the field's schema asks for (None, no answer, always fits)."""
    kind = prop["type"]
    if value is None:
        return True
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return kind == "number" or isinstance(value, int) or value.is_integer()


def _bound(form_class: type[F], kwargs: Mapping[str, Any], schema: Mapping[str, Any], content: Any) -> F:
    """The form bound to the client's answer and validated.

    Keys the form does not ask for are ignored, as a form ignores unknown POST data; a value of the
    wrong JSON type is left out and gets the field's own "invalid" message, never a crash.
    """
    answer = content if isinstance(content, Mapping) else {}
    properties = schema["properties"]
    data: dict[str, Any] = {}
    mistyped: dict[str, Any] = {}
    for name, prop in properties.items():
        if name in answer and answer[name] is not None:
            value = answer[name]
            if not _fits(prop, value):
                mistyped[name] = value
            else:
                data[name] = int(value) if prop["type"] == "integer" else value
    form = form_class(data=data, **kwargs)
    form.is_valid()
    for name, value in mistyped.items():
        field = form.fields[name]
        form.errors.pop(name, None)
        form.add_error(name, ValidationError(_invalid_message(field, properties[name]), params={"value": value}))
    return form


def _invalid_message(field: forms.Field, prop: Mapping[str, Any]) -> str:
    """The field's own message for a value it cannot take."""
    keys = ("invalid_list", "invalid_choice") if prop["type"] == "array" else ("invalid", "invalid_choice")
    for key in keys:
        if key in field.error_messages:
            return str(field.error_messages[key])
    return gettext("Enter a valid value.")


def _errors_of(form: forms.BaseForm) -> list[str]:
    """The form's errors, one line per message, each after its field's label."""
    lines: list[str] = []
    for name, messages in form.errors.items():
        label = "" if name == NON_FIELD_ERRORS else f"{form[name].label}: "
        lines.extend(f"{label}{message}" for message in messages)
    return lines


def _again(message: str, form: forms.BaseForm) -> str:
    """The question asked again: the original message, then what to correct."""
    corrections = "\n".join(f"- {line}" for line in _errors_of(form))
    return f"{message}\n\nPlease correct your answer:\n{corrections}"


def _with_answers(schema: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """`schema` with the previous answer's well-formed values as defaults, so only mistakes need retyping."""
    answer = content if isinstance(content, Mapping) else {}
    properties = {}
    for name, prop in schema["properties"].items():
        value = answer.get(name)
        if value is not None and _fits(prop, value) and _offered(prop, value):
            prop = {**prop, "default": value}
        properties[name] = prop
    return {**schema, "properties": properties}


def _question(form_class: type[F], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return requested_schema(form_class(**kwargs))


def _default_message(form_class: type[forms.BaseForm]) -> str:
    """The first line of the form class's own docstring, or a generic request."""
    doc = form_class.__dict__.get("__doc__")
    return doc.strip().splitlines()[0] if doc and doc.strip() else "Please fill in this form."


async def elicit_form(
    request: RequestContext,
    form_class: type[F],
    *,
    message: str | None = None,
    initial: Mapping[str, Any] | None = None,
    form_kwargs: Mapping[str, Any] | None = None,
    key: str | None = None,
    rounds: int = DEFAULT_ROUNDS,
) -> FormAnswer[F]:
    """Ask the user to fill in `form_class` and return their answer, bound and valid.

    Args:
        request: the request asking (`ctx.request`).
        form_class: a `Form` or `ModelForm` class.
        message: the question; by default the first line of the form's docstring.
        initial: initial values, as the form's `initial=` (they become the schema's defaults).
        form_kwargs: more arguments for the form's constructor (`instance=` for a `ModelForm`).
        key: the input key of the first round (`key.2`, `key.3`... for the next ones); by default
            the request's own counter, as for `ctx.elicit`.
        rounds: how many answers to take before giving up on one that does not validate.

    Raises:
        FormNotExpressible: the form has a field elicitation cannot ask for.
        ToolError: the answer still did not validate after `rounds` answers.
        MissingClientCapability: the client did not declare elicitation.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    kwargs = {**(form_kwargs or {}), "initial": initial}
    schema = await run_sync(_question, form_class, kwargs)
    message = message or _default_message(form_class)
    text, asked = message, schema
    for round_ in range(1, rounds + 1):
        result = await request.elicit(text, asked, key=key if key is None or round_ == 1 else f"{key}.{round_}")
        answer = result if isinstance(result, Mapping) else {}
        if answer.get("action") in ("decline", "cancel"):
            return FormAnswer(answer["action"])
        form = await run_sync(_bound, form_class, kwargs, schema, answer.get("content"))
        if not form.errors:
            return FormAnswer("accept", form)
        text, asked = _again(message, form), _with_answers(schema, answer.get("content"))
    summary = "; ".join(_errors_of(form))
    raise ToolError(f"The answer to {form_class.__name__} was still invalid after {rounds} rounds: {summary}")
