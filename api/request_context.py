"""Every request gets an id: the caller's ``X-Request-ID`` when it is a plain token, else a new
one. It is bound to the request's log records (``worker/logs.py``), echoed in the answer's
``X-Request-ID`` header, and the request ends with one access line in the log.

The access line names the path, never the query string: a query (``?q=`` of the archive search)
may carry anything a transcript does, secrets included, and percent-encoding would hide them
from the redactor.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker import logs

HEADER = "X-Request-ID"
# A caller's id is kept when it is short and plain (UUIDs, ULIDs, trace ids, "gw-1234"); anything
# else could forge log lines or carry data, so it is replaced.
_ACCEPTED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+=@-]{0,127}")

access_log = logging.getLogger("api.access")
# Probes and scrapes come every few seconds: their access lines are DEBUG unless they fail.
_QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def request_id(incoming: str | None) -> str:
    """The caller's id if it is acceptable, else a fresh one (32 hex digits)."""
    if incoming is not None and _ACCEPTED.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


class RequestContextMiddleware:
    """Binds the request id for the request's log records and echoes it; logs the access line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(Headers(scope=scope).get(HEADER))
        started = time.monotonic()
        status = 500  # unless the app starts an answer

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[HEADER] = rid
            await send(message)

        with logs.bound(request_id=rid):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                elapsed_ms = (time.monotonic() - started) * 1000.0
                quiet = scope["path"] in _QUIET_PATHS and status < 500
                access_log.log(
                    logging.DEBUG if quiet else logging.INFO,
                    "%s %s %d %.1fms", scope["method"], scope["path"], status, elapsed_ms,
                )  # fmt: skip
