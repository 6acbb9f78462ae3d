"""`RemoteSource`: a remote MCP server as a source, beside the registry and the providers.

The protocol core serves the endpoint's clients in their era and runs the endpoint's hooks (the admin's
switches, the interceptor chain, the audit trail) around each operation; `CompositeBackend` reaches the
remote through this source as it reaches any other. It adds what fronting a server takes:

- its own least scope (`scope`), then per tool-name pattern (`tool_scopes`);
- a namespace (`namespace="gh"`), so one endpoint composes many servers: tools and prompts are listed
  as `gh_<name>`, resources and templates as `gh+<uri>` (the namespace put before the URI's scheme,
  which keeps it a URI and is undone by removing it); without one, names pass unchanged (a gateway);
- a tool whose `inputSchema` is missing or not an object schema is listed as `{"type": "object"}`;
- lists are fetched whole (following the remote cursors), cleaned and bounded (`listing.Listing`,
  `limits`), their tools and prompts pinned (`pinning`: a changed definition is withheld until an admin
  approves it), and paged again by the core; the `x-mcp-header` arguments of annotated tools are remembered
  (the latest `REMOTE_MAX_LIST_ITEMS`) for the HTTP transport's `Mcp-Param-*` check;
- in a composition that `tolerates_down` (a hub), a remote never fails a list: one that does not
  answer a list (or its handshake) within `REMOTE_LIST_TIMEOUT` or cannot be reached drops out of
  every list until its circuit lets it be asked again, one that answers a list with an error or
  nonsense drops out of that list, each with a logged reason, while the other sources answer
  (`gateway.health`); a call to one of its tools answers "backend unavailable";
- each operation is forwarded in the caller's era (`mcp_django.gateway.forwarding`): progress and log
  messages reach the caller's stream, a remote `input_required` is asked of the caller, results lose
  the remote's era-bound fields.

The remote's server info, instructions and features are the source's `description()` (read by
`prepare()`): the hook an endpoint mirrors them from. Only the server's own credentials (settings) reach
the remote, or, for a server with `"AUTH": "oauth"`, the caller's own token for it (`gateway.upstream`: a
caller who has not connected gets a tool error naming the page to connect on); nothing of the caller's
request but the operation's params does. docs/federation.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import logging
import re
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from mcp_django.client.conf import client_settings
from mcp_django.client.config import ServerConfig
from mcp_django.client.connection import connect
from mcp_django.client.limits import call_deadline, remember
from mcp_django.client.remote import RemoteConnection
from mcp_django.client.servers import server_config
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.gateway.events import RemoteEvents
from mcp_django.gateway.forwarding import ensure_input_schemas, forward, forward_asking, with_outer_uris
from mcp_django.gateway.health import Health, recorded_open, tolerated_list, tolerated_open
from mcp_django.gateway.listing import Listing, clean_text
from mcp_django.gateway.pinning import pinned_items, withheld
from mcp_django.gateway.remote_apps import remote_resource, remote_tool
from mcp_django.gateway.tasks import RemoteTasks
from mcp_django.gateway.upstream import NotConnected, ask_to_connect, connection_for, refused
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, Message, ResourceNotFound
from mcp_django.protocol.meta import param_headers_of
from mcp_django.protocol.results import tool_error
from mcp_django.scopes import Scope
from mcp_django.sources import Items, Source

logger = logging.getLogger("mcp_django.gateway")

FEATURES: Final = ("tools", "resources", "prompts", "completions")
"""The server features a remote source serves (logging and subscriptions are the endpoint's own)."""
_Forwarder = Callable[[RemoteConnection, str, Mapping[str, Any], RequestContext], Awaitable[dict[str, Any]]]
NAMESPACE: Final = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,31}")
"""What a namespace may be: it leads a tool name (`ns_`) and a URI scheme (`ns+`), so no `_` nor `+`."""


@dataclasses.dataclass(frozen=True, slots=True)
class Description:
    """What a remote server said about itself in its handshake (or `server/discover`)."""

    protocol_version: str | None
    features: tuple[str, ...]
    server_info: Mapping[str, Any] | None
    instructions: str | None
    """Cleaned as a description is (`listing.clean_text`): a model reads them."""
    extensions: tuple[str, ...] = ()
    """The identifiers of the protocol extensions the server advertised."""


