"""`MCP_DJANGO["SERVERS"]`: each remote MCP server by name, resolved into a `ServerConfig` by its `BACKEND`.

The way Django's `TaskBackendHandler` reads `TASKS` (and `CacheHandler` `CACHES`): an alias dict whose
entries may name a `BACKEND` import string, the class of the connection that talks to the server::

    MCP_DJANGO = {
        "SERVERS": {
            "github": {"URL": "https://api.githubcopilot.com/mcp/", "TOKEN": "..."},
            "files": {"COMMAND": ["npx", "@modelcontextprotocol/server-filesystem", "/srv"]},
            "local": {"BACKEND": "myapp.mcp.InProcessConnection", "ENDPOINT": "myapp.mcp.endpoint"},
        },
    }

    from mcp_django.client.servers import servers

    servers["github"]                          # its ServerConfig
    servers.backend("files")                   # StdioConnection

An entry without a `BACKEND` is Streamable HTTP when it has a `URL` and a stdio subprocess when it has a
`COMMAND`. The backend says which keys it reads beyond `COMMON_KEYS` and what is wrong with them
(`RemoteConnection.config_problems`, shown by the system checks), so a new kind of remote is one module.
The `AUTH` key (per-user OAuth, or the site's client credentials) is read here for every kind; the
checks refuse it for a backend that cannot sign in. docs/client.md, docs/gateway.md.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, Final

from django.utils.module_loading import import_string

from mcp_django.client.conf import client_settings
from mcp_django.client.config import (
    COMMON_KEYS,
    HTTP_BACKEND,
    POLICY_KEYS,
    STDIO_BACKEND,
    ClientAuth,
    ServerConfig,
    UpstreamOAuth,
)
from mcp_django.client.remote import RemoteConnection

INFERRED: Final = {"URL": HTTP_BACKEND, "COMMAND": STDIO_BACKEND}
"""The `BACKEND` an entry without one gets, by the key it has (exactly one of them)."""


@functools.cache
def import_backend(path: str) -> type[RemoteConnection]:
    """The `RemoteConnection` class a `BACKEND` import path names.

    Raises:
        ImportError: nothing there. TypeError: something that is not a `RemoteConnection` class.
    """
    backend = import_string(path)
    if not (isinstance(backend, type) and issubclass(backend, RemoteConnection)):
        raise TypeError(f"BACKEND {path!r} is not a RemoteConnection class")
    return backend


def backend_path(config: Mapping[str, Any]) -> str | None:
    """The import path of the entry's backend: its `BACKEND`, else inferred from `URL` or `COMMAND` (None if
    it has both or neither)."""
    if "BACKEND" in config:
        return str(config["BACKEND"])
    given = [INFERRED[key] for key in INFERRED if config.get(key)]
    return given[0] if len(given) == 1 else None


def backend_of(config: Mapping[str, Any]) -> type[RemoteConnection] | None:
    """The backend class of the entry `config`; None when it names none that can be imported."""
    path = backend_path(config)
    try:
        return None if path is None else import_backend(path)
    except (ImportError, TypeError):
        return None


def _backend_problem(config: Mapping[str, Any]) -> str | None:
    path, named = backend_path(config), config.get("BACKEND")
    if path is None:
        return "needs exactly one of URL and COMMAND" if named is None else None
    if not isinstance(named, (str, type(None))):
        return "BACKEND must be an import path"
    shown = path if len(path) <= 40 else f"...{path[-37:]}"
    try:
        import_backend(path)
    except ImportError:
        return f"BACKEND {shown!r} cannot be imported"
    except TypeError:
        return f"BACKEND {shown!r} is not a RemoteConnection class"
    return None


def config_problems(config: Any) -> list[str]:
    """What is wrong with one server entry (without its `POLICY_KEYS`), in words a system check can show."""
    if not isinstance(config, Mapping):
        return ["must be a dict with URL or COMMAND"]
    backend = backend_of(config)
    known = COMMON_KEYS | (backend.config_keys if backend is not None else frozenset(INFERRED))
    problems = [f"unknown key {key!r}" for key in config if key not in known]
    problem = _backend_problem(config)
    if problem is not None:
        problems.append(problem)
    if backend is not None:
        problems += backend.config_problems(config)
    headers = config.get("HEADERS", {})
    if not (isinstance(headers, Mapping) and all(isinstance(value, str) for value in headers.values())):
        problems.append("HEADERS must be a dict of strings")
    for key in ("CONNECT_TIMEOUT", "READ_TIMEOUT"):
        value = config.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            problems.append(f"{key} must be a positive number of seconds")
    return problems


def location(config: Mapping[str, Any]) -> str | None:
    """Where the entry's server is, in a few words (its URL, its command line); None for a broken entry."""
    backend = backend_of(config)
    if backend is None or backend.config_problems(config):
        return None
    return backend.location(config)


