"""`App`: the view a tool names for hosts of the MCP Apps extension (SEP-1865), as declared.

The declaration is data only: which Django template renders the view, under which `ui://` URI, and the
`_meta.ui` (CSP origins, permissions, border) hosts apply to it. Serving it (the resource, the tool's
`_meta.ui.resourceUri`, the capability) is the `mcp_django.ui` extension's.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.exceptions import DeclarationError

APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an app's HTML resource (the only one the 2026-01-26 extension defines)."""

PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite")
"""The browser permissions an app may ask hosts for (`_meta.ui.permissions`)."""

VISIBILITIES: Final = ("model", "app")

# An origin as CSP source lists take it: a scheme, a host (its first label may be `*`), an optional port.
_ORIGIN: Final = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")


@dataclasses.dataclass(frozen=True)
class App:
    """A tool's view: a Django template rendered per read, served as a `ui://` resource.

    Args:
        template: the template's name, as `get_template` takes it (`"shop/product_card.html"`).
        uri: the resource's URI (default `ui://apps/<template>`; tools naming one template share it).
        title: the resource's human-readable name (default: the template's name).
        description: what the view shows.
        connect_domains: origins the view may fetch from (CSP `connect-src`).
        resource_domains: origins of scripts, styles, images, fonts and media (CSP `*-src`).
        frame_domains: origins of nested iframes (CSP `frame-src`).
        base_uri_domains: origins allowed as the document's base URI (CSP `base-uri`).
        permissions: browser permissions asked for (`camera`, `microphone`, `geolocation`, `clipboardWrite`).
        domain: a dedicated sandbox origin, in the format the host documents.
        prefers_border: whether the host draws a border and background (None: the host decides).
        visibility: who may call the tool: `"model"`, `"app"` or both (None: both, the extension's default).

    Raises:
        DeclarationError: an origin that is not one (a bare `*`, a path), an unknown permission or visibility.
    """

    template: str
    uri: str = ""
    title: str | None = None
    description: str | None = None
    connect_domains: Sequence[str] = ()
    resource_domains: Sequence[str] = ()
    frame_domains: Sequence[str] = ()
    base_uri_domains: Sequence[str] = ()
    permissions: Sequence[str] = ()
    domain: str | None = None
    prefers_border: bool | None = None
    visibility: Sequence[str] | None = None

    def __post_init__(self) -> None:
        owner = f"app {self.template!r}"
        if not isinstance(self.template, str) or not self.template:
            raise DeclarationError("an app needs a template name")
        uri = self.uri or f"ui://apps/{self.template}"
        if not uri.startswith("ui://"):
            raise DeclarationError(f"{owner}: its URI must start with ui://, not {uri!r}")
        object.__setattr__(self, "uri", uri)
        for field in ("connect_domains", "resource_domains", "frame_domains", "base_uri_domains"):
            origins = getattr(self, field)
            if isinstance(origins, str):
                raise DeclarationError(f"{owner}: {field} is a list of origins, not one string")
            # A wildcard or a path would widen the view's CSP past what it names: refused when declared.
            bad = [origin for origin in origins if not isinstance(origin, str) or not _ORIGIN.fullmatch(origin)]
            if bad:
                raise DeclarationError(f"{owner}: {field} takes origins like https://cdn.example.com, not {bad[0]!r}")
            object.__setattr__(self, field, tuple(origins))
        unknown = [name for name in self.permissions if name not in PERMISSIONS]
        if unknown:
            raise DeclarationError(f"{owner}: unknown permission {unknown[0]!r} (one of {', '.join(PERMISSIONS)})")
        object.__setattr__(self, "permissions", tuple(self.permissions))
        if self.visibility is not None:
            if not self.visibility or any(who not in VISIBILITIES for who in self.visibility):
                raise DeclarationError(f'{owner}: visibility lists "model", "app" or both')
            object.__setattr__(self, "visibility", tuple(self.visibility))

    @property
    def name(self) -> str:
        """The resource's `name`: the title, else the template's name."""
        return self.title or self.template

    def resource(self) -> dict[str, Any]:
        """The entry `resources/list` gives for the view."""
        listed: dict[str, Any] = {"uri": self.uri, "name": self.name, "mimeType": APP_MIME_TYPE}
        if self.description:
            listed["description"] = self.description
        return listed | {"_meta": self.resource_meta()}

    def resource_meta(self) -> dict[str, Any]:
        """The resource's `_meta`: `{"ui": {csp, permissions, domain, prefersBorder}}`, each only when declared."""
        csp = {
            key: list(origins)
            for key, origins in (
                ("connectDomains", self.connect_domains),
                ("resourceDomains", self.resource_domains),
                ("frameDomains", self.frame_domains),
                ("baseUriDomains", self.base_uri_domains),
            )
            if origins
        }
        ui: dict[str, Any] = {}
        if csp:
            ui["csp"] = csp
        if self.permissions:
            ui["permissions"] = {name: {} for name in self.permissions}
        if self.domain:
            ui["domain"] = self.domain
        if self.prefers_border is not None:
            ui["prefersBorder"] = self.prefers_border
        return {"ui": ui}

    def tool_meta(self) -> dict[str, Any]:
        """What the extension adds to the tool's `_meta`: `ui.resourceUri` (and `visibility`), and the flat
        `ui/resourceUri` the 2026-01-26 text still names (deprecated) for hosts that read only that."""
        ui: dict[str, Any] = {"resourceUri": self.uri}
        if self.visibility is not None:
            ui["visibility"] = list(self.visibility)
        return {"ui": ui, "ui/resourceUri": self.uri}


def app_of(owner: str, app: str | App | Mapping[str, Any] | None) -> App | None:
    """The `App` a declaration's `app=` names: a template name, an `App`, or its keyword arguments as a dict.

    Raises:
        DeclarationError: anything else.
    """
    if app is None or isinstance(app, App):
        return app
    if isinstance(app, str):
        return App(app)
    if isinstance(app, Mapping):
        try:
            return App(**app)
        except DeclarationError:  # a TypeError too, already naming the app
            raise
        except TypeError as error:
            raise DeclarationError(f"{owner}: app {error}") from error
    raise DeclarationError(f"{owner}: app is a template name or an App, not {type(app).__name__}")