class RemoteSource(RemoteEvents, RemoteTasks, Source):
    """Serves a remote MCP server's tools, resources, prompts and completions, forwarded on the caller's behalf,
    answers for the tasks it started (`gateway.tasks.RemoteTasks`) and forwards its events (`gateway.events`).

    Args:
        server: the server: the name of an `MCP_DJANGO["SERVERS"]` entry, a dict shaped like one, or a
            `ServerConfig` (resolved on first use; `servers.server_config`).
        namespace: put before every name (`ns_name`) and URI (`ns+uri`); "" passes them unchanged.
        scope: the least scope a caller needs to reach anything of the server.
        tool_scopes: `{"pattern": scope}`: tools whose remote name matches a pattern (`fnmatch`, the
            first match wins) need at least that scope (and never less than `scope`).
        tools: `fnmatch` patterns of the remote tool names served; None serves every tool.
        tolerates_down: a remote that cannot be reached, is slow or errs lists nothing (logged, `health`)
            instead of failing the list.
        name: how logs, the manifest and errors name it (default: the server's name).
    """

    __slots__ = (
        "_described",
        "_listened",
        "_opening",
        "_remote",
        "health",
        "name",
        "namespace",
        "on_notification",
        "param_headers",
        "scope",
        "spec",
        "tolerates_down",
        "tool_patterns",
        "tool_scopes",
    )

    def __init__(
        self,
        server: str | Mapping[str, Any] | ServerConfig,
        *,
        namespace: str = "",
        scope: Scope | str = Scope.USER,
        tool_scopes: Mapping[str, Scope | str] | Sequence[tuple[str, Scope]] | None = None,
        tools: Sequence[str] | None = None,
        tolerates_down: bool = False,
        name: str | None = None,
    ) -> None:
        if namespace and not NAMESPACE.fullmatch(namespace):
            raise ValueError(f"Namespace {namespace!r}: a letter, then letters, digits or '-' (32 at most)")
        self.spec = server
        self.namespace = namespace
        self.scope = Scope.parse(scope)
        pairs = tool_scopes.items() if isinstance(tool_scopes, Mapping) else (tool_scopes or ())
        self.tool_scopes = tuple((pattern, Scope.parse(value)) for pattern, value in pairs)
        self.tool_patterns = None if tools is None else tuple(tools)
        self.tolerates_down = tolerates_down
        self.name = name or (
            server if isinstance(server, str) else server.name if isinstance(server, ServerConfig) else ""
        )
        self.param_headers: OrderedDict[str, dict[str, str]] = OrderedDict()
        self.on_notification: Any = None
        self._remote: ServerConfig | None = None
        self._described: Description | None = None
        self._listened: weakref.WeakSet[RemoteConnection] = weakref.WeakSet()
        self._opening: weakref.WeakKeyDictionary[RemoteConnection, asyncio.Task[bool]] = weakref.WeakKeyDictionary()
        self.health = Health()
        """Whether the remote answers (`gateway.health`): the manifest shows it, a hub's lists follow its circuit."""

    def __repr__(self) -> str:
        return f"<RemoteSource {self.name!r} namespace={self.namespace!r}>"

    # -- the server --------------------------------------------------------------------------------

    @property
    def remote(self) -> ServerConfig:
        """The remote server, resolved from `server` on first use.

        Raises:
            LookupError, ValueError: see `servers.server_config` (system check `mcp_django_gateway.E031`).
        """
        if self._remote is None:
            # Its questions go to the caller of the request they come with (`questions`): declared on its behalf.
            self._remote = dataclasses.replace(server_config(self.spec, name=self.name or None), relays_questions=True)
            self.name = self.name or self._remote.name
        return self._remote

    @property
    def connection(self) -> RemoteConnection:
        """The pooled connection to the remote server on the running event loop."""
        return connect(self.remote)

    async def prepare(self) -> Description | None:
        """Open the connection and read what the server says about itself; None while it cannot be reached.

        Notifications of the server go to `on_notification` (set by the endpoint), once per connection.
        A server reached with each caller's own token (`"AUTH": "oauth"`) has no connection of its own
        to open: it describes itself to nobody but its callers.
        """
        if self.remote.oauth is not None:
            return None
        connection = self.connection
        if self.on_notification is not None and connection not in self._listened:
            self._listened.add(connection)
            connection.add_listener(self._notified)
        if not await self._open(connection):
            return None
        extensions = connection.capabilities.get("extensions")
        self._described = Description(
            connection.protocol_version,
            tuple(name for name in FEATURES if name in connection.capabilities),
            connection.server_info,
            None if connection.instructions is None else clean_text(connection.instructions),
            tuple(sorted(extensions)) if isinstance(extensions, Mapping) else (),
        )
        return self._described

    async def _open(self, connection: RemoteConnection) -> bool:
        """Open `connection` (at once when it is), its outcome in `health`; True once open.

        In a hub, within `REMOTE_LIST_TIMEOUT` and only when the circuit admits it: the handshake runs
        on its own, and one that takes longer goes on while the hub answers without the remote (the
        callers meanwhile do not wait for it).
        """
        if not self.tolerates_down:
            return await recorded_open(self.health, self.name, connection.open)
        begun = self._opening.get(connection)
        if begun is not None and not begun.done():
            return False  # another caller began it and waited its budget: nobody waits twice
        if not self.health.admits():
            return False
        opening = asyncio.get_running_loop().create_task(recorded_open(self.health, self.name, connection.open))
        self._opening[connection] = opening
        return await tolerated_open(self.health, self.name, opening)

    def _still_opening(self) -> bool:
        """Whether the pooled connection's handshake, begun by `prepare`, is still going on."""
        if self.remote.oauth is not None:
            return False
        opening = self._opening.get(self.connection)
        return opening is not None and not opening.done()

    def description(self) -> Description | None:
        """What the server said about itself when last reached (`prepare`), or None."""
        return self._described

    def forget(self) -> None:
        """Resolve the server again on next use (its settings may have changed); forget its description and health."""
        self._remote = None
        self._described = None
        self.health = Health()

    async def _notified(self, message: Message) -> None:
        params = message.get("params")
        params = dict(params) if isinstance(params, dict) else None
        if params is not None and isinstance(params.get("uri"), str):
            params["uri"] = self.outer_uri(params["uri"])
        if self.on_notification is not None:
            await self.on_notification(str(message.get("method")), params)

    def capabilities(self) -> dict[str, Any]:
        """The features the server announced (every one until it has been reached).

        Its resources cannot be subscribed to through the endpoint (subscriptions are not forwarded).
        """
        features = self._described.features if self._described is not None else FEATURES
        return {feature: {"subscribe": False} if feature == "resources" else {} for feature in features}

    def manifest(self) -> dict[str, Any]:
        """Its kind, name, namespace and health (`unknown`, `up`, `degraded`, `down`; the admin says why)."""
        return {"kind": "remote", "name": self.name, "namespace": self.namespace, "health": self.health.state}

    # -- names -------------------------------------------------------------------------------------

    def outer_name(self, name: str) -> str:
        """The name callers see for the remote's `name`."""
        return f"{self.namespace}_{name}" if self.namespace else name

    def inner_name(self, name: str) -> str | None:
        """The remote's name for what callers call `name`, or None when it is not in this namespace."""
        return self._inner(name, "_")

    def outer_uri(self, uri: str) -> str:
        """The URI (or URI template) callers see for the remote's `uri`."""
        return f"{self.namespace}+{uri}" if self.namespace else uri

    def inner_uri(self, uri: str) -> str | None:
        """The remote's URI for what callers read as `uri`, or None when it is not in this namespace."""
        return self._inner(uri, "+")

    def _inner(self, outer: str, separator: str) -> str | None:
        if not self.namespace:
            return outer
        prefix = f"{self.namespace}{separator}"
        return outer[len(prefix) :] if outer.startswith(prefix) and len(outer) > len(prefix) else None

    def tool_scope(self, name: str) -> Scope:
        """The least scope that sees the remote tool `name` (the source's, raised by a matching pattern)."""
        for pattern, scope in self.tool_scopes:
            if fnmatch.fnmatchcase(name, pattern):
                return max(scope, self.scope)
        return self.scope

    def serves_tool(self, name: str) -> bool:
        """Whether the remote tool `name` is one of `tools` (every one when `tools` is None)."""
        patterns = self.tool_patterns
        return patterns is None or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)

    # -- forwarding --------------------------------------------------------------------------------

    async def forward(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Send one request on the caller's behalf (`forwarding.forward`)."""
        return await self._forwarded(forward, method, params, ctx)

    async def forward_asking(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Send one request that may answer `input_required`: the caller answers (`forwarding.forward_asking`).

        The URIs of the resources a result links to or embeds come back in the namespace.
        """
        result = await self._forwarded(forward_asking, method, params, ctx)
        return with_outer_uris(result, self.outer_uri) if self.namespace else result

    async def _forwarded(
        self, how: _Forwarder, method: str, params: Mapping[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        """`how` on the caller's connection (`upstream.connection_for`); a token the remote refused is forgotten."""
        connection = await connection_for(self.remote, ctx.principal)
        try:
            return await how(connection, method, params, ctx)
        except BackendUnavailable as error:
            await refused(self.remote, ctx.principal, connection, error)
            raise

    async def _list(self, method: str, key: str, ctx: RequestContext) -> list[dict[str, Any]]:
        """Every item of a remote list; in a hub (`tolerates_down`), never an error (`health.tolerated_list`).

        Nothing for a feature the remote did not announce (a hub asks every source for every list),
        nor, in a hub, while its handshake is still going on.
        """
        if self._described is not None and method.split("/")[0] not in self._described.features:
            return []
        if not self.tolerates_down:
            return await self._fetch(method, key, ctx)
        if self._still_opening():
            return []
        return await tolerated_list(self.health, self.name, method, lambda: self._fetch(method, key, ctx))

    async def _fetch(self, method: str, key: str, ctx: RequestContext) -> list[dict[str, Any]]:
        """Every page of a remote list, cleaned and bounded (`Listing`, `REMOTE_CALL_TIMEOUT`)."""
        server = self.remote.name
        listing = Listing(server, method)
        cursor: str | None = None
        async with call_deadline(server, method):
            for _ in range(client_settings.REMOTE_MAX_LIST_PAGES):
                result = await self.forward(method, {"cursor": cursor} if cursor else {}, ctx)
                if method == "tools/list":
                    result = ensure_input_schemas(result)
                listing.add(result.get(key))
                cursor = result.get("nextCursor")
                if not isinstance(cursor, str) or not cursor:
                    return await pinned_items(server, method, listing.done())
        raise listing.too_many_pages()

    # -- the Source interface ----------------------------------------------------------------------

    async def list_tools(self, ctx: RequestContext, scope: Scope) -> Items:
        listed = []
        for listed_tool in await self._list("tools/list", "tools", ctx):
            name, tool = listed_tool.get("name"), remote_tool(listed_tool, bool(self.namespace))
            if tool is None or not isinstance(name, str) or not self.serves_tool(name):
                continue
            outer, tool_scope = self.outer_name(name), self.tool_scope(name)
            remember(self.param_headers, outer, param_headers_of(tool.get("inputSchema")) or None)
            if tool_scope <= scope:
                listed.append({**tool, "name": outer} if self.namespace else tool)
        return listed

    async def get_tool(self, name: str, ctx: RequestContext, scope: Scope) -> _RemoteTool | None:
        """The remote tool `name` stands for, without listing (the remote answers for one it does not have)."""
        inner = self.inner_name(name)
        if inner is None or not self.serves_tool(inner) or self.tool_scope(inner) > scope:
            return None
        if await withheld(self.remote.name, "tool", inner):  # its definition changed: not callable until approved
            return None
        return _RemoteTool(self, inner, self.param_headers.get(name, {}))

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Items:
        listed = [remote_resource(item) for item in await self._list("resources/list", "resources", ctx)]
        return self._outer_uris(listed, "uri")

    async def list_resource_templates(self, ctx: RequestContext, scope: Scope) -> Items:
        listed = await self._list("resources/templates/list", "resourceTemplates", ctx)
        return self._outer_uris(listed, "uriTemplate")

    def _outer_uris(self, items: list[dict[str, Any]], key: str) -> Items:
        if not self.namespace:
            return items
        return [{**item, key: self.outer_uri(str(item.get(key, "")))} for item in items]

    async def get_resource(self, uri: str, ctx: RequestContext, scope: Scope) -> _RemoteResource | None:
        """Any URI in the namespace: the remote says whether it exists (so any may be subscribed to), unless the
        remote listed it and its definition is withheld (`pinning`)."""
        inner = self.inner_uri(uri)
        if inner is None or await withheld(self.remote.name, "resource", inner):
            return None
        return _RemoteResource(self, inner)

    async def get_resource_template(
        self, uri_template: str, ctx: RequestContext, scope: Scope
    ) -> _RemoteResource | None:
        return await self.get_resource(uri_template, ctx, scope)

    async def match_resource_template(
        self, uri: str, ctx: RequestContext, scope: Scope
    ) -> tuple[_RemoteResource, dict[str, str]] | None:
        return None  # get_resource already answers for every URI of the namespace

    async def list_prompts(self, ctx: RequestContext, scope: Scope) -> Items:
        prompts = await self._list("prompts/list", "prompts", ctx)
        if not self.namespace:
            return prompts
        return [{**prompt, "name": self.outer_name(str(prompt.get("name", "")))} for prompt in prompts]

    async def get_prompt(self, name: str, ctx: RequestContext, scope: Scope) -> _RemotePrompt | None:
        inner = self.inner_name(name)
        if inner is None or await withheld(self.remote.name, "prompt", inner):
            return None
        return _RemotePrompt(self, inner)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        inner = dict(ref)
        if ref.get("type") == "ref/prompt":
            inner["name"] = self.inner_name(str(ref.get("name", "")))
        elif ref.get("type") == "ref/resource":
            inner["uri"] = self.inner_uri(str(ref.get("uri", "")))
        params: dict[str, Any] = {"ref": inner, "argument": {"name": argument, "value": value}}
        if context_arguments:
            params["context"] = {"arguments": dict(context_arguments)}
        result = await self.forward("completion/complete", params, ctx)
        completion = result.get("completion")
        return completion if isinstance(completion, dict) else {"values": []}


class _RemoteTool:
    """A remote tool, called on the remote server; its `x-mcp-header` arguments are those it was last listed with."""

    __slots__ = ("name", "param_headers", "source")

    def __init__(self, source: RemoteSource, name: str, param_headers: Mapping[str, str]) -> None:
        self.source = source
        self.name = name
        self.param_headers = param_headers

    async def call(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> Mapping[str, Any]:
        params = {"name": self.name, "arguments": dict(arguments or {})}
        try:
            return await self.source.forward_asking("tools/call", params, request)
        except NotConnected as error:
            await ask_to_connect(error, request)  # a client that opens URLs sends its user to connect
            return tool_error(error.message)  # else the model reads it and tells the user where to connect


class _RemoteResource:
    """A remote resource (any URI of the remote's), read on the remote server."""

    __slots__ = ("source", "uri")

    def __init__(self, source: RemoteSource, uri: str) -> None:
        self.source = source
        self.uri = uri

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> Mapping[str, Any]:
        try:
            result = await self.source.forward_asking("resources/read", {"uri": self.uri}, request)
        except RemoteError as error:
            if error.code == RESOURCE_NOT_FOUND_LEGACY or (
                error.code == INVALID_PARAMS and isinstance(error.data, dict) and error.data.get("uri") == self.uri
            ):
                raise ResourceNotFound(uri) from None
            raise
        contents = result.get("contents")
        if not isinstance(contents, list):
            return result
        outer = self.source.outer_uri if self.source.namespace else None
        contents = [
            {**item, "uri": outer(item["uri"])}
            if outer is not None and isinstance(item, dict) and isinstance(item.get("uri"), str)
            else item
            for item in map(remote_resource, contents)
        ]
        return {**result, "contents": contents}


class _RemotePrompt:
    """A remote prompt, rendered on the remote server."""

    __slots__ = ("name", "source")

    def __init__(self, source: RemoteSource, name: str) -> None:
        self.source = source
        self.name = name

    async def get(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> Mapping[str, Any]:
        params = {"name": self.name, "arguments": dict(arguments or {})}
        return await self.source.forward_asking("prompts/get", params, request)
