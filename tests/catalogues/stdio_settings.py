"""The example project's settings serving the catalogue tests' endpoints (`tests.catalogues.urls`) beside its
own, for `manage.py mcp_stdio` in `tests/catalogues/test_stdio.py`."""

from example_project.settings import *  # noqa: F403  # the example project, but for its URLs

ROOT_URLCONF = "tests.catalogues.stdio_urls"
