"""What the live OAuth tests need beside the server: a user's browser, token storage, and an HTTPS document server."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import AsyncGenerator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken
from oauth2_provider import cimd

from mcp_django.oauth.cimd import MCPMetadataFetcher
from tests.oauth.support import hidden_fields

_loopback = threading.Lock()


class LoopbackMetadataFetcher(MCPMetadataFetcher):
    """Test servers only: the package's fetcher, with 127.0.0.1 (the test's document server) allowed."""

    def fetch_document(self, client_id: str) -> Any:
        with _loopback:
            original = cimd._ip_is_public
            cimd._ip_is_public = lambda ip: ip == "127.0.0.1" or original(ip)
            try:
                return super().fetch_document(client_id)
            finally:
                cimd._ip_is_public = original


class StreamSafeOAuthProvider(OAuthClientProvider):
    """`OAuthClientProvider` whose long-lived GET stream does not hold the provider's lock.

    The SDK's provider holds `context.lock` across the whole request (modelcontextprotocol/python-sdk#3209,
    #1326; fixed upstream by moving resource requests out of the lock): a handshake-era session's GET
    stream then blocks every POST of the session until the stream ends. With a valid token, this GET is
    sent with it and without the lock, as the upstream fix does; everything else is the SDK's flow.
    """

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if request.method == "GET" and self._initialized and self.context.is_token_valid():
            self._add_auth_header(request)
            yield request
            return
        flow = super().async_auth_flow(request)
        outgoing = await flow.__anext__()
        while True:
            response = yield outgoing
            try:
                outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return


class MemoryStorage:
    """The client's token storage (`mcp.client.auth.TokenStorage`), in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Browser:
    """The user at the browser: opens the authorization URL, logs in, approves; keeps the code for the client.

    `redirect_handler` and `callback_handler` are what `OAuthClientProvider` calls.
    """

    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password
        self.result: AuthorizationCodeResult | None = None
        self.pages: list[str] = []

    async def redirect_handler(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.get(authorization_url)
            if response.status_code == 302 and "/oauth/login/" in response.headers["location"]:
                login_url = urljoin(authorization_url, response.headers["location"])
                page = await http.get(login_url)
                fields = {**hidden_fields(page.text), "username": self.username, "password": self.password}
                response = await http.post(login_url, data=fields)
                assert response.status_code == 302, response.text
                response = await http.get(urljoin(authorization_url, response.headers["location"]))
            assert response.status_code == 200, response.text
            self.pages.append(response.text)
            approved = await http.post(str(response.url), data={**hidden_fields(response.text), "allow": "Allow"})
            assert approved.status_code == 302, approved.text
            query = parse_qs(urlsplit(approved.headers["location"]).query)
            self.result = AuthorizationCodeResult(
                code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
            )

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None, "the authorization step did not run"
        return self.result


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1: `(certificate, key)` files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cimd-cert.pem", directory / "cimd-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


class DocumentServer:
    """Serves JSON documents over HTTPS on 127.0.0.1 (a path's `cache_control` too); counts its fetches."""

    def __init__(self, directory: Path) -> None:
        self.certificate, key = make_certificate(directory)
        self.documents: dict[str, dict[str, Any]] = {}
        self.cache_control: dict[str, str] = {}
        self.fetches: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                document = server.documents.get(self.path)
                server.fetches[self.path] = server.fetches.get(self.path, 0) + 1
                body = json.dumps(document).encode() if document is not None else b"{}"
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if self.path in server.cache_control:
                    self.send_header("Cache-Control", server.cache_control[self.path])
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.base_url = f"https://127.0.0.1:{self.httpd.server_address[1]}"

    @contextlib.contextmanager
    def running(self) -> Iterator[DocumentServer]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            thread.join(timeout=10)
