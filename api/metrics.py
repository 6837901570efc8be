"""Prometheus metrics: requests, hygiene decisions, and jobs by status read from the database.

Each app has its own registry, so several apps in one process (tests) never collide.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _JobsCollector(Collector):
    """Jobs by status, counted in the database when scraped (every API replica agrees)."""

    def __init__(self, count_jobs: Callable[[], dict[str, int]]) -> None:
        self._count_jobs = count_jobs

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "compaction_jobs", "Compaction jobs in the database, by status", labels=["status"]
        )
        try:
            counts = self._count_jobs()
        except SQLAlchemyError as exc:  # a scrape must still answer; readyz reports the DB
            log.warning("metrics: cannot count jobs: %s", exc)
            counts = {}
        for status, n in counts.items():
            family.add_metric([status], n)
        yield family


class ApiMetrics:
    def __init__(self, count_jobs: Callable[[], dict[str, int]]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "compaction_api_requests",
            "HTTP requests, by method, route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "compaction_api_request_seconds",
            "HTTP request latency, by route template",
            ["route"],
            registry=self.registry,
        )
        self.hygiene = Counter(
            "compaction_hygiene_decisions",
            "Hygiene decisions after PUT and append, by decision",
            ["decision"],
            registry=self.registry,
        )
        self.registry.register(_JobsCollector(count_jobs))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class RequestMetricsMiddleware:
    """Counts every HTTP request by its route template (not its path: ids would explode)."""

    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = [500]
        started = time.perf_counter()

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.requests.labels(scope["method"], route, str(status[0])).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - started)
