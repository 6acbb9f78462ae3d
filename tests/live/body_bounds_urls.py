"""What a project gets from including the package's URLconfs, and nothing else (tests/live/test_body_bounds_live.py)."""

from django.urls import include, path

from tests.body_bounds_support import package_urlconfs

urlpatterns = [path("", include(name)) for name in package_urlconfs()]
