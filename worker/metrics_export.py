"""A worker's Prometheus endpoint: ``compaction worker --metrics-port`` serves ``/metrics``.

One endpoint per worker, whatever its pool. The threads pool runs every job in the worker's own
process, the prefork pool in child processes whose counters the parent cannot see; both are
served the same way, with prometheus_client's multiprocess mode: every process of the worker
writes its values to memory-mapped files in a directory of this worker's own (fresh at start,
removed at exit) and the endpoint, in the main process, adds them up on each scrape. A scrape
reads a few small files per process and nothing else: never the database or Redis.

Counters start at zero whenever a worker starts (Prometheus' ``rate()`` and ``increase()``
expect that); sum them over workers in queries.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIServer

from celery.signals import worker_process_init

from worker.errors import LaunchError

MULTIPROC_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


@dataclass
class Exporter:
    server: WSGIServer
    thread: threading.Thread
    directory: Path

    @property
    def url(self) -> str:
        host = self.server.server_address[0]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{self.server.server_port}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_exporter(*, host: str, port: int) -> Exporter:
    """Serve this worker's metrics on ``host:port``; call before the Celery worker starts.

    Raises ``LaunchError`` when the port cannot be bound.
    """
    directory = Path(tempfile.mkdtemp(prefix="compaction-worker-metrics-"))
    # Read by prometheus_client when a value is made: every metric of this process and of the
    # pool's children (they inherit the environment) writes its files here.
    os.environ[MULTIPROC_DIR_ENV] = str(directory)
    _require_multiprocess_values()
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))  # type: ignore[no-untyped-call]  # its __init__ has no annotations
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        shutil.rmtree(directory, ignore_errors=True)
        raise LaunchError(
            f"cannot serve metrics on {host}:{port} ({exc.strerror or exc}): choose another "
            "--metrics-port / COMPACTION_WORKER_METRICS_PORT"
        ) from exc
    exporter = Exporter(server, thread, directory)
    _close_in_children(exporter)

    from worker import metrics

    metrics.current()  # the families exist, at zero, before the first job
    return exporter


def _require_multiprocess_values() -> None:
    """prometheus_client picks how values are kept when it is first imported: after this."""
    values = sys.modules.get("prometheus_client.values")
    if values is not None and not getattr(values.ValueClass, "_multiprocess", False):
        raise LaunchError(
            "prometheus_client was imported before the metrics directory was set; start the "
            "exporter first"
        )


def _close_in_children(exporter: Exporter) -> None:
    """A prefork child inherits the listening socket: it closes its copy (only the main
    process answers scrapes, and a child must not keep the port after the worker exits)."""

    def close_copy(**_: Any) -> None:
        exporter.server.socket.close()

    worker_process_init.connect(close_copy, weak=False)
