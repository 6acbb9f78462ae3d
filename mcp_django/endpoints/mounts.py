"""The endpoints a URLconf mounts, by canonical path: `EndpointRegistry` and `canonical_path`.

`mcp_django.endpoints.endpoint_registry()` fills one from the root URLconf; this module knows an
endpoint only as `Mounted` (a name, a mode, whether anonymous callers may use it), so it imports
nothing of the core.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from django.core.exceptions import ImproperlyConfigured


class Mounted(Protocol):
    """An endpoint as the registry, the manifest and the admin's overlay see it (`mcp_django.endpoints.Endpoint`)."""

    @property
    def name(self) -> str: ...

    @property
    def mode(self) -> str: ...

    @property
    def allow_anonymous(self) -> bool: ...

    def sources(self) -> Sequence[Any]:
        """The sources it serves (each with a `manifest()`), in order of precedence."""
        ...


E = TypeVar("E", bound=Mounted)


def _sources_of(endpoint: Mounted) -> list[Any]:
    try:
        return [source.manifest() for source in endpoint.sources()]
    except LookupError:  # an unknown provider id: mcp_django.E014 reports it
        return []


def canonical_path(path: str) -> str:
    """The path an endpoint is known by: one leading slash, no trailing slash, `/` for the root."""
    segments = [segment for segment in path.split("/") if segment]
    return "/" + "/".join(segments)


class EndpointRegistry(Generic[E]):
    """The endpoints a URLconf mounts, each at its canonical path.

    Args:
        mounted: `(path, endpoint)` pairs in URL order; an endpoint mounted twice (with and
            without its trailing slash) counts once.

    Raises:
        ImproperlyConfigured: two endpoints share a canonical path, or a name.
    """

    def __init__(self, mounted: Iterable[tuple[str, E]]) -> None:
        self._by_path: dict[str, E] = {}
        self._paths: dict[int, str] = {}
        names: dict[str, str] = {}
        for raw_path, endpoint in mounted:
            path = canonical_path(raw_path)
            if id(endpoint) in self._paths:
                continue
            other = self._by_path.get(path)
            if other is not None:
                raise ImproperlyConfigured(
                    f"Two MCP endpoints are mounted at {path!r} ({other.name!r} and {endpoint.name!r}); "
                    "each endpoint must mount at a distinct path."
                )
            if endpoint.name in names:
                raise ImproperlyConfigured(
                    f"Two MCP endpoints are named {endpoint.name!r} (at {names[endpoint.name]!r} and {path!r}); "
                    "each endpoint needs a name of its own."
                )
            names[endpoint.name] = path
            self._by_path[path] = endpoint
            self._paths[id(endpoint)] = path

    def __iter__(self) -> Any:
        return iter(self.endpoints)

    def __len__(self) -> int:
        return len(self._by_path)

    @property
    def endpoints(self) -> list[E]:
        """Every endpoint, sorted by path."""
        return [self._by_path[path] for path in sorted(self._by_path)]

    def path_of(self, endpoint: E) -> str:
        """The canonical path `endpoint` is mounted at.

        Raises:
            LookupError: the endpoint is not mounted.
        """
        try:
            return self._paths[id(endpoint)]
        except KeyError:
            raise LookupError(f"{endpoint!r} is not mounted in the URLconf") from None

    def get(self, name: str) -> E:
        """Return the endpoint called `name`, or mounted at the path `name`.

        Raises:
            LookupError: no mounted endpoint has that name or path.
        """
        for endpoint in self._by_path.values():
            if endpoint.name == name:
                return endpoint
        found = self._by_path.get(canonical_path(name))
        if found is not None:
            return found
        known = ", ".join(repr(endpoint.name) for endpoint in self.endpoints) or "none"
        raise LookupError(f"No MCP endpoint is named {name!r} (mounted: {known})")

    def at(self, path: str) -> E | None:
        """The endpoint mounted exactly at `path` (canonicalised), or None."""
        return self._by_path.get(canonical_path(path))

    def resolve(self, path: str) -> E | None:
        """The endpoint serving `path`: the longest mounted path that is a prefix of it on a segment boundary.

        `/mcp` covers `/mcp` and `/mcp/anything`, never `/mcpx`; `/` covers every path.
        """
        candidate = canonical_path(path)
        while True:
            found = self._by_path.get(candidate)
            if found is not None or candidate == "/":
                return found
            candidate = candidate.rsplit("/", 1)[0] or "/"

    def manifest(self) -> dict[str, Any]:
        """`{"endpoints": [{"name", "path", "mode", "anonymous", "sources"}, ...]}`, sorted by path.

        `sources` lists what each endpoint composes: `{"kind": "registry"|"providers"|"remote", "name",
        "namespace"}` in order of precedence.
        """
        return {
            "endpoints": [
                {
                    "name": endpoint.name,
                    "path": path,
                    "mode": endpoint.mode,
                    "anonymous": endpoint.allow_anonymous,
                    "sources": _sources_of(endpoint),
                }
                for path, endpoint in sorted(self._by_path.items())
            ]
        }


def mounted_in(patterns: Iterable[Any], kind: type[E], prefix: str = "") -> Iterable[tuple[str, E]]:
    """(route, endpoint) for every view of `patterns` (and the URLconfs they include) serving a `kind`."""
    from django.urls import URLResolver

    for pattern in patterns:
        route = prefix + _route_text(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from mounted_in(pattern.url_patterns, kind, route)
            continue
        endpoint = getattr(pattern.callback, "view_initkwargs", {}).get("endpoint")
        if isinstance(endpoint, kind):
            yield route, endpoint


def _route_text(pattern: Any) -> str:
    """A URL pattern's path text; regular expressions lose their anchors."""
    text = str(pattern)
    if type(pattern).__name__ == "RegexPattern":
        text = text.removeprefix("^").removesuffix("$").removesuffix(r"\Z")
    return text
