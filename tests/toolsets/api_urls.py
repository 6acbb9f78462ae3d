"""A URLconf routing a test viewset under `api/`, as a project's router would (the pagination links' path)."""

from django.urls import include, path
from rest_framework import routers

from tests.toolsets.test_api_toolset import SearchableBooks

router = routers.DefaultRouter()
router.register("found-books", SearchableBooks, basename="found-book")

urlpatterns = [path("api/", include(router.urls))]
