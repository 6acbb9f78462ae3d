"""The toolsets' system checks (E110-E119, E260, E261, W110, W260): each mistake, with its whole message and hint."""

from __future__ import annotations

import gc
import importlib
import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import django_filters
import pytest
from django.contrib.auth import get_user_model
from django.core.checks import CheckMessage, Error, Warning
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import viewsets

from example_project.demo.api import BookSerializer
from example_project.demo.models import Book
from mcp_django.declarations.loading import load_declaration_modules, load_failures
from mcp_django.registry import Registry, all_registries
from mcp_django.toolsets import APIToolset, ModelToolset, Toolset, all_toolsets, base
from mcp_django.toolsets.checks import (
    check_declaration_modules,
    check_tool_names,
    check_toolsets,
    tool_name_collisions,
    toolset_messages,
)


@pytest.fixture(autouse=True)
def collect() -> Iterator[None]:
    yield
    gc.collect()  # broken toolsets leave all_toolsets() before other tests run the checks


def messages(toolset_class: type[ModelToolset]) -> list[tuple[str, str, str | None]]:
    found: list[CheckMessage] = toolset_messages(toolset_class())
    return [(message.id or "", message.msg, message.hint) for message in found]


def test_the_project_s_toolsets_pass_the_checks() -> None:
    assert check_toolsets() == []
    project = [toolset for toolset in all_toolsets() if type(toolset).__module__.startswith("example_project.")]
    assert project
    assert tool_name_collisions(project) == []
    assert check_declaration_modules() == []


def test_a_model_that_is_not_a_model_is_e110() -> None:
    class NoModel(ModelToolset):
        fields = ["id"]

    assert messages(NoModel) == [
        ("mcp_django.E110", "NoModel.model is not a Django model.", "Set model to a model class, e.g. model = Book.")
    ]


def test_fields_naming_a_field_the_model_lacks_is_e111() -> None:
    class Typo(ModelToolset):
        model = Book
        fields = ["id", "titel"]

    assert messages(Typo) == [
        (
            "mcp_django.E111",
            "Typo.fields: Book has no concrete field 'titel'.",
            "Name concrete fields of the model, or use a serializer for others.",
        )
    ]


def test_neither_fields_nor_a_serializer_is_e112() -> None:
    class Nothing(ModelToolset):
        model = Book

    assert messages(Nothing) == [
        (
            "mcp_django.E112",
            "Nothing sets neither fields nor serializer_class.",
            'List the fields a row shows (or "__all__"), or name a serializer.',
        )
    ]


def test_a_filter_naming_a_field_the_model_lacks_is_e113_and_its_tool_still_serves() -> None:
    class BadFilter(ModelToolset):
        model = Book
        fields = ["id"]
        filters = {"publisher__name": ["exact"], "year__decade": ["exact"], "title": ["icontains"]}

    assert messages(BadFilter) == [
        (
            "mcp_django.E113",
            "BadFilter: filter 'publisher__name': Book has no field 'publisher'.",
            "Name a field of the model, or a relation's field with __.",
        ),
        (
            "mcp_django.E113",
            "BadFilter: filter 'year__decade': Book.year is not a relation.",
            "Name a field of the model, or a relation's field with __.",
        ),
    ]
    schema = BadFilter().tools["list_books"].input_schema
    assert "title__icontains" in schema["properties"]


def test_an_unsupported_lookup_is_e114() -> None:
    class BadLookup(ModelToolset):
        model = Book
        fields = ["id"]
        filters = {"title": ["regex", "icontains"]}

    assert messages(BadLookup) == [
        (
            "mcp_django.E114",
            "BadLookup: filter 'title': lookup 'regex' is not supported.",
            "Use exact, iexact, (i)contains, (i)startswith, (i)endswith, gt(e), lt(e), in or isnull.",
        )
    ]


def test_ordering_by_a_field_the_model_lacks_is_e115() -> None:
    class BadOrdering(ModelToolset):
        model = Book
        fields = ["id"]
        ordering = ["-published"]

    assert messages(BadOrdering) == [
        (
            "mcp_django.E115",
            "BadOrdering: ordering '-published': Book has no field 'published'.",
            "Name a field of the model.",
        )
    ]


def test_an_unknown_action_or_lookup_field_is_e116() -> None:
    class BadAction(ModelToolset):
        model = Book
        fields = ["id"]
        actions = ["list", "purge"]

    class BadLookupField(ModelToolset):
        model = Book
        fields = ["id"]
        lookup_field = "isbn"

    assert messages(BadAction) == [
        (
            "mcp_django.E116",
            "BadAction: unknown action 'purge'.",
            "Choose actions among list, get, create, update, delete.",
        )
    ]
    assert messages(BadLookupField) == [
        (
            "mcp_django.E116",
            "BadLookupField.lookup_field: Book has no field 'isbn'.",
            "Name a unique field of the model.",
        )
    ]


def test_a_page_size_above_max_rows_or_a_bad_tool_name_is_e117() -> None:
    class BigPages(ModelToolset):
        model = Book
        fields = ["id"]
        page_size = 500

    class BadName(ModelToolset):
        model = Book
        fields = ["id"]
        basename = "livre à lire"

    assert messages(BigPages) == [
        (
            "mcp_django.E117",
            "BigPages: page_size 500 is not within 1..max_rows (100).",
            "Make 1 <= page_size <= max_rows.",
        )
    ]
    assert messages(BadName) == [
        (
            "mcp_django.E117",
            "BadName: tool name 'list_livre à lires' is not a valid MCP name.",
            "Set basename (and plural) to letters, digits and _.",
        ),
        (
            "mcp_django.E117",
            "BadName: tool name 'get_livre à lire' is not a valid MCP name.",
            "Set basename (and plural) to letters, digits and _.",
        ),
    ]


