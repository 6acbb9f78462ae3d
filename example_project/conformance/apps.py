from django.apps import AppConfig


class ConformanceConfig(AppConfig):
    """The official conformance suite's fixture server; its declarations live on their own registry."""

    name = "example_project.conformance"
    label = "conformance"
    verbose_name = "MCP conformance fixture"