def server_config(spec: str | Mapping[str, Any] | ServerConfig, *, name: str | None = None) -> ServerConfig:
    """The `ServerConfig` a name, an entry or itself describes: a name is an `MCP_DJANGO["SERVERS"]` entry.

    Timeouts left out come from `REMOTE_CONNECT_TIMEOUT` and `REMOTE_READ_TIMEOUT`.

    Raises:
        LookupError: a name that `MCP_DJANGO["SERVERS"]` does not have.
        ValueError: an entry with problems (`config_problems`).
    """
    if isinstance(spec, ServerConfig):
        return spec
    if isinstance(spec, str):
        entries = client_settings.SERVERS
        if spec not in entries:
            raise LookupError(f"No server named {spec!r} in MCP_DJANGO['SERVERS']")
        name, spec = name or spec, entries[spec]
        if isinstance(spec, Mapping):
            spec = {key: value for key, value in spec.items() if key not in POLICY_KEYS}
    problems = config_problems(spec)
    if problems:
        raise ValueError(f"Remote server {name or '(unnamed)'}: {'; '.join(problems)}")
    assert isinstance(spec, Mapping)
    path = backend_path(spec)
    assert path is not None
    backend = import_backend(path)
    fields = backend.configure(spec)
    return ServerConfig(
        name=name or backend.location(spec),
        headers=tuple(sorted((spec.get("HEADERS") or {}).items())),
        token=spec.get("TOKEN"),
        connect_timeout=float(spec.get("CONNECT_TIMEOUT") or client_settings.REMOTE_CONNECT_TIMEOUT),
        read_timeout=float(spec.get("READ_TIMEOUT") or client_settings.REMOTE_READ_TIMEOUT),
        protocol_version=spec.get("PROTOCOL_VERSION"),
        oauth=oauth_of(spec.get("AUTH")),
        auth=client_auth_of(spec.get("AUTH"), fields.get("url")),
        backend=path,
        **fields,
    )


class ServerHandler:
    """The `SERVERS` setting as a mapping of names to `ServerConfig`s (Django's `BaseConnectionHandler` shape).

    Each entry is read when asked for, so a settings change (or the admin's) is seen at once.
    """

    settings_name: Final = "SERVERS"

    @property
    def settings(self) -> Mapping[str, Any]:
        """The entries, as configured (`{}` when the setting is not a dict: check `mcp_django_gateway.E040`)."""
        entries = getattr(client_settings, self.settings_name)
        return entries if isinstance(entries, Mapping) else {}

    def __getitem__(self, alias: str) -> ServerConfig:
        """The server named `alias`.

        Raises:
            LookupError: no such entry. ValueError: the entry has problems.
        """
        return server_config(alias)

    def __contains__(self, alias: object) -> bool:
        return alias in self.settings

    def __iter__(self) -> Iterator[str]:
        return iter(self.settings)

    def backend(self, alias: str) -> type[RemoteConnection] | None:
        """The backend class of the entry named `alias` (None for a broken one)."""
        entry = self.settings.get(alias)
        return backend_of(entry) if isinstance(entry, Mapping) else None


servers: Final = ServerHandler()
"""`MCP_DJANGO["SERVERS"]`: `servers["github"]` is that entry's `ServerConfig`."""


# -- AUTH: per-user OAuth, or the site's own client credentials -----------------------------------

