"""Protocol extensions: what an extension brings to the endpoints that serve it (SEP-2133's `extensions`).

An extension is an `Extension` subclass named by an import string, in `MCP_DJANGO["EXTENSIONS"]` or in
an app config's `mcp_extensions`, the way providers are named in `mcp_providers`::

    class ShopConfig(AppConfig):
        name = "shop"
        mcp_extensions = ["shop.mcp.ReceiptsExtension"]

Each endpoint asks each installed extension what it serves there: `capability()` (None: nothing here),
then its `methods()`, `hooks()`, `sources()` and `observers()`; a tool declared with `task=` asks the endpoint's
`tool_runner`. Two extensions may share an identifier as alternatives: an endpoint serves the first
of them whose `capability()` applies there (the local tasks and a gateway's remote ones are such a
pair); two that both apply to one endpoint are check E120. The core names no extension: the tasks
extension (`mcp_django.tasks`) is one like any other. docs/extensions.md.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from django.core.checks import CheckMessage, Error, Tags, register

from mcp_django.checks.support import short
from mcp_django.conf import SETTING_NAME, MCPSettings, mcp_settings
from mcp_django.declarations.tools import ToolRunner
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.protocol.hooks import OperationHook
from mcp_django.protocol.observers import ClientObserver, MessageObserver
from mcp_django.sources import Source

if TYPE_CHECKING:
    from django.apps import AppConfig

__all__ = [
    "Extension",
    "ExtensionProblem",
    "MCPSettings",
    "MethodSpec",
    "ServedExtensions",
    "ToolRunner",
    "installed_extensions",
    "load_extensions",
    "offered_extensions",
]

ExtensionProblem = tuple[str, str, str]
"""`(check id, message, hint)`: a mistake found while loading the extensions, reported by `check_extensions`."""

_DUPLICATE: Final = "mcp_django.E120"
_UNIMPORTABLE: Final = "mcp_django.E121"
_NOT_AN_EXTENSION: Final = "mcp_django.E122"


class Extension:
    """A protocol extension that endpoints serve: its identifier, advertisement, methods and hooks.

    Subclass it, set `identifier` and override what the extension needs; every method but
    `capability()` defaults to bringing nothing. One instance serves every endpoint, so keep no
    per-request state on `self`.
    """

    identifier: str = ""
    """The extension's identifier, `vendor/name` (`"io.modelcontextprotocol/tasks"`)."""

    advertised: bool = True
    """Whether clients are told: False for an extension of the server alone (telemetry), which serves an
    endpoint (its capability is not None) without a capability under `capabilities.extensions`."""

    settings: MCPSettings | None = None
    """The `MCP_DJANGO` keys the extension owns (an `MCPSettings` of its own: defaults and value rules), which
    `manage.py check` then accepts and checks and `mcp_settings` answers for; None: it has none. An app
    names its own on its `AppConfig` instead (`mcp_settings = ["shop.conf.shop_settings"]`)."""

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """What this endpoint advertises under `capabilities.extensions[identifier]`.

        None: the extension is not served on this endpoint, and none of its methods, hooks or
        sources are either (an alternative of the same identifier may be: the first one that applies
        is served). The default serves it everywhere with an empty capability.
        """
        return {}

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        """Request methods the extension adds to the endpoint (they may not replace core methods)."""
        return ()

    def hooks(self, endpoint: Any) -> Sequence[OperationHook]:
        """Operation hooks, run inside the overlay's (the admin's switches) and outside the interceptor chain."""
        return ()

    def sources(self, endpoint: Any) -> Sequence[Source]:
        """More sources the endpoint's `CompositeBackend` serves, after its registry and providers."""
        return ()

    def observers(self, endpoint: Any) -> Sequence[MessageObserver]:
        """Observers of every message the endpoint serves, on every transport (telemetry, structured logs)."""
        return ()

    def client_observers(self) -> Sequence[ClientObserver]:
        """Observers of every request this process sends to a remote MCP server (gateways, hubs, `MCPClient`).

        Asked once per process, of every installed extension (not per endpoint: a view's `MCPClient`
        serves none), after the settings change again.
        """
        return ()

    def tool_runner(self) -> ToolRunner | None:
        """What runs a tool declared with `task=` (instead of running it inline); None: not this extension."""
        return None

    def check(self) -> list[CheckMessage]:
        """The extension's system checks, run with the project's (`manage.py check`)."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identifier!r}>"


class ServedExtensions:
    """What the extensions served on one endpoint bring it, gathered once: capabilities, methods, hooks,
    sources and the tool runner.

    Args:
        endpoint: the endpoint each extension is asked about.
        added: the endpoint's own extensions (instances, classes or dotted paths), offered besides the
            installed ones; those of an installed identifier take the place of the installed ones.
        excluded: identifiers of installed extensions the endpoint does not offer.

    Raises:
        ValueError: `added` names something that is not an extension (check E122 says which).
    """

    def __init__(self, endpoint: Any, added: Sequence[Any] = (), excluded: Collection[str] = ()) -> None:
        extensions, problems = offered_extensions(added, excluded)
        if problems:
            raise ValueError(f"Endpoint {getattr(endpoint, 'name', endpoint)!r}: {problems[0][1]}")
        self.offered: tuple[Extension, ...] = extensions
        """Every extension offered here, served or not (`capability()` None), in order."""
        served: dict[str, tuple[Extension, Mapping[str, Any]]] = {}
        self.conflicts: list[tuple[Extension, Extension]] = []
        """Alternatives that apply here besides the one served: `(served, left out)` pairs, check E120."""
        for extension in extensions:
            capability = extension.capability(endpoint)
            if capability is not None:
                first = served.setdefault(extension.identifier, (extension, capability))[0]
                if first is not extension:
                    self.conflicts.append((first, extension))
        self.extensions: tuple[Extension, ...] = tuple(extension for extension, _ in served.values())
        """The served extensions, one an identifier (the first offered one that applies), in order."""
        self.capabilities: dict[str, Mapping[str, Any]] = {
            extension.identifier: cap for extension, cap in served.values() if extension.advertised
        }
        """What goes under `capabilities.extensions`, by identifier."""
        self.methods = tuple(method for extension in self.extensions for method in extension.methods(endpoint))
        self.hooks = tuple(hook for extension in self.extensions for hook in extension.hooks(endpoint))
        self.sources = [source for extension in self.extensions for source in extension.sources(endpoint)]
        self.observers = tuple(observer for extension in self.extensions for observer in extension.observers(endpoint))
        runners = (extension.tool_runner() for extension in self.extensions)
        self.tool_runner: ToolRunner | None = next((runner for runner in runners if runner is not None), None)
        """The first served extension's tool runner, if any has one."""

    def __repr__(self) -> str:
        return f"<ServedExtensions: {', '.join(self.capabilities) or 'none'}>"

    def handler_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """`MessageHandler` arguments (`extra_methods`, `extensions`, `observers`) with the served extensions' added."""
        if not self.extensions:
            return dict(options)
        return {
            **options,
            "extra_methods": (*options.get("extra_methods", ()), *self.methods),
            "extensions": {**options.get("extensions", {}), **self.capabilities},
            "observers": (*options.get("observers", ()), *self.observers),
        }


