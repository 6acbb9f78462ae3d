"""The example project's settings, serving tests/remote_interceptors/host_urls.py instead of its own URLs."""

from example_project.settings import *  # noqa: F403

ROOT_URLCONF = "tests.remote_interceptors.host_urls"
