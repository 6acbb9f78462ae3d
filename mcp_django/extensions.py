"""Protocol extensions: what an extension brings to the endpoints that serve it (SEP-2133's `extensions`).

An extension is an `Extension` subclass named by an import string, in `MCP_DJANGO["EXTENSIONS"]` or in
an app config's `mcp_extensions`, the way providers are named in `mcp_providers`::

    class ShopConfig(AppConfig):
        name = "shop"
        mcp_extensions = ["shop.mcp.ReceiptsExtension"]

Each endpoint asks each installed extension what it serves there: `capability()` (None: nothing here),
then its `methods()`, `hooks()`, `sources()` and `observers()`; a tool declared with `task=` asks the endpoint's
`tool_runner`. An identifier names one extension (two installed ones are check E120). This seam is the
only way to add protocol methods: SEP-2624's interceptor methods are an extension too
(`mcp_django.interceptors.protocol.InterceptorsExtension`), and the `{"SERVER": ...}` entries of
interceptor lists run only where an installed extension's `interceptor_servers()` runs them (the
gateway's). The core names no extension: the tasks extension (`mcp_django.tasks`) is one like any
other. docs/extensions.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from django.core.checks import CheckMessage, Error, Tags, register
from django.core.exceptions import ImproperlyConfigured

from mcp_django.checks.support import short
from mcp_django.conf import SETTING_NAME, MCPSettings, mcp_settings
from mcp_django.declarations.tools import ToolRunner
from mcp_django.interceptors import chain_plan
from mcp_django.interceptors.config import is_server_entry
from mcp_django.interceptors.hook import InterceptorHook
from mcp_django.protocol.features.base import BOTH_ERAS, MethodSpec
from mcp_django.protocol.hooks import OperationHook
from mcp_django.protocol.observers import ClientObserver, MessageObserver
from mcp_django.protocol.versions import Era
from mcp_django.sources import Source

if TYPE_CHECKING:
    from django.apps import AppConfig

__all__ = [
    "Extension",
    "ExtensionProblem",
    "MCPSettings",
    "MethodSpec",
    "ServedExtensions",
    "ServerEntries",
    "ToolRunner",
    "chain_options",
    "installed_extensions",
    "load_extensions",
    "offered_extensions",
]

ExtensionProblem = tuple[str, str, str]
"""`(check id, message, hint)`: a mistake found while loading the extensions, reported by `check_extensions`."""

ServerEntries = Callable[[Sequence[Any], Sequence[Any], str], Any]
"""What runs an interceptor list that names remote servers: `(local entries, whole list, label)` -> the
operation hook running the merged chain (None: the list names no server after all)."""

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

    eras: frozenset[Era] = BOTH_ERAS
    """The protocol eras the extension is defined in, and advertised in: `STATELESS_ONLY` for one that exists
    in 2026-07-28 and later only, which a handshake-era `initialize` then does not list (its methods'
    own `eras` say where they answer)."""

    settings: MCPSettings | None = None
    """The `MCP_DJANGO` keys the extension owns (an `MCPSettings` of its own: defaults and value rules), which
    `manage.py check` then accepts and checks and `mcp_settings` answers for; None: it has none. An app
    names its own on its `AppConfig` instead (`mcp_settings = ["shop.conf.shop_settings"]`)."""

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """What this endpoint advertises under `capabilities.extensions[identifier]`.

        None: the extension is not served on this endpoint, and none of its methods, hooks or
        sources are either. The default serves it everywhere with an empty capability.
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

    def interceptor_servers(self) -> ServerEntries | None:
        """What runs the `{"SERVER": ...}` entries of interceptor lists (remote interceptor servers); None: not this.

        Asked of every installed extension, in order, when a list (the settings', an endpoint's, an
        `MCPClient`'s) names servers; the first answer runs them (the gateway's, docs/remote-interceptors.md).
        """
        return None

    def server_sources(self, endpoint: Any) -> Sequence[Source] | None:
        """The sources of the remote servers an endpoint names (`servers=`, `backend=`); None: not this extension.

        Asked of the extensions the endpoint offers, in order, once per endpoint, whether served there or not;
        the first answer is kept (the gateway's: docs/federation.md). Without one, `servers=` is check E144.
        """
        return None

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
        served = [(extension, extension.capability(endpoint)) for extension in extensions]
        self.extensions: tuple[Extension, ...] = tuple(extension for extension, cap in served if cap is not None)
        """The served extensions (those whose `capability()` is not None here), in order."""
        self.capabilities: dict[str, Mapping[str, Any]] = {
            extension.identifier: cap for extension, cap in served if cap is not None and extension.advertised
        }
        """What goes under `capabilities.extensions`, by identifier."""
        self.stateless_only: tuple[str, ...] = tuple(
            extension.identifier for extension in self.extensions if Era.HANDSHAKE not in extension.eras
        )
        """The identifiers among `capabilities` a handshake-era `initialize` does not advertise."""
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
        """`MessageHandler` arguments (`extra_methods`, `extensions`, `stateless_extensions`, `observers`) with the
        served extensions' added."""
        if not self.extensions:
            return dict(options)
        return {
            **options,
            "extra_methods": (*options.get("extra_methods", ()), *self.methods),
            "extensions": {**options.get("extensions", {}), **self.capabilities},
            "stateless_extensions": (*options.get("stateless_extensions", ()), *self.stateless_only),
            "observers": (*options.get("observers", ()), *self.observers),
        }