_installed: tuple[Extension, ...] | None = None
_problems: list[ExtensionProblem] = []


def installed_extensions() -> tuple[Extension, ...]:
    """Every installed extension: `MCP_DJANGO["EXTENSIONS"]`, then each app's `mcp_extensions`, in order.

    Loaded on first use (the app registry must be ready) and again after `MCP_DJANGO` changes; an entry
    that cannot be loaded, or names an extension again, is left out and reported by check E120-E122.
    Extensions of one identifier are alternatives: each endpoint serves the first that applies to it.
    """
    global _installed
    if _installed is None:
        from django.apps import apps

        _installed, problems = load_extensions(mcp_settings.EXTENSIONS, apps.get_app_configs())
        _problems[:] = problems
    return _installed


def offered_extensions(
    added: Sequence[Any] = (), excluded: Collection[str] = ()
) -> tuple[tuple[Extension, ...], list[ExtensionProblem]]:
    """The extensions an endpoint offers: the installed ones but the `excluded` identifiers, then `added`.

    The added extensions of an installed identifier take the place of every installed one of it (the
    endpoint's own configuration of it); the problems are those of loading `added` (E120-E122).
    """
    own, problems = load_extensions(added, where="the endpoint's extensions=")
    own_identifiers = {extension.identifier for extension in own}
    replaced: set[str] = set()
    offered: list[Extension] = []
    for extension in installed_extensions():
        identifier = extension.identifier
        if identifier in excluded or identifier in replaced:
            continue
        if identifier in own_identifiers:
            replaced.add(identifier)
            offered += [mine for mine in own if mine.identifier == identifier]
        else:
            offered.append(extension)
    return (*offered, *(mine for mine in own if mine.identifier not in replaced)), problems


