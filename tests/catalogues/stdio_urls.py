"""The example project's URLs and the catalogue tests' endpoints (`flat`, `search`, `grouped`, `configured`)."""

from example_project.urls import urlpatterns as example
from tests.catalogues.urls import urlpatterns as catalogues

urlpatterns = [*catalogues, *example]
