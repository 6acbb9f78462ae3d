"""The official client's OAuth flow through the round-robin (tests/live/test_oauth_live.py): discovery,
registration, the consent page, the token exchange and the calls each reach the next worker.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.live.oauth_support import DocumentServer
from tests.live.test_oauth_live import *  # the tests, collected here against the fixture below
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def oauth_server(
    production: ProductionSite,
    live_server_env: dict[str, str],
    documents: DocumentServer,
    idp_key: tuple[Any, dict[str, Any]],
) -> Iterator[RoundRobin]:
    """The shared site's database served with the OAuth test settings (tests/live/oauth_settings.py), trusting
    the test's identity provider as the live module's server does."""
    env = {
        **live_server_env,
        "DJANGO_SETTINGS_MODULE": "tests.live.oauth_settings",
        "SSL_CERT_FILE": str(documents.certificate),
        "MCP_TEST_IDP_JWKS": json.dumps(idp_key[1]),
    }
    with production.workers(env) as site:
        yield site
