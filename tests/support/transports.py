"""The network between a client and the service, with its failures: httpx transports that pass
each request on to a real one, record what went by, and can lose an answer after the service
acted on the request (a connection cut on the way back), which no server can be asked to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    idempotency_key: str | None
    status: int | None  # None: the client got no answer


@dataclass
class Wire:
    """What went by, and how many answers to lose (the first ``lose`` requests, after the
    service has answered them)."""

    lose: int = 0
    exchanges: list[Exchange] = field(default_factory=list)

    def passed(self, request: httpx.Request, status: int) -> None:
        lost = len(self.exchanges) < self.lose
        self.exchanges.append(
            Exchange(
                request.method,
                request.url.path,
                request.headers.get("idempotency-key"),
                None if lost else status,
            )
        )
        if lost:
            raise httpx.ReadError("connection cut before the answer arrived", request=request)

    def failed(self, request: httpx.Request) -> None:
        key = request.headers.get("idempotency-key")
        self.exchanges.append(Exchange(request.method, request.url.path, key, None))

    def keys(self, method: str) -> list[str | None]:
        return [e.idempotency_key for e in self.exchanges if e.method == method]


class WireTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, wire: Wire) -> None:
        self.inner, self.wire = inner, wire

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = self.inner.handle_request(request)
        except httpx.TransportError:
            self.wire.failed(request)
            raise
        response.read()
        self.wire.passed(request, response.status_code)
        return response


class AsyncWireTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, wire: Wire) -> None:
        self.inner, self.wire = inner, wire

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.TransportError:
            self.wire.failed(request)
            raise
        await response.aread()
        self.wire.passed(request, response.status_code)
        return response
