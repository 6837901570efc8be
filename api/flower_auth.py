"""Flower's auth, decided by us: when it may start without credentials, and /metrics behind them.

Flower 2.x serves its task pages (session ids and every job's telemetry) to anyone when no
basic auth is configured, and it never asks for credentials on ``/metrics`` (its ``Metrics``
handler lacks the ``authenticated`` check every other page has). So, as for the API's token:
no credentials, loopback only; and ``/metrics`` gets the same check as the pages.
"""

from __future__ import annotations

from api.commands.api import is_loopback
from worker.settings import Settings


def flower_refusal(settings: Settings, address: str) -> str | None:
    """Why Flower must not start with these settings on ``address``, or None."""
    user, password = settings.flower_user, settings.flower_password
    if user and password:
        if "," in user or "," in password.get_secret_value():
            # Flower splits its list of credentials on commas: "a,b" would admit "b" alone.
            return "COMPACTION_FLOWER_USER and COMPACTION_FLOWER_PASSWORD must not contain ','"
        return None
    if is_loopback(address):
        return None
    return (
        f"refusing to serve Flower on {address} without auth: set COMPACTION_FLOWER_USER and "
        "COMPACTION_FLOWER_PASSWORD, or bind to 127.0.0.1"
    )


def require_auth_on_metrics() -> None:
    """Put Flower's ``/metrics`` behind the auth its other pages have (call before it starts).

    Flower builds its application from the handler list in ``flower.urls``: the metrics entry
    becomes a subclass whose ``get`` is ``authenticated``, so with basic auth set a request
    without valid credentials gets 401 there as everywhere else.
    """
    from flower import urls
    from flower.views.monitor import Metrics
    from tornado import web

    class AuthenticatedMetrics(Metrics):  # type: ignore[misc]  # flower is untyped
        @web.authenticated
        async def get(self) -> None:
            await super().get()

    urls.handlers[:] = [
        (h[0], AuthenticatedMetrics) if isinstance(h, tuple) and h[1] is Metrics else h
        for h in urls.handlers
    ]
