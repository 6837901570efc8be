"""A real local HTTP server that receives job-completion callbacks the way a gateway would.

It verifies each request's HMAC signature with the shared secret, answers the first
``fail_first`` requests with 503 (to exercise retries), and records everything it saw. With
``endless_answer`` its 200 announces a gigabyte of body and trickles a little of it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from worker.callbacks import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify


@dataclass(frozen=True)
class Received:
    body: bytes
    headers: dict[str, str]  # lower-cased names
    signature_ok: bool
    answered: int

    @property
    def document(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


class CallbackReceiver:
    def __init__(self, *, secret: str, fail_first: int = 0, endless_answer: bool = False) -> None:
        self.secret = secret
        self.fail_first = fail_first
        self.endless_answer = endless_answer
        self.closing = threading.Event()
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.receiver = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hooks/compaction"

    def delivered(self) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.answered == 200]

    def _take(self, body: bytes, headers: dict[str, str]) -> int:
        signature_ok = verify(body, headers.get(SIGNATURE_HEADER.lower()), self.secret)
        with self._lock:
            failing = len(self.received) < self.fail_first
            answered = 503 if failing else (200 if signature_ok else 401)
            self.received.append(Received(body, headers, signature_ok, answered))
        return answered

    def __enter__(self) -> CallbackReceiver:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``received``."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        receiver: CallbackReceiver = self.server.receiver  # type: ignore[attr-defined]
        status = receiver._take(body, headers)
        self.send_response(status)
        if not (receiver.endless_answer and status == 200):
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_header("Content-Length", str(10**9))
        self.end_headers()
        deadline = time.monotonic() + 30
        while not receiver.closing.is_set() and time.monotonic() < deadline:
            try:
                self.wfile.write(b"x" * 1024)
                self.wfile.flush()
            except OSError:
                return  # the client hung up, as it should
            time.sleep(0.05)


__all__ = ["TIMESTAMP_HEADER", "CallbackReceiver", "Received"]
