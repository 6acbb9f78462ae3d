"""The example project's settings for the live OAuth tests: a client ID metadata document served by the test.

The test serves the document over HTTPS on 127.0.0.1 with a certificate it made (trusted through
`SSL_CERT_FILE` in the server's environment). The fetcher refuses loopback addresses, as
it must; `LoopbackMetadataFetcher` lets this one server reach the test's, and nothing else changes.
"""

from __future__ import annotations

from example_project.settings import *  # noqa: F403
from example_project.settings import OAUTH2_PROVIDER

OAUTH2_PROVIDER = {**OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "tests.live.oauth_support.LoopbackMetadataFetcher"}
