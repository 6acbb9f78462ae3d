"""What a person sees: the OAuth login, consent and error pages, the admin's MCP dashboard and the demo's `/`.

In Debian's chromium, every button (submit controls included) and every error message on them has a
text/background contrast of at least 4.5:1 (WCAG 2 AA for normal text; 3:1 for a button that shows only an
icon, such as the admin's theme toggle), and so does every link of the landing page: computed from the
browser's computed styles, the text colour over the first opaque background found walking up from the
element, translucent layers composited on the way. A white-on-white "Allow" passed every test that clicks
by selector; this one reads the colours.

Screenshots of each page go to `.cache/screenshots/`, for a developer to look at.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, LiveServer, serve_example
from tests.live.admin_support import private_env
from tests.live.test_admin_browser import chromium
from tests.oauth.support import REDIRECT_URI, authorize_url, pkce

pytestmark = pytest.mark.live

SCREENSHOTS = ROOT / ".cache" / "screenshots"
AA_NORMAL_TEXT = 4.5
AA_GRAPHICS = 3.0
"""An icon's minimum (WCAG 2 AA, non-text contrast): a button whose only label is hidden for screen readers."""
CONTROLS = "input[type=submit], input[type=button], button, .error"

# For each control: its label, its text colour and the background it is drawn on, both as [r, g, b, a]
# in 0-255 (alpha 0-1); translucent backgrounds are composited over what lies under them, down to the
# first opaque one (or the canvas, white).
COLOURS_JS = """
(selector) => {
  const parse = (value) => {
    const numbers = value.match(/[\\d.]+/g);
    if (!value.startsWith("rgb") || !numbers) throw new Error("unexpected colour " + value);
    const [r, g, b, a] = numbers.map(Number);
    return [r, g, b, a === undefined ? 1 : a];
  };
  const over = (top, bottom) => {
    const a = top[3] + bottom[3] * (1 - top[3]);
    if (a === 0) return [0, 0, 0, 0];
    const mix = (i) => (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / a;
    return [mix(0), mix(1), mix(2), a];
  };
  const backdrop = (element) => {
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
      const colour = parse(getComputedStyle(node).backgroundColor);
      layers.push(colour);
      if (colour[3] >= 1) break;
    }
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255, 1]);
  };
  return [...document.querySelectorAll(selector)]
    .filter((element) => element.getClientRects().length > 0)
    .map((element) => {
      const background = backdrop(element);
      // An icon button (Django admin's theme toggle): its only text is visually hidden (a 1px box).
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      let shown = false;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const box = node.parentElement.getBoundingClientRect();
        if (node.textContent.trim() && box.width > 1 && box.height > 1) shown = true;
      }
      if (element.value) shown = true;
      return {
        icon: !shown && element.querySelector("svg") !== null,
        label: (element.value || element.textContent || element.getAttribute("aria-label") || "").trim().slice(0, 40),
        text: over(parse(getComputedStyle(element).color), background),
        background: background,
      };
    });
}
"""


def luminance(rgb: list[float]) -> float:
    """WCAG 2's relative luminance of an sRGB colour (0-255 channels)."""

    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(channel) for channel in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(first: list[float], second: list[float]) -> float:
    """WCAG 2's contrast ratio of two colours, from 1 (none) to 21 (black on white)."""
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def poor_contrast(page: Any, name: str, selector: str = CONTROLS) -> list[str]:
    """Screenshot the page as `name`, and describe each of its controls (`selector`) below AA contrast."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    controls = page.evaluate(COLOURS_JS, selector)
    assert controls, f"no control on the {name} page"
    ratios = [
        (control["label"], contrast(control["text"], control["background"]), control["icon"]) for control in controls
    ]
    print(name, ", ".join(f"{label!r} {ratio:.2f}:1" for label, ratio, _ in ratios))
    return [
        f"{name}: {label!r} {ratio:.2f}:1"
        for label, ratio, icon in ratios
        if ratio < (AA_GRAPHICS if icon else AA_NORMAL_TEXT)
    ]


@pytest.fixture(scope="module")
def server(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("contrast")
    with serve_example(private_env(live_server_env, directory), directory) as server:
        yield server


def registered_client(server: LiveServer) -> str:
    """Register a public OAuth client (RFC 7591) the way an MCP client does: its client ID."""
    metadata = {
        "client_name": "contrast test client",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    request = urllib.request.Request(
        server.url("/oauth/register/"), json.dumps(metadata).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.loads(response.read())["client_id"])


def test_every_button_and_error_of_the_oauth_pages_and_the_dashboard_and_the_demo_s_links_have_aa_contrast(
    server: LiveServer, tmp_path: Path
) -> None:
    client_id = registered_client(server)
    _, challenge = pkce()
    resource = server.url("/mcp")
    consent = server.url(authorize_url(client_id, challenge, resource=resource))
    refused = server.url(authorize_url(client_id, challenge, resource=resource, code_challenge_method="plain"))
    failures: list[str] = []

    with chromium(tmp_path / "chromium-profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(consent)  # not logged in yet: the login page, then the consent page
        page.wait_for_selector("#login-form")
        page.fill("#id_username", "alice")
        page.fill("#id_password", "wrong")
        page.click("input[type=submit]")
        page.wait_for_selector("p.error")
        failures += poor_contrast(page, "oauth-login")
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice")
        page.click("input[type=submit]")
        page.wait_for_selector("#authorizationForm")
        failures += poor_contrast(page, "oauth-consent")

        page.goto(refused)
        page.wait_for_selector(".error")
        failures += poor_contrast(page, "oauth-error")

        page.goto(server.url("/admin/login/?next=/admin/mcp_django/controlroom/"))
        page.fill("#id_username", "admin")
        page.fill("#id_password", "admin")
        page.click("input[type=submit]")
        page.wait_for_selector("#mcp-dashboard svg")
        failures += poor_contrast(page, "admin-dashboard")

        page.goto(server.url("/"))  # the demo's landing page: its links are what one clicks there
        failures += poor_contrast(page, "demo-home", "a")

    assert failures == []
