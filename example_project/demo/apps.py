from django.apps import AppConfig


class DemoConfig(AppConfig):
    """A small book catalogue whose tools, resources and prompts live in ``mcp.py``."""

    name = "example_project.demo"
    label = "demo"
    verbose_name = "Demo catalogue"
    default_auto_field = "django.db.models.BigAutoField"
