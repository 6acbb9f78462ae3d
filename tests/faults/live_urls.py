"""The example project's URLs plus `/faults/mcp`, an anonymous endpoint serving `tests.faults.live_tools`,
and `/faults/view/mcp`, the demo's tools served by the Django view."""

from example_project.urls import urlpatterns as example_urlpatterns
from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint("faults/mcp", registry="tests.faults.live_tools.registry", name="faults", allow_anonymous=True),
    # The demo's tools on the Django view, not the fast path.
    *endpoint("faults/view/mcp", name="faults-view", fast_path=False),
    *example_urlpatterns,
]
