"""A remote MCP server behind its own tiny OAuth authorization server, for the per-user credential tests.

    python -m tests.gateway.oauth_upstream http <port>

`/mcp` is the official SDK's server (and a SEP-2624 interceptor server of one validation, which records whose token
called it); it answers 401 with `WWW-Authenticate: Bearer resource_metadata=…`
to a request without a token it issued. Its tool `whoami` says which user the bearer token belongs to and
returns the token itself, so a test sees exactly what the gateway sent. The authorization server:
RFC 9728 and RFC 8414 metadata, RFC 7591 registration, `/authorize` (no login page: the test names the
user with `as_user=`), and `/token` for the code grant (PKCE S256 and the `resource` checked) and refresh.
`/control` (POST JSON) resets the tokens, sets `expires_in`, makes refreshes fail or slow, revokes every access
token, or names another `authorization_server` in the metadata; GET shows the grants.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import sys
from typing import Any
from urllib.parse import urlencode

from mcp.server.mcpserver import Context, MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

server = MCPServer("oauth-upstream", version="1.0.0")

state: dict[str, Any] = {
    "clients": {},  # client_id -> redirect URIs
    "codes": {},  # code -> what the authorization asked for
    "access": {},  # access token -> user
    "refresh": {},  # refresh token -> user
    "grants": [],  # [grant type, user] as the token endpoint granted them
    "interceptions": [],  # [method, user] of each interceptors/list and interceptor/invoke, by bearer token
    "expires_in": 3600,
    "refuse_refresh": False,
    "refresh_delay": 0.0,  # seconds each refresh grant takes: long enough for two workers to race
    "authorization_server": None,  # names another issuer in the resource metadata (a hostile server's)
}


@server.tool()
def whoami(ctx: Context) -> dict[str, Any]:
    """The user the bearer token of this call belongs to, and the token."""
    header = {name.lower(): value for name, value in (ctx.headers or {}).items()}.get("authorization", "")
    token = header.removeprefix("Bearer ")
    return {"user": state["access"].get(token), "token": token}


def _issue(user: str) -> dict[str, Any]:
    access, refresh = f"at-{user}-{secrets.token_hex(4)}", f"rt-{user}-{secrets.token_hex(4)}"
    state["access"][access] = user
    state["refresh"][refresh] = user
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": state["expires_in"],
        "refresh_token": refresh,
        "scope": "tools",
    }


INTERCEPTOR_RESULTS: dict[str, dict[str, Any]] = {
    # An interceptor server too (SEP-2624): one validation that lets every tools/call through.
    "interceptors/list": {
        "interceptors": [
            {"name": "who", "type": "validation", "hooks": [{"events": ["tools/call"], "phase": "request"}]}
        ]
    },
    "interceptor/invoke": {"type": "validation", "interceptor": "who", "phase": "request", "valid": True},
}


def _error(code: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": code}, status_code=status)


def app_for(base: str) -> Any:
    """The ASGI application: the authorization server's routes, and the MCP server behind the bearer check."""
    resource = f"{base}/mcp"
    mcp_app = server.streamable_http_app(stateless_http=True, json_response=True, host="127.0.0.1")

    async def token(request: Request) -> Response:
        form = await request.form()
        grant = form.get("grant_type")
        if grant == "authorization_code":
            asked = state["codes"].pop(str(form.get("code")), None)
            verifier = str(form.get("code_verifier", ""))
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if asked is None or asked["challenge"] != challenge or asked["redirect_uri"] != form.get("redirect_uri"):
                return _error("invalid_grant")
            if form.get("resource") != resource or asked["resource"] != resource:
                return _error("invalid_target")
            state["grants"].append(["authorization_code", asked["user"]])
            return JSONResponse(_issue(asked["user"]))
        if grant == "refresh_token":
            user = state["refresh"].pop(str(form.get("refresh_token")), None)  # rotated: each answers once
            await asyncio.sleep(state["refresh_delay"])
            if user is None or state["refuse_refresh"]:
                return _error("invalid_grant")
            state["grants"].append(["refresh_token", user])
            return JSONResponse(_issue(user))
        return _error("unsupported_grant_type")

    async def control(request: Request) -> Response:
        if request.method == "POST":
            options = await request.json()
            if options.get("reset"):
                state.update(access={}, refresh={}, codes={}, grants=[], expires_in=3600, refuse_refresh=False)
                state["interceptions"] = []
                state["refresh_delay"] = 0.0
                state["authorization_server"] = None
            if options.get("revoke"):
                state["access"].clear()
            options_kept = ("expires_in", "refuse_refresh", "refresh_delay", "authorization_server")
            state.update({key: options[key] for key in options_kept if key in options})
        return JSONResponse({"grants": state["grants"], "interceptions": state["interceptions"]})

    async def routes(request: Request) -> Response | None:
        path = request.url.path
        if path == "/.well-known/oauth-protected-resource/mcp":
            issuer = state["authorization_server"] or base
            return JSONResponse(
                {"resource": resource, "authorization_servers": [issuer], "scopes_supported": ["tools", "admin"]}
            )
        if path == "/.well-known/oauth-authorization-server":
            return JSONResponse(
                {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/authorize",
                    "token_endpoint": f"{base}/token",
                    "registration_endpoint": f"{base}/register",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                }
            )
        if path == "/register" and request.method == "POST":
            client_id = f"client-{secrets.token_hex(4)}"
            state["clients"][client_id] = (await request.json())["redirect_uris"]
            return JSONResponse({"client_id": client_id, "token_endpoint_auth_method": "none"}, status_code=201)
        if path == "/authorize":
            query = request.query_params
            if query.get("redirect_uri") not in state["clients"].get(query.get("client_id"), ()):
                return _error("invalid_client")
            if query.get("code_challenge_method") != "S256" or query.get("response_type") != "code":
                return _error("invalid_request")
            code = secrets.token_urlsafe(16)
            state["codes"][code] = {
                "user": query.get("as_user", "nobody"),
                "challenge": query.get("code_challenge"),
                "redirect_uri": query.get("redirect_uri"),
                "resource": query.get("resource"),
            }
            answer = {"code": code, "state": query.get("state", ""), "iss": base}
            return RedirectResponse(f"{query['redirect_uri']}?{urlencode(answer)}", status_code=302)
        if path == "/token" and request.method == "POST":
            return await token(request)
        if path == "/control":
            return await control(request)
        return None

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await mcp_app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = await routes(request)
        if response is None:
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
            if bearer not in state["access"]:
                metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
                challenge = f'Bearer resource_metadata="{metadata}", scope="tools"'
                response = JSONResponse({"error": "invalid_token"}, 401, {"WWW-Authenticate": challenge})
        if response is not None:
            await response(scope, receive, send)
            return
        body = await request.body()
        message = json.loads(body) if body else None
        if isinstance(message, dict) and message.get("method") in INTERCEPTOR_RESULTS:
            state["interceptions"].append([message["method"], state["access"][bearer]])
            result = {**INTERCEPTOR_RESULTS[message["method"]], "resultType": "complete"}
            await JSONResponse({"jsonrpc": "2.0", "id": message.get("id"), "result": result})(scope, receive, send)
            return

        replayed = False

        async def replay() -> dict[str, Any]:  # the body read above, then what the client does next (goes away)
            nonlocal replayed
            if replayed:
                message: dict[str, Any] = await receive()
                return message
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await mcp_app(scope, replay, send)

    return app


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[2])
    uvicorn.run(app_for(f"http://127.0.0.1:{port}"), host="127.0.0.1", port=port, log_level="warning")
