"""U-5 (issue 36): every view the package mounts bounds the body it takes before Django reads it.

An MCP endpoint's transport reads no further than `MAX_REQUEST_BYTES`; every other view is a public view
(`transports.public.public_view`), whose body the fast path and the daphne guard read no further than
`MAX_PUBLIC_REQUEST_BYTES`. The `/mcp/upstream/` pages were neither: a 400 MB POST was read whole.
tests/live/test_body_bounds_live.py sends the oversized bodies over real sockets.
"""

from __future__ import annotations

from tests.body_bounds_support import bound_of, package_urlconfs, package_views


def test_the_audit_walks_the_package_urlconfs_and_finds_the_upstream_pages() -> None:
    paths = [path for path, _view in package_views()]

    assert {"mcp_django.urls", "mcp_django.oauth.urls"} <= set(package_urlconfs())
    assert "/mcp/upstream/x/connect" in paths
    assert "/oauth/token/" in paths


def test_every_view_the_package_mounts_bounds_its_body_before_django_reads_it() -> None:
    unbounded = [path for path, view in package_views() if bound_of(view) is None]

    assert unbounded == []
