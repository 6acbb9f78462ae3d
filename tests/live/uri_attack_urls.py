"""One endpoint, `/files/mcp`, with a resource template a backtracking matcher takes cubic time on: three
reserved variables (`{+...}` values may hold `/`), each followed by a `/` (tests/live/test_uri_attack_live.py)."""

from __future__ import annotations

from mcp_django import Registry, endpoint

files = Registry("uri-attack")
TEMPLATE = "files://{+share}/{+folder}/{+name}/raw"


@files.resource(TEMPLATE, name="raw-file", mime_type="text/plain")
def raw_file(share: str, folder: str, name: str) -> str:
    """A file's bytes, by share, folder and name."""
    return f"{share}|{folder}|{name}"


urlpatterns = [*endpoint("files/mcp", name="files", registry=files, allow_anonymous=True, interceptors=[])]
