"""A TCP proxy that a test can cut: the network between a client and a real server, failing.

``FaultProxy(target_port)`` listens on a free loopback port and forwards each connection to the
target. ``cut()`` drops every open connection and refuses new ones (a server that went away);
``freeze()`` keeps connections open but forwards nothing, and accepts new ones that never
answer (a partition: the client waits on its timeouts); ``heal()`` forwards again (frozen bytes
are dropped, as a partition drops them). The servers behind it are the real ones (redis-server,
PostgreSQL); only the path to them fails.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from types import TracebackType

_CHUNK = 65_536


class FaultProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._state = "open"  # open | cut | frozen
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._held: list[socket.socket] = []  # accepted while frozen: never answered
        self._closed = threading.Event()
        self._acceptor = threading.Thread(target=self._accept, name="faultproxy", daemon=True)
        self._acceptor.start()

    def url_for(self, url: str) -> str:
        """``url`` with the target's host:port replaced by this proxy's."""
        host, port = self.target
        return url.replace(f"{host}:{port}", f"127.0.0.1:{self.port}", 1)

    def cut(self) -> None:
        with self._lock:
            self._state = "cut"
            self._drop_all()

    def freeze(self) -> None:
        with self._lock:
            self._state = "frozen"

    def heal(self) -> None:
        with self._lock:
            self._state = "open"
            held, self._held = self._held, []
        for sock in held:  # the clients behind these gave up long ago
            _close(sock)

    def close(self) -> None:
        self._closed.set()
        _close(self._listener)
        with self._lock:
            self._drop_all()
            held, self._held = self._held, []
        for sock in held:
            _close(sock)
        self._acceptor.join(5)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _drop_all(self) -> None:
        for client, server in self._pairs:
            _close(client)
            _close(server)
        self._pairs = []

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                state = self._state
                if state == "frozen":
                    self._held.append(client)
                    continue
            if state == "cut":
                _close(client)
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        peers = {client: server, server: client}
        try:
            while not self._closed.is_set():
                readable, _, _ = select.select(list(peers), [], [], 0.1)
                with self._lock:
                    state = self._state
                if state == "frozen":
                    time.sleep(0.05)  # hold the bytes back: the other side sees silence
                    continue
                for sock in readable:
                    data = sock.recv(_CHUNK)
                    if not data:
                        return
                    peers[sock].sendall(data)
        except OSError:
            return
        finally:
            _close(client)
            _close(server)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
