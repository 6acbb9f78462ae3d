import django_filters
from rest_framework import routers, serializers, viewsets

from .models import Note


class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = ["id", "title", "kind", "year", "author"]
        read_only_fields = ["author"]


class NoteFilter(django_filters.FilterSet):
    since = django_filters.NumberFilter(field_name="year", lookup_expr="gte")

    class Meta:
        model = Note
        fields = {"kind": ["exact"], "year": ["in"], "title": ["icontains"]}


class NoteViewSet(viewsets.ModelViewSet):
    """The notes, filtered with django-filter."""

    queryset = Note.objects.all()
    serializer_class = NoteSerializer
    filterset_class = NoteFilter

    def perform_create(self, serializer):
        serializer.save(author=self.request.user)


router = routers.DefaultRouter()
router.register("notes", NoteViewSet)
