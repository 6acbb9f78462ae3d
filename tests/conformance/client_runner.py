"""The program `conformance client --command` starts: `SyncMCPClient` doing what each client scenario asks.

Usage (the suite appends the URL of the test server it started and names the scenario in the env)::

    python -m tests.conformance.client_runner <url>

`MCP_CONFORMANCE_SCENARIO` names the scenario, `MCP_CONFORMANCE_PROTOCOL_VERSION` the revision asked for
(pinned as the server entry's `PROTOCOL_VERSION`; none lets the client negotiate), and
`MCP_CONFORMANCE_CONTEXT` the scenario's own data (JSON). The client is the real one, with no interceptors:
whatever the suite sees on the wire is what `MCPClient` and the gateway send. A scenario the runner does
not know exits 2, so the suite reports it rather than passing it silently.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import django
from django.conf import settings

Scenario = Callable[[Any, dict[str, Any]], None]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    """Register what the client does for each of `names`."""

    def register(handler: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = handler
        return handler

    return register


@scenario("initialize", "tools_call", "tools-call")
def list_then_call_first_tool(client: Any, context: dict[str, Any]) -> None:
    tools = client.list_tools()
    if tools:
        client.call_tool(tools[0]["name"], {"a": 2, "b": 3})


@scenario("elicitation-sep1034-client-defaults")
def call_every_tool(client: Any, context: dict[str, Any]) -> None:
    # The tool asks the client to elicit: the runner's handler (`accept_the_defaults`) answers what reaches it.
    for tool in client.list_tools():
        client.call_tool(tool["name"], {})


async def accept_the_defaults(params: Mapping[str, Any]) -> dict[str, Any]:
    """An elicitation handler that accepts with every default the requested schema gives (SEP-1034)."""
    properties = (params.get("requestedSchema") or {}).get("properties") or {}
    defaults = {name: field["default"] for name, field in properties.items() if "default" in field}
    return {"action": "accept", "content": defaults}


@scenario("sse-retry")
def call_the_tool_whose_stream_breaks(client: Any, context: dict[str, Any]) -> None:
    # The server closes the call's stream after an event carrying `retry`: the client resumes it with GET.
    client.list_tools()
    client.call_tool("test_reconnection", {})


@scenario("json-schema-ref-no-deref", "request-metadata")
def list_tools(client: Any, context: dict[str, Any]) -> None:
    # The handshake (server/discover in the stateless era) and one listing; a `$ref` is never fetched.
    client.list_tools()


@scenario("json-schema-2020-12-preservation")
def echo_the_listed_schema(client: Any, context: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in client.list_tools()}
    client.call_tool("json_schema_echo", {"schema": tools["json_schema_2020_12_tool"]["inputSchema"]})


@scenario("http-standard-headers")
def use_every_feature(client: Any, context: dict[str, Any]) -> None:
    for tool in client.list_tools():
        client.call_tool(tool["name"], {})
    for resource in client.list_resources():
        client.read_resource(resource["uri"])
    for prompt in client.list_prompts():
        client.get_prompt(prompt["name"], {})


@scenario("http-custom-headers")
def make_the_calls_of_the_context(client: Any, context: dict[str, Any]) -> None:
    client.list_tools()
    for call in context.get("toolCalls", []):
        client.call_tool(call["name"], call.get("arguments") or {})


@scenario("http-invalid-tool-headers")
def call_every_listed_tool(client: Any, context: dict[str, Any]) -> None:
    # The client drops the tools whose `x-mcp-header` annotations are invalid: only valid ones are called.
    for tool in client.list_tools():
        properties = tool.get("inputSchema", {}).get("properties", {})
        client.call_tool(tool["name"], {name: "value" for name in properties})


@scenario("sep-2322-client-request-state")
def answer_input_requests(client: Any, context: dict[str, Any]) -> None:
    client.list_tools()
    first = client.call_tool("test_mrtr_echo_state", {})
    client.call_tool("test_mrtr_unrelated", {})  # another call in between carries none of the first's state
    _retry(client, "test_mrtr_echo_state", first)
    _retry(client, "test_mrtr_no_state", client.call_tool("test_mrtr_no_state", {}))
    client.call_tool("test_mrtr_no_result_type", {})  # no resultType: complete, not retried


def _retry(client: Any, name: str, result: dict[str, Any]) -> None:
    """Answer an `input_required` result's elicitations and send the call again, its `requestState` echoed."""
    if result.get("resultType") != "input_required":
        return
    responses = {
        key: {"action": "accept", "content": {"confirmed": True}}
        for key, request in (result.get("inputRequests") or {}).items()
        if request.get("method") == "elicitation/create"
    }
    params: dict[str, Any] = {"name": name, "arguments": {}, "inputResponses": responses}
    if "requestState" in result:
        params["requestState"] = result["requestState"]
    client.request("tools/call", params)


