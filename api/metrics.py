"""Prometheus metrics: requests, hygiene decisions, and the open jobs read from the database.

Each app has its own registry, so several apps in one process (tests) never collide. What the
jobs did is counted by the workers, each on its own endpoint (worker/metrics.py); the API adds
what only the database knows, the open jobs, which every replica reports alike (aggregate over
replicas with ``max``, not ``sum``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker.store.stats import OpenJobs

log = logging.getLogger(__name__)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _OpenJobsCollector(Collector):
    """Queued and running jobs, read when scraped: open jobs only, so a scrape costs the same
    however many finished jobs the table holds."""

    def __init__(
        self,
        read_open_jobs: Callable[[], Mapping[str, OpenJobs]],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._read_open_jobs = read_open_jobs
        self._clock = clock

    def collect(self) -> Iterator[Metric]:
        count = GaugeMetricFamily(
            "compaction_open_jobs", "Jobs queued or running, by status", labels=["status"]
        )
        age = GaugeMetricFamily(
            "compaction_oldest_open_job_age_seconds",
            "How long the oldest queued job has waited, and the oldest running job has run "
            "(0 when there is none)",
            labels=["status"],
        )
        try:
            found = self._read_open_jobs()
        except SQLAlchemyError as exc:  # a scrape must still answer; readyz reports the DB
            log.warning("metrics: cannot read the open jobs: %s", exc)
            found = {}
        now = self._clock()
        for status, jobs in found.items():
            count.add_metric([status], jobs.count)
            since = jobs.oldest_at
            age.add_metric([status], max(0.0, (now - since).total_seconds()) if since else 0.0)
        yield count
        yield age


class ApiMetrics:
    def __init__(self, read_open_jobs: Callable[[], Mapping[str, OpenJobs]]) -> None:
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
        self.unqueued = Counter(
            "compaction_api_jobs_unqueued",
            "Jobs the API created but could not hand to the broker (marked failed, "
            "broker_unavailable)",
            registry=self.registry,
        )
        self.registry.register(_OpenJobsCollector(read_open_jobs))

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
