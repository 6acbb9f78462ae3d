"""What the site reads from an authorization server as its OAuth client, against a real hostile local server:
an answer past `REMOTE_OAUTH_MAX_BYTES` is cut as it streams (not read to its end), a compressed one is
refused, and a name that resolves elsewhere on its second lookup (DNS rebinding) is still connected to at
the address that passed the check."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mcp_django.client.auth.authorization import (
    AnswerTooLarge,
    Challenge,
    Discovery,
    Registration,
    UpstreamAuthError,
    client_credentials,
    discover,
)
from mcp_django.client.config import ServerConfig

HUGE = 64 * 1024 * 1024
"""What the hostile token endpoint would send: far past the bound, and more than the socket buffers hold."""


class Hostile(BaseHTTPRequestHandler):
    """Metadata that looks right, and a token endpoint that never stops (or a compressed one)."""

    sent: int = 0
    seen: list[str] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, document: dict[str, Any], *, gzipped: bool = False) -> None:
        body = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if gzipped:
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        base = f"http://{self.headers['Host']}"
        address = self.connection.getsockname()[0]  # which of the servers answered
        Hostile.seen.append(f"{address} {self.path}")
        if self.path == "/.well-known/oauth-protected-resource/mcp":
            self._json({"resource": f"{base}/mcp", "authorization_servers": [base]})
        elif self.path == "/.well-known/oauth-authorization-server":
            metadata = {"issuer": base, "token_endpoint": f"{base}/token", "authorization_endpoint": f"{base}/a"}
            self._json(metadata, gzipped=address == "127.0.0.3")
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        # A token answer without a length, streamed until the client hangs up.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b" " * 65536
        try:
            self.wfile.write(b'{"access_token": "')
            while Hostile.sent < HUGE:
                self.wfile.write(chunk)
                Hostile.sent += len(chunk)
        except OSError:
            pass  # the client stopped reading: what the bound is for


@pytest.fixture
def hostile() -> Iterator[tuple[str, int]]:
    Hostile.sent, Hostile.seen = 0, []
    servers = [ThreadingHTTPServer((host, 0), Hostile) for host in ("127.0.0.1",)]
    port = servers[0].server_address[1]
    servers += [ThreadingHTTPServer((host, port), Hostile) for host in ("127.0.0.2", "127.0.0.3")]
    threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in servers]
    for thread in threads:
        thread.start()
    yield "127.0.0.1", port
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_token_answer_past_the_bound_is_cut_as_it_streams(hostile: tuple[str, int], settings: Any) -> None:
    host, port = hostile
    base = f"http://{host}:{port}"
    server = ServerConfig(name="hostile", url=f"{base}/mcp")
    discovery = Discovery(f"{base}/mcp", base, f"{base}/a", f"{base}/token", None, ())

    with pytest.raises(AnswerTooLarge) as cut:
        client_credentials(server, discovery, Registration("ci", "s3"), None)

    assert str(cut.value) == f"the answer of {base}/token is over 65536 bytes (REMOTE_OAUTH_MAX_BYTES)"
    assert Hostile.sent < HUGE // 4  # the rest was never read: the server's writes failed once the client left


def test_a_compressed_metadata_answer_is_refused_before_it_inflates(hostile: tuple[str, int], settings: Any) -> None:
    _host, port = hostile
    base = f"http://127.0.0.3:{port}"
    server = ServerConfig(name="hostile", url=f"{base}/mcp")

    with pytest.raises(AnswerTooLarge) as refused:
        discover(server, Challenge(f"{base}/.well-known/oauth-protected-resource/mcp"))

    assert str(refused.value) == f"the answer of {base}/.well-known/oauth-authorization-server is compressed (gzip)"


def test_a_name_that_resolves_elsewhere_on_its_second_lookup_is_connected_at_the_checked_address(
    hostile: tuple[str, int], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hostile resolver for "as.rebind.test": the first lookup (the check's) answers 127.0.0.1, every
    # later one 127.0.0.2. Another server listens there; a client that looked the name up again to
    # connect would reach it.
    host, port = hostile
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_OAUTH_ALLOW_LOOPBACK": True}
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(name: Any, *args: Any, **kwargs: Any) -> Any:
        if name != "as.rebind.test":
            return real(name, *args, **kwargs)
        lookups.append(name)
        return real("127.0.0.1" if len(lookups) == 1 else "127.0.0.2", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    issuer = f"http://as.rebind.test:{port}"
    server = ServerConfig(name="rebind", url=f"http://localhost:{port}/mcp")

    with pytest.raises(UpstreamAuthError, match="the metadata is for resource"):  # it is not the server's: after
        discover(server, Challenge(f"{issuer}/.well-known/oauth-protected-resource/mcp"))

    assert Hostile.seen == [f"{host} /.well-known/oauth-protected-resource/mcp"]
    assert lookups == ["as.rebind.test"]
