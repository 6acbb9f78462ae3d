"""The Django app configuration of mcp_django."""

from __future__ import annotations

from django.apps import AppConfig


class MCPDjangoConfig(AppConfig):
    """Loads every app's static MCP declarations, `mcp_bus_modules` and `mcp_providers`, then freezes the registries."""

    name = "mcp_django"
    verbose_name = "MCP"
    default_auto_field = "django.db.models.BigAutoField"
    # The MCP client's keys (SERVERS, REMOTE_*): it ships with the core app, without an app of its own.
    mcp_settings = ["mcp_django.client.conf.client_settings"]

    def ready(self) -> None:
        from django.apps import apps

        # Register the system checks: the core's (settings, declarations, endpoints, permissions=), the extensions'.
        import mcp_django.checks.declarations
        import mcp_django.checks.deployment  # those of check --deploy
        import mcp_django.checks.endpoints
        import mcp_django.checks.permissions
        import mcp_django.checks.settings
        import mcp_django.extensions  # noqa: F401
        from mcp_django.client import checks as client_checks  # noqa: F401  # the MCP client's (its settings are ours)
        from mcp_django.conf import mcp_settings
        from mcp_django.declarations.loading import load_declaration_modules
        from mcp_django.registry import all_registries
        from mcp_django.toolsets import checks as toolset_checks  # noqa: F401  # and those of the toolsets

        module = mcp_settings.STATIC_MODULE
        if isinstance(module, str) and module:
            load_declaration_modules(apps.get_app_configs(), module)  # a module that raises is check E261
        for registry in all_registries():
            registry.freeze()

        from mcp_django.bus import all_buses, load_bus_modules
        from mcp_django.providers import provider_registry

        # Actions first: a bus provider may reach its bus as soon as it is loaded.
        load_bus_modules(apps.get_app_configs())
        for bus in all_buses():
            bus.freeze()
        if not provider_registry.frozen:
            provider_registry.load(apps.get_app_configs())
            provider_registry.freeze()

        from mcp_django import control
        from mcp_django.endpoints import auth_cache

        control.install(self)  # the admin's overlay, and its signals: stamps, list changes, rows synced after migrate
        auth_cache.connect()  # changes to tokens, users, groups and grants drop the cached credentials

        from mcp_django.interceptors.audit import replay_leftovers

        replay_leftovers()  # audit rows a process left in the spool (killed while the database was down)
