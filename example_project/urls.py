"""URLs of the example project: the admin, the default MCP endpoint and the conformance fixture."""

from django.contrib import admin
from django.urls import include, path

from example_project.demo.hooks import book_hooks
from example_project.demo.ninja_api import api as ninja_api
from example_project.demo.views import home
from mcp_django.urls import app_urlpatterns, endpoint, manifest_urlpatterns, well_known_urlpatterns

# Skills (SEP-2640, docs/skills.md): the demo's and the conformance fixture's skills/ directories, served
# on /mcp and on the conformance endpoints, where the official suite's sep-2640-skills-* scenarios read them.
SKILLS = ["mcp_django.skills.SkillsExtension"]

urlpatterns = [
    # The landing page: every endpoint below with its mode, and how to connect (example_project/demo/views.py).
    path("", home, name="home"),
    path("admin/", admin.site.urls),
    # The demo's django-ninja API over HTTP; the same operations are tools on /mcp/adapter (docs/ninja.md).
    path("ninja/", ninja_api.urls),
    # A webhook receiver for signed event deliveries (book.added, from an MCP server's events): docs/events.md.
    path("hooks/books", book_hooks, name="book-hooks"),
    # The conformance fixture server, open to anonymous callers as the official suite expects.
    *endpoint(
        "conformance/mcp",
        registry="example_project.conformance.mcp.registry",
        name="conformance",
        allow_anonymous=True,
        interceptors=[],
        extensions=SKILLS,
    ),
    # The same fixture served by the Django view and the project's middleware, not the fast path
    # (example_project/asgi.py): the conformance tests run against both.
    *endpoint(
        "conformance/view/mcp",
        registry="example_project.conformance.mcp.registry",
        name="conformance-view",
        allow_anonymous=True,
        interceptors=[],
        fast_path=False,
        extensions=SKILLS,
    ),
    # An interceptor server: the demo's guard, for the chains that name the "demo" server (settings.py).
    *endpoint(
        "interceptors/mcp",
        registry="example_project.demo.interceptors.registry",
        name="interceptors",
        allow_anonymous=True,
        interceptors=["example_project.demo.interceptors.ForbiddenWordGuard"],
        extensions=["mcp_django.interceptors.protocol.InterceptorsExtension"],  # interceptors/list, /invoke
    ),
    # The project's tools behind a chain that runs the demo server's guard remotely, between the
    # redaction and the audit trail (docs/remote-interceptors.md).
    *endpoint(
        "guarded/mcp",
        name="guarded",
        interceptors=[
            "mcp_django.interceptors.redaction.RedactionInterceptor",
            {"SERVER": "demo"},
            "mcp_django.interceptors.audit.AuditSinkInterceptor",
        ],
    ),
    # A gateway in front of the conformance fixture: to its callers it is that server (docs/gateway.md).
    *endpoint("gateway/mcp", name="gateway", backend="conformance", allow_anonymous=True, interceptors=[]),
    # A second gateway in front of the first (chained gateways): its own auth, scopes and interceptors
    # apply here before the call reaches the first one; its security layer is the demo's guard, run
    # remotely on the interceptor server above (docs/gateway.md, "Settings-driven gateway").
    *endpoint(
        "gateway/chain/mcp",
        name="gateway-chain",
        backend="gateway",
        allow_anonymous=True,
        interceptors=[{"SERVER": "demo"}],
    ),
    # The project's catalogue tools open to anonymous callers (USER scope: the read-only ones), so the hub
    # below can compose them as a remote server, through loopback.
    *endpoint("books/mcp", name="books", allow_anonymous=True, interceptors=[]),
    # A hub (docs/federation.md): the demo's read-only providers (about_*, books_by_*, the catalogue's
    # reading actions), the conformance fixture as conf_* and the catalogue above as books_*, one endpoint;
    # a remote that is down drops out, the others keep answering. Anonymous callers reach it, so it serves
    # none of the providers whose tools write or need a permission (the toolsets, the editing actions).
    *endpoint(
        "hub/mcp",
        mode="adapter",
        name="hub",
        allow_anonymous=True,
        interceptors=[],
        providers=["demo.books", "demo.authors", "demo.bus.reading"],
        servers=[{"SERVER": "conformance", "NAMESPACE": "conf"}, {"SERVER": "books", "NAMESPACE": "books"}],
    ),
    # What `include("mcp_django.urls")` mounts, with the skills on /mcp: the server endpoint with every
    # `@mcp_django.tool` of the project's apps, the adapter endpoint of its providers, the manifest.
    *endpoint("mcp", name="server", extensions=SKILLS),
    *endpoint("mcp/adapter", name="adapter", mode="adapter"),
    *manifest_urlpatterns,
    *well_known_urlpatterns,
    # The installed apps' own URLs: the gateway's upstream pages, the Server Cards (/mcp/server-card, ...)
    # and the AI Catalog (/.well-known/ai-catalog.json) of mcp_django.discovery (docs/discovery.md).
    *app_urlpatterns(),
    # The OAuth 2.1 authorization server: metadata, registration, login + consent, tokens (docs/oauth.md).
    path("", include("mcp_django.oauth.urls")),
]
