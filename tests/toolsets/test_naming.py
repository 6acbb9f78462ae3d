"""Tool names: one rule for both toolsets, from the models' untranslated verbose names, in every language."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.test import override_settings
from django.utils import translation
from rest_framework import serializers, viewsets

from mcp_django.toolsets import APIToolset, ModelToolset


class ContentTypeSerializer(serializers.ModelSerializer[ContentType]):
    class Meta:
        model = ContentType
        fields = ["id", "app_label", "model"]


class ContentTypeViewSet(viewsets.ReadOnlyModelViewSet[ContentType]):
    queryset = ContentType.objects.all()
    serializer_class = ContentTypeSerializer


class ContentTypeTools(ModelToolset):
    model = ContentType
    fields = ["id", "app_label", "model"]


class ContentTypeAPI(APIToolset):
    view = ContentTypeViewSet


class GroupTools(ModelToolset):
    model = Group
    fields = ["id", "name"]


@pytest.fixture(autouse=True)
def collect() -> Iterator[None]:
    yield
    gc.collect()  # the toolsets built here leave all_toolsets() before other tests run the checks


def names(language: str) -> dict[str, Any]:
    """The tools' names and lookup arguments, built with `language` as the project's and the active language."""
    with override_settings(LANGUAGE_CODE=language), translation.override(language):
        built = [ContentTypeTools(), ContentTypeAPI(), GroupTools()]
        assert str(Group._meta.verbose_name) != "group" or language == "en"  # Django ships these translations
        return {
            name: sorted(tool.input_schema.get("required", []))
            for toolset in built
            for name, tool in toolset.tools.items()
        }


def test_both_toolsets_name_a_model_s_tools_alike_singular_and_plural() -> None:
    assert names("en") == {
        "list_content_types": [],
        "get_content_type": ["id"],
        "list_groups": [],
        "get_group": ["id"],
    }


@pytest.mark.parametrize("language", ["de", "ru"])
def test_the_tool_names_do_not_change_with_the_project_s_language(language: str) -> None:
    assert names(language) == names("en")