def load_extensions(
    entries: Iterable[Any], app_configs: Iterable[AppConfig] = (), where: str = f"{SETTING_NAME}['EXTENSIONS']"
) -> tuple[tuple[Extension, ...], list[ExtensionProblem]]:
    """The extensions the settings' `entries` and the app configs' `mcp_extensions` name, and the problems found.

    An entry is an import string, an `Extension` subclass or an instance. Extensions of one identifier
    are kept, in order, as alternatives; the same extension (class) named again is a problem (E120),
    and the first is kept. `where` is how the hints name the list of `entries`.
    """
    named = [(entry, where) for entry in entries]
    for app_config in app_configs:
        named += [(entry, f"{app_config.label}.mcp_extensions") for entry in getattr(app_config, "mcp_extensions", ())]
    found: list[Extension] = []
    problems: list[ExtensionProblem] = []
    for entry, where in named:
        extension = _extension(entry, where, problems)
        if extension is None:
            continue
        if any(type(extension) is type(other) for other in found):
            message = f"Two extensions have the identifier {short(extension.identifier, 40)}."
            problems.append((_DUPLICATE, message, f"Remove one of them from {where} (the first one is served)."))
            continue
        found.append(extension)
    return tuple(found), problems


def conflict_problem(served: Extension, left_out: Extension) -> ExtensionProblem:
    """E120 for two alternatives of one identifier that both apply to one endpoint (the first is served)."""
    first, second = type(served).__name__, type(left_out).__name__
    return (
        _DUPLICATE,
        f"Two extensions have the identifier {short(served.identifier, 40)} here.",
        f"{first} is served: make {second}.capability() None here, or remove one.",
    )


def _extension(entry: Any, where: str, problems: list[ExtensionProblem]) -> Extension | None:
    from django.utils.module_loading import import_string

    target = entry
    if isinstance(entry, str):
        try:
            target = import_string(entry)
        except ImportError as error:
            problems.append(
                (
                    _UNIMPORTABLE,
                    f"Extension {short(entry, 50)} cannot be imported.",
                    f"Fix the dotted path in {where} ({short(str(error), 60)}).",
                )
            )
            return None
    extension = target() if isinstance(target, type) and issubclass(target, Extension) else target
    if not isinstance(extension, Extension) or not isinstance(extension.identifier, str) or not extension.identifier:
        problems.append(
            (
                _NOT_AN_EXTENSION,
                f"{short(entry, 50)} is not an extension.",
                f"Name a subclass of mcp_django.extensions.Extension with an identifier in {where}.",
            )
        )
        return None
    return extension


def _forget() -> None:
    global _installed
    _installed = None


mcp_settings.on_reload(_forget)


@register(Tags.compatibility)
def check_extensions(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E120-E122 for extensions that could not be installed, then every installed extension's own checks."""
    extensions = installed_extensions()
    messages: list[CheckMessage] = [Error(message, hint=hint, id=id_) for id_, message, hint in _problems]
    for extension in extensions:
        messages += extension.check()
    return messages
