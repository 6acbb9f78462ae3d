"""`ProviderRegistry`: every provider the installed apps name in `mcp_providers`, loaded once, then frozen."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcp_django.exceptions import RegistryFrozen
from mcp_django.providers.base import PromptProvider, Provider, ResourceProvider, ToolProvider

ProviderProblem = tuple[str, str, str]
"""`(check id, message, hint)`: a mistake found while loading providers, reported by a system check."""


class ProviderRegistry:
    """Every provider the installed apps name in `mcp_providers`, keyed by id; loaded once, then frozen."""

    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}
        self.problems: list[ProviderProblem] = []
        self._frozen = False

    def __repr__(self) -> str:
        return f"<ProviderRegistry: {', '.join(self._providers) or 'empty'}>"

    def __iter__(self) -> Any:
        return iter(self._providers.values())

    def __len__(self) -> int:
        return len(self._providers)

    @property
    def frozen(self) -> bool:
        return self._frozen

    @property
    def providers(self) -> tuple[Provider, ...]:
        """Every provider, in the order the apps (in `INSTALLED_APPS` order) list them."""
        return tuple(self._providers.values())

    def get(self, provider_id: str) -> Provider:
        """Return the provider with this id.

        Raises:
            LookupError: no provider has that id.
        """
        try:
            return self._providers[provider_id]
        except KeyError:
            raise LookupError(f"No MCP provider has the id {provider_id!r}") from None

    def load(self, app_configs: Iterable[Any]) -> None:
        """Register every provider each app config lists in `mcp_providers`; problems go to `problems`."""
        for app_config in app_configs:
            for entry in getattr(app_config, "mcp_providers", None) or ():
                self.add(entry, origin=getattr(app_config, "label", "?"))

    def add(self, entry: Any, *, origin: str = "?") -> Provider | None:
        """Register one provider: a dotted path, a `Provider` subclass, or an instance.

        Returns the registered provider, or None when `entry` is refused (the reason is in `problems`).

        Raises:
            RegistryFrozen: the registry is frozen.
        """
        if self._frozen:
            raise RegistryFrozen("The provider registry is frozen: name providers in an AppConfig's mcp_providers.")
        from django.utils.module_loading import import_string

        where = f"{origin}.mcp_providers"
        path = entry if isinstance(entry, str) else f"{getattr(entry, '__module__', '?')}.{_qualname(entry)}"
        target = entry
        if isinstance(entry, str):
            try:
                target = import_string(entry)
            except ImportError as exc:
                self.problems.append(
                    (
                        "mcp_django.E009",
                        f"{where} names {_short(entry)}, which cannot be imported.",
                        f"Fix the dotted path ({_short(str(exc), 60)}).",
                    )
                )
                return None
        provider = target() if isinstance(target, type) and issubclass(target, Provider) else target
        if not isinstance(provider, (ToolProvider, ResourceProvider, PromptProvider)):
            self.problems.append(
                (
                    "mcp_django.E010",
                    f"{where} names {_short(path)}, which is not a provider.",
                    "Subclass mcp_django.providers.ToolProvider, ResourceProvider or PromptProvider.",
                )
            )
            return None
        missing = [name for name in _required(provider) if _not_overridden(provider, name)]
        if missing:
            self.problems.append(
                (
                    "mcp_django.E012",
                    f"Provider {_short(path)} does not implement {', '.join(missing)}.",
                    f"Override {' and '.join(f'{name}()' for name in missing)} in {type(provider).__name__}.",
                )
            )
            return None
        cap_problem = provider.output_cap_problem()
        if cap_problem is not None and not hasattr(provider, "problems"):  # a toolset reports its own problems
            self.problems.append(("mcp_django.E026", cap_problem, "Set it to a number of characters, or None."))
            return None
        if not provider.id:
            provider.id = path
        if not provider.name:
            provider.name = type(provider).__name__
        if provider.id in self._providers:
            self.problems.append(
                (
                    "mcp_django.E011",
                    f"Two providers have the id {_short(provider.id)}.",
                    f"Give {_short(path)} an id of its own (class attribute `id`).",
                )
            )
            return None
        self._providers[provider.id] = provider
        return provider

    def freeze(self) -> None:
        """Refuse further providers (called at the end of `MCPDjangoConfig.ready()`)."""
        self._frozen = True


def _qualname(entry: Any) -> str:
    kind = entry if isinstance(entry, type) else type(entry)
    return getattr(kind, "__qualname__", repr(entry))


def _short(text: str, limit: int = 50) -> str:
    quoted = repr(text)
    return quoted if len(quoted) <= limit else f"{quoted[: limit - 4]}...'"


def _required(provider: Provider) -> list[str]:
    names: list[str] = []
    for base in (ToolProvider, ResourceProvider, PromptProvider):
        if isinstance(provider, base):
            names += [name for name in base.required_methods if name not in names]
    return names


def _not_overridden(provider: Provider, name: str) -> bool:
    implementation = getattr(type(provider), name, None)
    return any(implementation is getattr(base, name, None) for base in (ToolProvider, ResourceProvider, PromptProvider))


provider_registry = ProviderRegistry()
"""The project's providers, loaded from every app's `mcp_providers` by `MCPDjangoConfig.ready()`."""
