"""docs/oauth.md's Python client, run as written against the example project under daphne.

The page's block between `<!-- oauth client: start -->` and `<!-- oauth client: end -->` runs as a script,
with `8000` and `3030` replaced by free ports. `webbrowser.open` starts what `BROWSER` names: here a small
script that does what the user does in the browser (log in as alice, allow) and follows the redirect to
the script's callback, so the page's storage, browser step and callback server all run for real. The
`BROWSER` command stays until the callback answers it, as a terminal browser stays until it is closed: the
client must not wait for it before it serves its callback.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, LiveServer, _free_port

pytestmark = pytest.mark.live

START, END = "<!-- oauth client: start -->", "<!-- oauth client: end -->"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)

BROWSER = textwrap.dedent(
    f"""\
    #!{sys.executable}
    # The user at the browser: log in as alice, allow, and follow the redirect to the client's callback.
    import sys
    from urllib.parse import urljoin

    import httpx2

    sys.path.insert(0, {str(ROOT)!r})
    from tests.oauth.support import hidden_fields

    url = sys.argv[1]
    with httpx2.Client(timeout=30) as http:
        response = http.get(url)
        login = urljoin(url, response.headers["location"])
        page = http.get(login)
        response = http.post(login, data={{**hidden_fields(page.text), "username": "alice", "password": "alice"}})
        consent = http.get(urljoin(url, response.headers["location"]))
        approved = http.post(str(consent.url), data={{**hidden_fields(consent.text), "allow": "Allow"}})
        done = http.get(approved.headers["location"])
    with open("callback-page.txt", "w") as page:
        page.write(done.text)
    """
)


def client_script() -> str:
    """The page's client block."""
    text = (ROOT / "docs" / "oauth.md").read_text()
    assert START in text, "docs/oauth.md lost its client start mark"
    assert END in text, "docs/oauth.md lost its client end mark"
    (block,) = FENCE.findall(text[text.index(START) : text.index(END)])
    return str(block)


def test_the_oauth_client_of_the_docs_logs_in_through_the_browser_and_calls_a_tool(
    example_server: LiveServer, tmp_path: Path
) -> None:
    port = example_server.base_url.rsplit(":", 1)[1]
    script = client_script().replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    script = script.replace('("127.0.0.1", 3030)', f'("127.0.0.1", {_free_port()})')
    (tmp_path / "oauth_client.py").write_text(script)
    browser = tmp_path / "browser"
    browser.write_text(BROWSER)
    browser.chmod(0o755)

    run = subprocess.run(
        [sys.executable, "oauth_client.py"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "BROWSER": str(browser), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert run.returncode == 0, run.stderr + example_server.log_tail()
    assert "The Dispossessed" in run.stdout
    assert (tmp_path / "callback-page.txt").read_text() == "Done: you can close this window.", run.stderr
