from django.contrib import admin
from django.urls import include, path
from nursery.api import router

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include(router.urls)),
    path("", include("mcp_django.urls")),  # the MCP endpoint at /mcp (and /mcp/)
]