# The auth scenarios: the runner gives the client an OAuth `auth` built from what the suite passes in
# the context (credentials, keys, the IdP's ID token); everything else is MCPClient's own flow.

AuthFactory = Callable[[dict[str, Any]], Any]
AUTHS: dict[str, AuthFactory] = {}
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document URL the suite's authorization server expects (`auth/basic-cimd`)."""
AUTHORIZATION_CODE_SCENARIOS = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
)


def auth(*names: str) -> Callable[[AuthFactory], AuthFactory]:
    """Register how the client authenticates for each of `names`; they all list and call tools (`use_the_server`)."""

    def register(factory: AuthFactory) -> AuthFactory:
        for name in names:
            AUTHS[name] = factory
            SCENARIOS[name] = use_the_server
        return factory

    return register


def use_the_server(client: Any, context: dict[str, Any]) -> None:
    # A listing, then a call (which may need a wider token: step-up), then another listing with the token kept.
    tools = client.list_tools()
    for tool in tools[:1]:
        client.call_tool(tool["name"], {})
    client.list_tools()


def follow_the_redirect(url: str) -> str:
    """A headless user agent: the suite's authorization endpoint redirects at once; its `Location` is the answer."""
    import httpx2

    answer = httpx2.get(url, follow_redirects=False, trust_env=False, timeout=10)
    location = answer.headers.get("location")
    if answer.status_code not in (301, 302, 303, 307) or not location:
        raise RuntimeError(f"the authorization endpoint answered HTTP {answer.status_code} without a redirect")
    return location


@auth(*AUTHORIZATION_CODE_SCENARIOS)
def authorization_code(context: dict[str, Any]) -> Any:
    from mcp_django.client.auth.oauth import AuthorizationCode, OAuthClientAuth

    grant = AuthorizationCode(
        follow_the_redirect,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
    )
    return OAuthClientAuth(grant)


@auth("auth/client-credentials-basic", "auth/client-credentials-jwt")
def client_credentials(context: dict[str, Any]) -> Any:
    from mcp_django.client import ClientCredentials, ClientKey, OAuthClientAuth

    pem = context.get("private_key_pem")
    key = ClientKey(pem, context.get("signing_algorithm", "ES256")) if pem else None
    return OAuthClientAuth(ClientCredentials(context["client_id"], secret=context.get("client_secret"), key=key))


@auth("auth/enterprise-managed-authorization")
def enterprise_managed(context: dict[str, Any]) -> Any:
    from mcp_django.client.auth.oauth import EnterpriseManaged, OAuthClientAuth

    grant = EnterpriseManaged(
        id_token=lambda: str(context["idp_id_token"]),
        idp_token_endpoint=context["idp_token_endpoint"],
        idp_client_id=context["idp_client_id"],
        client_id=context["client_id"],
        client_secret=context.get("client_secret"),
    )
    return OAuthClientAuth(grant)


def main(argv: list[str]) -> int:
    """Run the scenario of the env against the URL in `argv`; the exit status is the suite's verdict input."""
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) != 2 or name not in SCENARIOS:
        print(f"usage: MCP_CONFORMANCE_SCENARIO=<{'|'.join(sorted(SCENARIOS))}> client_runner <url>", file=sys.stderr)
        return 2
    settings.configure(
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "mcp_django"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        # The suite's authorization servers listen on other localhost ports than its MCP server.
        MCP_DJANGO={"INTERCEPTORS": [], "REMOTE_OAUTH_ALLOW_LOOPBACK": True},
    )
    django.setup()
    from mcp_django.client import SyncMCPClient

    server: dict[str, Any] = {"URL": argv[1]}
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    if version:
        server["PROTOCOL_VERSION"] = version
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    client_auth = AUTHS[name](context) if name in AUTHS else None
    elicitation = accept_the_defaults if name == "elicitation-sep1034-client-defaults" else None
    with SyncMCPClient(server, interceptors=[], auth=client_auth, elicitation=elicitation) as client:
        SCENARIOS[name](client, context)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