OAUTH_KEYS: Final = frozenset({"TYPE", "CLIENT_ID", "CLIENT_SECRET", "SCOPES"})
"""The keys of an `AUTH` dict (`{"TYPE": "oauth", ...}`); `"AUTH": "oauth"` is `{"TYPE": "oauth"}`."""
CLIENT_CREDENTIALS_KEYS: Final = frozenset(
    {"TYPE", "CLIENT_ID", "CLIENT_SECRET", "PRIVATE_KEY", "SIGNING_ALGORITHM", "SCOPES"}
)
"""The keys of an `AUTH` dict with `"TYPE": "client_credentials"`: the site's own client at the remote's server."""
SIGNING_ALGORITHMS: Final = frozenset({"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "EdDSA"})
_client_auths: dict[tuple[str, str], ClientAuth] = {}


def sends_own_authorization(config: Mapping[str, Any]) -> bool:
    """Whether a server entry carries an `Authorization` of its own: a `TOKEN`, or such a header in `HEADERS`."""
    headers = config.get("HEADERS") or {}
    return bool(config.get("TOKEN")) or (
        isinstance(headers, Mapping) and "authorization" in {str(key).lower() for key in headers}
    )


def signs_in(config: Mapping[str, Any]) -> bool:
    """Whether the entry's backend can take OAuth (`AUTH`); True for a broken entry (other checks report it)."""
    backend = backend_of(config)
    return backend is None or backend.signs_in


def oauth_of(auth: Any) -> UpstreamOAuth | None:
    """The `UpstreamOAuth` an entry's `AUTH` value asks for: None without one.

    Raises:
        ValueError: a malformed `AUTH` (checks `mcp_django_gateway.E165` and `E168` say what).
    """
    if auth is None:
        return None
    if auth == "oauth":
        return UpstreamOAuth()
    if isinstance(auth, Mapping) and auth.get("TYPE") == "client_credentials":
        return None  # the connection's own client: `client_auth_of`
    if not (isinstance(auth, Mapping) and auth.get("TYPE") == "oauth" and set(auth) <= OAUTH_KEYS):
        raise ValueError("AUTH must be 'oauth' or a dict with TYPE 'oauth'")
    client_id, secret, scopes = auth.get("CLIENT_ID"), auth.get("CLIENT_SECRET"), auth.get("SCOPES", ())
    if not (
        (client_id is None or (isinstance(client_id, str) and client_id))
        and (secret is None or (isinstance(secret, str) and client_id))
        and isinstance(scopes, (list, tuple))
        and all(isinstance(scope, str) and scope and " " not in scope for scope in scopes)
    ):
        raise ValueError("AUTH has a bad CLIENT_ID, CLIENT_SECRET or SCOPES")
    return UpstreamOAuth(client_id=client_id, client_secret=secret, scopes=tuple(scopes))


def client_credentials_problem(auth: Mapping[str, Any]) -> str | None:
    """What is wrong with a `{"TYPE": "client_credentials", ...}` `AUTH` dict, in words; None if nothing."""
    unknown = sorted(str(key) for key in auth if key not in CLIENT_CREDENTIALS_KEYS)
    if unknown:
        return f"unknown key {unknown[0]!r}"
    client_id, secret, key = auth.get("CLIENT_ID"), auth.get("CLIENT_SECRET"), auth.get("PRIVATE_KEY")
    if not (isinstance(client_id, str) and client_id):
        return "CLIENT_ID must be a non-empty string"
    if (secret is None) == (key is None) or not isinstance(secret if key is None else key, str):
        return "needs one of CLIENT_SECRET and PRIVATE_KEY (a string)"
    if auth.get("SIGNING_ALGORITHM", "ES256") not in SIGNING_ALGORITHMS:
        return f"SIGNING_ALGORITHM must be one of {', '.join(sorted(SIGNING_ALGORITHMS))}"
    scopes = auth.get("SCOPES", ())
    if not (isinstance(scopes, (list, tuple)) and all(isinstance(s, str) and s and " " not in s for s in scopes)):
        return "SCOPES must be a list of words"
    return None


def client_auth_of(auth: Any, url: str | None) -> ClientAuth | None:
    """The `ClientAuth` an entry's `AUTH` value gives its connections (client credentials); None for others.

    The same configuration gives the same object, so its connections share one cached token.

    Raises:
        ValueError: a malformed client credentials `AUTH` (check `mcp_django.E240` says what).
    """
    if not (isinstance(auth, Mapping) and auth.get("TYPE") == "client_credentials"):
        return None
    problem = client_credentials_problem(auth)
    if problem is not None:
        raise ValueError(f"AUTH client_credentials: {problem}")
    marker = (str(url), repr(sorted((str(key), repr(value)) for key, value in auth.items())))
    known = _client_auths.get(marker)
    if known is None:
        from mcp_django.client.auth.authorization import ClientKey
        from mcp_django.client.auth.oauth import ClientCredentials, OAuthClientAuth

        key = auth.get("PRIVATE_KEY")
        grant = ClientCredentials(
            auth["CLIENT_ID"],
            secret=auth.get("CLIENT_SECRET"),
            key=ClientKey(key, auth.get("SIGNING_ALGORITHM", "ES256")) if key else None,
        )
        known = _client_auths[marker] = OAuthClientAuth(grant, scopes=tuple(auth.get("SCOPES", ())))
    return known
