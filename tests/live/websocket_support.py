"""A WebSocket client on a plain socket (RFC 6455, text frames only), to attack a live daphne as a browser would.

It sends exactly the handshake headers a test gives it (a forged `Host`, a foreign `Origin`, a stolen
cookie), which higher-level client libraries do not all allow.
"""

from __future__ import annotations

import base64
import json
import os
import socket
from typing import Any
from urllib.parse import urlsplit

TIMEOUT_S = 10.0


class WebSocket:
    """One client socket after its opening handshake: `status` is 101 when the server accepted it."""

    def __init__(self, url: str, path: str, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
        self.buffer = b""
        sent = {
            "Host": f"{host}:{port}",
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Protocol": "mcp",
            **(headers or {}),
        }
        head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in sent.items())
        self.sock.sendall(head.encode("latin-1") + b"\r\n")
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buffer += chunk
        response, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status_line = response.split(b"\r\n", 1)[0].split()
        self.status = int(status_line[1]) if len(status_line) > 1 else 0

    def send(self, message: Any) -> None:
        """Send one JSON message as a masked text frame (clients must mask)."""
        data = json.dumps(message).encode()
        header = bytearray([0x81])
        if len(data) < 126:
            header.append(0x80 | len(data))
        elif len(data) < 65536:
            header += bytes([0x80 | 126]) + len(data).to_bytes(2, "big")
        else:
            header += bytes([0x80 | 127]) + len(data).to_bytes(8, "big")
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(data)))

    def receive(self) -> Any:
        """The next text frame, parsed as JSON (control frames are skipped)."""
        while True:
            opcode, payload = self._frame()
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x8:
                raise ConnectionError("the server closed the socket")

    def request(self, message: dict[str, Any]) -> Any:
        """Send a request and return the message answering it (notifications before it are skipped)."""
        self.send(message)
        while True:
            reply = self.receive()
            if isinstance(reply, list) or reply.get("id") == message["id"]:
                return reply

    def close(self) -> None:
        self.sock.close()

    def _frame(self) -> tuple[int, bytes]:
        first, second = self._read(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self._read(2), "big")
        elif length == 127:
            length = int.from_bytes(self._read(8), "big")
        return first & 0x0F, self._read(length)

    def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data
