from django.apps import AppConfig


class DemoConfig(AppConfig):
    """A small book catalogue: static tools, resources and prompts in ``mcp.py``, providers in ``providers.py``."""

    name = "example_project.demo"
    label = "demo"
    verbose_name = "Demo catalogue"
    default_auto_field = "django.db.models.BigAutoField"
    # Served on the adapter endpoint (/mcp/adapter); each reaches a different scope.
    mcp_providers = [
        "example_project.demo.providers.BookTools",
        "example_project.demo.providers.AuthorTools",
        "example_project.demo.providers.ModelTools",
        "example_project.demo.providers.CatalogueReading",
        "example_project.demo.providers.CatalogueEditing",
        # Models and DRF views as tools (docs/toolsets.md).
        "example_project.demo.toolsets.BookToolset",
        "example_project.demo.toolsets.BookAPITools",
        "example_project.demo.toolsets.CatalogueStatsTools",
        "example_project.demo.toolsets.BookNinjaTools",
        "example_project.demo.toolsets.BookAdminActions",
    ]
    # The command bus's actions (registered when Django starts); the two Catalogue providers expose them.
    mcp_bus_modules = ["example_project.demo.actions"]
