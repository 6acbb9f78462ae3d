"""The example project's settings, serving tests/live/uri_attack_urls.py instead of its own URLs."""

from example_project.settings import *  # noqa: F403

ROOT_URLCONF = "tests.live.uri_attack_urls"
