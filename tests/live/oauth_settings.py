"""The example project's settings for the live OAuth tests: a client ID metadata document served by the test.

The test serves the document over HTTPS on 127.0.0.1 with a certificate it made (trusted through
`SSL_CERT_FILE` in the server's environment). The fetcher refuses loopback addresses, as
it must; `LoopbackMetadataFetcher` lets this one server reach the test's, and nothing else changes.
With `MCP_TEST_IDP_JWKS` (a JWKS, as JSON) in the environment, the site trusts the test's identity
provider `https://idp.example.com` with those keys, mapping its users by email (enterprise sign-in).
"""

from __future__ import annotations

import json
import os

from example_project.settings import *  # noqa: F403
from example_project.settings import MCP_DJANGO, OAUTH2_PROVIDER

OAUTH2_PROVIDER = {**OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": "tests.live.oauth_support.LoopbackMetadataFetcher"}

if os.environ.get("MCP_TEST_IDP_JWKS"):
    IDP_KEYS = json.loads(os.environ["MCP_TEST_IDP_JWKS"])
    MCP_DJANGO = {**MCP_DJANGO, "OAUTH_TRUSTED_ISSUERS": {"https://idp.example.com": {"JWKS": IDP_KEYS}}}
