"""A client's host for the client ID metadata document tests: HTTPS on 127.0.0.1, answering as slowly as told."""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.live.oauth_support import make_certificate


class SlowDocumentServer:
    """Serves one JSON document (`document`) over HTTPS on 127.0.0.1, a byte every `interval` seconds from
    `drip_from` on.

    `drip_from="body"` sends the status line and headers at once, then the body slowly; `"headers"` drips
    from the first byte of the answer. Stops dripping when the block of `running()` ends.
    """

    def __init__(self, directory: Path, *, drip_from: str, interval: float) -> None:
        self.certificate, key = make_certificate(directory)
        self.document: dict[str, Any] = {}
        self.stopped = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps(server.document).encode()
                head = (
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
                )
                fast, slow = (head, body) if drip_from == "body" else (b"", head + body)
                with contextlib.suppress(OSError):
                    self.wfile.write(fast)
                    self.wfile.flush()
                    for index in range(len(slow)):
                        if server.stopped.wait(interval):
                            return
                        self.wfile.write(slow[index : index + 1])
                        self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.base_url = f"https://127.0.0.1:{self.httpd.server_address[1]}"

    @contextlib.contextmanager
    def running(self) -> Iterator[SlowDocumentServer]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.stopped.set()
            self.httpd.shutdown()
            self.httpd.server_close()
            thread.join(timeout=10)
