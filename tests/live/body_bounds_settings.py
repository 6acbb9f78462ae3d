"""The example project's settings serving only the package's URLconfs (`tests.live.body_bounds_urls`)."""

from example_project.settings import *  # noqa: F403  # the example project, but for its URLs

ROOT_URLCONF = "tests.live.body_bounds_urls"