def test_a_basename_with_a_trailing_newline_is_e117() -> None:
    class Newline(ModelToolset):
        model = Book
        fields = ["id"]
        actions = ["list"]
        basename = "book\n"
        plural = "books\n"

    assert messages(Newline) == [
        (
            "mcp_django.E117",
            "Newline: tool name 'list_books\\n' is not a valid MCP name.",
            "Set basename (and plural) to letters, digits and _.",
        )
    ]


def test_writes_without_permission_checks_are_w110() -> None:
    class OpenWrites(ModelToolset):
        model = Book
        fields = ["id", "title"]
        actions = ["list", "create", "delete"]
        check_permissions = False

    assert messages(OpenWrites) == [
        (
            "mcp_django.W110",
            "OpenWrites serves create, delete without model permission checks.",
            "Set check_permissions = True, or override has_permission().",
        )
    ]


def test_check_toolsets_reports_every_live_toolset(settings: Any) -> None:
    class Broken(ModelToolset):
        model = Book

    broken = Broken()
    found = check_toolsets()
    assert [(message.id, message.obj) for message in found] == [("mcp_django.E112", Broken)]
    assert isinstance(found[0], Error)
    assert not isinstance(found[0], Warning)
    del broken


def test_a_registered_toolset_left_with_no_tools_is_still_reported() -> None:
    """`register()` keeps no toolset: one whose every tool a mistake left out is kept for the checks alone."""

    class NoFields(ModelToolset):
        model = Book

    NoFields.register(Registry("no-fields"))
    gc.collect()

    assert [(message.id, message.obj) for message in check_toolsets()] == [("mcp_django.E112", NoFields)]


class BooksByAnotherModel(django_filters.FilterSet):
    class Meta:
        model = get_user_model()
        fields = ["username"]


class MismatchedFilterBooks(viewsets.ReadOnlyModelViewSet[Book]):
    queryset = Book.objects.all()
    serializer_class = BookSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = BooksByAnotherModel  # django-filter asserts the models match, when it builds the filter


@pytest.fixture
def failed() -> Iterator[None]:
    yield
    base._failed.clear()  # the failed toolsets it keeps for the checks, kept no longer
    gc.collect()


def test_a_tool_whose_building_raises_is_e260_naming_the_file_and_the_tool_and_the_others_are_built(
    failed: None,
) -> None:
    class MismatchedTools(APIToolset):
        view = MismatchedFilterBooks

    toolset = MismatchedTools()
    del MismatchedTools, toolset  # the checks keep what they report alive themselves
    gc.collect()

    (found,) = [toolset for toolset in all_toolsets() if type(toolset).__name__ == "MismatchedTools"]
    assert list(found.tools) == ["get_book"]
    ((check_id, message, hint),) = found.problems
    assert (check_id, message) == (
        "mcp_django.E260",
        "MismatchedTools (tests/toolsets/test_checks.py) could not build 'list_books'.",
    )
    assert hint.startswith("Fix AssertionError: FilterSet model <class 'django.contrib.auth.models.User'> does")
    assert re.search(r", at \S+/django_filters/rest_framework/backends\.py:\d+\.$", hint)
    assert check_toolsets()[0].id == "mcp_django.E260"


def test_a_toolset_whose_build_tools_raises_is_e260_with_no_tools(failed: None) -> None:
    class Broken(Toolset):
        def build_tools(self) -> list[Any]:
            return [1 / 0]

    line = Broken.build_tools.__code__.co_firstlineno + 1
    assert messages(Broken) == [  # type: ignore[arg-type]  # any toolset
        (
            "mcp_django.E260",
            "Broken (tests/toolsets/test_checks.py) could not build its tools.",
            f"Fix ZeroDivisionError: division by zero, at tests/toolsets/test_checks.py:{line}.",
        )
    ]


def test_an_app_module_that_raises_is_e261_and_what_it_declared_before_stays(caplog: Any) -> None:
    app = SimpleNamespace(name="tests.toolsets.broken_app", module=importlib.import_module("tests.toolsets.broken_app"))
    try:
        load_declaration_modules([app], "mcp")
        found = check_declaration_modules()
    finally:
        load_failures.clear()
    registry = next(registry for registry in all_registries() if registry.name == "tests-broken-app")

    assert [(message.id, message.msg, message.hint) for message in found] == [
        (
            "mcp_django.E261",
            "tests/toolsets/broken_app/mcp.py raised NameError while loading.",
            "Fix it (name 'undefined_name' is not defined, at tests/toolsets/broken_app/mcp.py:14); "
            "what follows it is left out.",
        )
    ]
    assert list(registry.tools) == ["reached"]
    assert "tests/toolsets/broken_app/mcp.py raised while loading" in caplog.text  # with its traceback


def test_two_toolsets_naming_a_tool_alike_is_w260() -> None:
    class Books(ModelToolset):
        model = Book
        fields = ["id"]
        basename = "tome"

    class MoreBooks(ModelToolset):
        model = Book
        fields = ["id", "title"]
        actions = ["get"]
        basename = "tome"

    both = (Books(), MoreBooks())
    assert "Books and MoreBooks both name a tool 'get_tome'." in [message.msg for message in check_tool_names()]
    assert [(message.id, message.msg, message.hint) for message in tool_name_collisions(both)] == [
        (
            "mcp_django.W260",
            "Books and MoreBooks both name a tool 'get_tome'.",
            "Set basename (or plural) on one of them to tell their tools apart.",
        )
    ]
    del both
