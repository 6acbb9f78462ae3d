"""A small DRF API over the demo's books, published as MCP tools by ``toolsets.py`` (docs/toolsets.md).

The same views could be routed over HTTP; as tools they keep their own permissions
(``DjangoModelPermissions``: adding and changing books needs the model permissions), their throttle
(``ScopedRateThrottle``, 60 calls a minute per user) and their serializer's validation.
"""

from __future__ import annotations

import datetime
from typing import Any

from rest_framework import mixins, permissions, serializers, throttling, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import Book


class BookSerializer(serializers.ModelSerializer[Book]):
    """A book of the catalogue."""

    class Meta:
        model = Book
        fields = ["id", "title", "author", "year", "summary"]

    def validate_year(self, value: int) -> int:
        if value > datetime.date.today().year:
            raise serializers.ValidationError("A catalogued book cannot come from the future.")
        return value


class PerMinuteThrottle(throttling.UserRateThrottle):
    """60 calls a minute per user, without a setting (a demo project has no DEFAULT_THROTTLE_RATES)."""

    rate = "60/minute"


class BookViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet[Book],
):
    """The catalogue over DRF: list, read, add and change books (no deletes)."""

    queryset = Book.objects.all()
    serializer_class = BookSerializer
    permission_classes = [permissions.IsAuthenticated, permissions.DjangoModelPermissions]
    throttle_classes = [PerMinuteThrottle]


class CatalogueStatsView(APIView):
    """How many books and authors the catalogue holds."""

    permission_classes = [permissions.IsAuthenticated]

    def get(self, request: Request) -> Response:
        """Count the catalogue's books and authors."""
        books = Book.objects.all()
        data: dict[str, Any] = {
            "books": books.count(),
            "authors": books.values("author").distinct().count(),
            "asked_by": request.user.get_username(),
        }
        return Response(data)
