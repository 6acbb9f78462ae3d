"""Output schemas of DRF serializers: what each field's representation is."""

from __future__ import annotations

from django.contrib.auth.models import Permission
from rest_framework import serializers

from mcp_django.declarations.django_values import serializer_schema


class PermissionSerializer(serializers.ModelSerializer[Permission]):
    level = serializers.ChoiceField(choices=[("low", "Low"), ("high", "High")])
    content_type = serializers.PrimaryKeyRelatedField(read_only=True)
    groups = serializers.PrimaryKeyRelatedField(source="group_set", many=True, read_only=True)
    given = serializers.PrimaryKeyRelatedField(queryset=Permission.objects.all(), pk_field=serializers.UUIDField())

    class Meta:
        model = Permission
        fields = ["codename", "level", "content_type", "groups", "given"]


def test_an_output_schema_types_choice_and_primary_key_fields_as_the_input_side_does() -> None:
    properties = serializer_schema(PermissionSerializer).model_json_schema()["properties"]

    assert properties["level"]["enum"] == ["low", "high"]
    assert properties["content_type"]["type"] == "integer"  # the related model's primary key
    assert properties["groups"] == {
        "type": "array",
        "items": {"type": "integer"},
        "title": "Groups",
        "description": "Groups",
    }
    assert properties["given"]["type"] == "string"  # pk_field says how the key is written