_installed: tuple[Extension, ...] | None = None
_problems: list[ExtensionProblem] = []
_discovered: list[Any] = []


def discover(entry: Any) -> None:
    """Install an extension found by discovery rather than named in settings (an OpenTelemetry instrumentor
    the agent found, `opentelemetry-instrument`), after the named ones: an identifier they name keeps theirs.

    An endpoint still leaves it out with its excluded identifiers, as any installed extension.
    """
    global _installed
    if entry not in _discovered:
        _discovered.append(entry)
        _installed = None


def undiscover(entry: Any) -> None:
    """Take back what `discover(entry)` installed."""
    global _installed
    if entry in _discovered:
        _discovered.remove(entry)
        _installed = None


def installed_extensions() -> tuple[Extension, ...]:
    """Every installed extension: `MCP_DJANGO["EXTENSIONS"]`, then each app's `mcp_extensions`, in order, then
    the discovered ones (`discover`) whose identifiers those do not name.

    Loaded on first use (the app registry must be ready) and again after `MCP_DJANGO` changes; an entry
    that cannot be loaded, or has the identifier of one before it, is left out and reported by check E120-E122.
    """
    global _installed
    if _installed is None:
        from django.apps import apps

        named, problems = load_extensions(mcp_settings.EXTENSIONS, apps.get_app_configs())
        found, found_problems = load_extensions(_discovered, where="discovery")
        identifiers = {extension.identifier for extension in named}
        _installed = (*named, *(extension for extension in found if extension.identifier not in identifiers))
        _problems[:] = [*problems, *found_problems]
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

    An entry is an import string, an `Extension` subclass or an instance. An identifier names one
    extension: a second one of it is a problem (E120), and the first is kept. `where` is how the hints
    name the list of `entries`.
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
        if any(extension.identifier == other.identifier for other in found):
            message = f"Two extensions have the identifier {short(extension.identifier, 40)}."
            problems.append((_DUPLICATE, message, f"Remove one of them from {where} (the first one is served)."))
            continue
        found.append(extension)
    return tuple(found), problems


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


def chain_options(config: Any, *, label: str | None = None) -> dict[str, Any]:
    """The interceptor chain of a list (`MCP_DJANGO["INTERCEPTORS"]`'s format): `plan`, its local entries'
    plan (what SEP-2624's methods serve), and `hook`, what runs the chain (absent: nothing to run).

    When the list names remote interceptor servers (`{"SERVER": ...}`), the hook of the first installed
    extension whose `interceptor_servers()` runs them runs the merged chain instead.

    Raises:
        InterceptorConfigError: the list has mistakes.
        ImproperlyConfigured: it names servers and no installed extension runs them.
    """
    servers = isinstance(config, (list, tuple)) and any(is_server_entry(raw) for raw in config)
    local = [raw for raw in config if not is_server_entry(raw)] if servers else config
    plan = chain_plan(local, label=label)
    options: dict[str, Any] = {"plan": plan}
    if plan:
        options["hook"] = InterceptorHook(plan)
    if servers:
        builder = next(filter(None, (extension.interceptor_servers() for extension in installed_extensions())), None)
        if builder is None:
            raise ImproperlyConfigured(f"{label or 'The interceptor list'} names servers, and nothing runs them")
        hook = builder(local, config, label or f"{SETTING_NAME}['INTERCEPTORS']")
        if hook is not None:
            options["hook"] = hook
    return options


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
