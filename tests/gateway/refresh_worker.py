"""One worker process of the refresh race (tests/gateway/test_upstream_oauth.py), on the database and upstream
its environment names (`tests.gateway.upstream_settings`):

    python -m tests.gateway.refresh_worker connect alice alice-upstream   # alice connects, through the pages
    python -m tests.gateway.refresh_worker expire alice                   # her token has expired
    python -m tests.gateway.refresh_worker token alice                    # prints alice's access token
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

import django
import httpx2


def main(command: str, username: str, *rest: str) -> None:
    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone

    from mcp_django.client.servers import server_config
    from mcp_django.gateway.models import UpstreamCredential
    from mcp_django.gateway.upstream import _access_token

    user = get_user_model().objects.get(username=username)
    if command == "connect":
        browser = Client()
        browser.force_login(user)
        started = browser.post("/mcp/upstream/accounts/connect")
        authorize = httpx2.get(f"{started['Location']}&as_user={rest[0]}", timeout=20)
        back = urlsplit(authorize.headers["location"])
        done = browser.get(f"{back.path}?{back.query}")
        assert done.status_code == 302, done.content
        return
    if command == "expire":
        UpstreamCredential.objects.filter(user=user).update(expires_at=timezone.now())
        return
    print(_access_token(server_config("accounts"), user.pk)[0], flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
