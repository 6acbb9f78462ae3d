"""The example project's URLconf with the per-user credential tests' gateway, hub and connect pages, for the
live server of `test_upstream_live.py` (`tests.gateway.upstream_settings`)."""

from __future__ import annotations

from example_project.urls import urlpatterns as example_urlpatterns
from tests.gateway.upstream_urls import urlpatterns as upstream_urlpatterns

urlpatterns = [*upstream_urlpatterns, *example_urlpatterns]
