"""Providers: tools, resources and prompts discovered at run time, and how they are served.

Static declarations (`@mcp_django.tool`) are fixed when Django starts. A provider is for
what depends on data: one tool per catalogue row, one resource per table. Write a class,
name it on your app's config, and mcp_django loads it once, when Django starts::

    # shop/mcp.py
    class ProductTools(ToolProvider):
        id = "shop.products"
        name = "Product tools"
        scope = Scope.TEAM

        def list_tools(self, ctx):
            return [{"name": f"price_{p.sku}", "description": f"The price of {p}",
                     "inputSchema": {"type": "object"}} for p in Product.objects.all()]

        def call_tool(self, name, arguments, ctx):
            return str(Product.objects.get(sku=name.removeprefix("price_")).price)

    # shop/apps.py
    class ShopConfig(AppConfig):
        name = "shop"
        mcp_providers = ["shop.mcp.ProductTools"]

Methods may be sync (they run in a worker thread, so the ORM works) or async. Lists are
asked for on every request, with the caller's `Context`; a call, read or get goes to the
first provider the caller may see that lists the name or URI.

Each provider is served as a `ProviderSource` (`mcp_django.sources`): the endpoint's one
`CompositeBackend` merges its lists with the other sources' and dispatches to it.

The package: `base` (the provider classes), `registry` (loading `mcp_providers`),
`source` (serving one provider).
"""

from mcp_django.providers.base import PromptProvider, Provider, ResourceProvider, ToolProvider
from mcp_django.providers.registry import ProviderProblem, ProviderRegistry, provider_registry
from mcp_django.providers.source import ProviderSource

__all__ = [
    "PromptProvider",
    "Provider",
    "ProviderProblem",
    "ProviderRegistry",
    "ProviderSource",
    "ResourceProvider",
    "ToolProvider",
    "provider_registry",
]
