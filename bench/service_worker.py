"""The service benchmark, worker part: jobs in flight, overhead per job, a burst, the sweep.

Real parts: a private redis-server, a real ``compaction worker`` process (Celery, threads pool)
and ``compaction api`` process, a local OpenAI-compatible server with scripted answers
(tests/support/fake_openai.py), SQLite (default) or PostgreSQL. Measured, per database:

(a) one worker with 64 threads and a 2-s LLM (answers not streamed), 320 jobs queued at once: jobs/s from the first
    enqueue to the last finish, against the ideal 64 / 2 s; pool waits; the worker's memory;
(b) per-job overhead for a 110,000-token session: ``run_job`` in this process with a stand-in
    that answers at once in place of the LLM (so everything but the model: job read, cooldown,
    lock, claim, compress, write-back, telemetry); the job's own ``run_ms`` splits off the
    compressor's share. Once with the transcript's text new to the archive (a gateway that
    appends: the write-back indexes it for search), once with it indexed already (one that
    PUTs its transcript: each PUT archived the one before);
(c) 200 sessions, each seeded just under 85%, cross it with one append each through the API
    (16 clients): time until every job finished, against the same compactions run one after
    another in one process (the LLM answers at once in both);
(d) the idle sweep's selection over 10,000 and 100,000 idle sessions with 1%, 10%, 50% of them
    qualifying: its cost follows the batch it returns, not the sessions it passes over.

    python -m bench.service_worker [--backend sqlite postgresql] [--postgres-url URL]
                                   [--update-docs]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench import worker_loads as loads
from bench.docs_block import replace_block
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.pg_schema import private_schema
from tests.support.stack import StackProcess, broker, stack_env, start_api, start_worker
from worker.redis_server import RedisServer, free_port
from worker.settings import Settings
from worker.store.db import Database, migrate
from worker.summarizers import build_summarizer

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
MARKERS = ("<!-- bench:service-worker:start -->", "<!-- bench:service-worker:end -->")
SUMMARY_MODEL, MAIN_MODEL = "bench-summary", "bench-main"
RATE_TARGET, BURST_TARGET = 0.90, 2.0
OVERHEAD_P50_MS, OVERHEAD_P95_MS = 25.0, 50.0


@dataclass(frozen=True, slots=True)
class Results:
    backend: str
    in_flight: loads.InFlight
    overheads: list[loads.Overhead]
    burst: loads.Burst
    sweeps: list[loads.SweepCost]


@contextmanager
def database(backend: str, name: str, args: argparse.Namespace) -> Iterator[str]:
    """A fresh, migrated database of the benchmark's own; its URL."""
    if backend == "sqlite":
        path = Path(args.sqlite_dir) / f"service-worker-{name}.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        url = f"sqlite:///{path}"
        migrate(url)
        yield url
        return
    with private_schema(args.postgres_url, f"bench_service_worker_{name}") as url:
        yield url


def run_backend(backend: str, args: argparse.Namespace) -> Results:
    with tempfile.TemporaryDirectory(prefix="bench-worker-") as tmp, \
            RedisServer(Path(tmp) / "redis", appendonly=False) as redis_server, \
            FakeOpenAI(default=Reply.ok(loads.SUMMARY).after(args.llm_s)) as llm, \
            database(backend, "jobs", args) as url:  # fmt: skip
        root = Path(tmp)
        # One JSON answer rather than a stream: the fake server's own chunking would take the
        # CPU this benchmark measures the worker by (the chaos bench does the same).
        settings = Settings(
            database_url=url, redis_url=redis_server.url, var_dir=root / "var",
            llm_base_url=llm.base_url, summary_model=SUMMARY_MODEL, main_model=MAIN_MODEL,
            llm_stream=False,
        )  # fmt: skip
        _say(backend, "overhead per job")
        overheads = [loads.overhead(settings, runs=args.overhead_runs, indexed_before=done)
                     for done in (False, True)]  # fmt: skip
        env = stack_env(
            redis_url=redis_server.url, database_url=url, var_dir=root / "var",
            llm_base_url=llm.base_url, summary_model=SUMMARY_MODEL, main_model=MAIN_MODEL,
            llm_stream="false",
        )  # fmt: skip
        db = Database(url)
        worker = start_worker(env, root, concurrency=args.threads)
        try:
            in_flight = run_in_flight(backend, args, db, worker, redis_server)
            llm.default = Reply.ok(loads.SUMMARY)  # the burst's LLM answers at once
            burst = run_burst(backend, args, db, settings, env, root)
        finally:
            worker.stop()
            db.dispose()
        sweeps = run_sweeps(backend, args, redis_server, root)
    return Results(backend, in_flight, overheads, burst, sweeps)


def run_in_flight(
    backend: str, args: argparse.Namespace, db: Database, worker: StackProcess,
    redis_server: RedisServer,
) -> loads.InFlight:  # fmt: skip
    _say(backend, f"{args.jobs} jobs, {args.threads} in flight")
    with broker(redis_server.url) as app:
        return loads.in_flight(
            db, app, worker, jobs_n=args.jobs, threads=args.threads, llm_s=args.llm_s,
            summary_model=SUMMARY_MODEL,
        )  # fmt: skip


def run_burst(
    backend: str, args: argparse.Namespace, db: Database, settings: Settings,
    env: dict[str, str], root: Path,
) -> loads.Burst:  # fmt: skip
    _say(backend, f"a burst of {args.burst} sessions")
    port = free_port()
    api = start_api(env, root, port=port)
    try:
        return loads.burst(
            db, settings, lambda: build_summarizer(settings), api_port=port,
            sessions_n=args.burst, clients=16,
        )  # fmt: skip
    finally:
        api.stop()


def run_sweeps(
    backend: str, args: argparse.Namespace, redis_server: RedisServer, root: Path
) -> list[loads.SweepCost]:
    _say(backend, f"the sweep over {args.sweep_sessions:,} idle sessions")
    with database(backend, "sweep", args) as url:
        db = Database(url)
        try:
            settings = Settings(database_url=url, redis_url=redis_server.url, var_dir=root / "var")
            return loads.sweep_costs(
                db, settings, redis_server, sessions_n=args.sweep_sessions, runs=20
            )
        finally:
            db.dispose()


def _say(backend: str, what: str) -> None:
    print(f"[{backend}] {what}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# the report


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def table(r: Results) -> str:
    a, c = r.in_flight, r.burst
    share = a.rate / a.ideal_rate
    rows = [
        ("(a) jobs/s, 64 in flight, 2-s LLM",
         f"{a.rate:.1f} jobs/s = {share:.0%} of {a.ideal_rate:.0f} ({a.jobs} jobs in "
         f"{a.wall_s:.1f} s; {a.not_succeeded} not succeeded)",
         f"≥ {RATE_TARGET:.0%} of ideal: {_met(share >= RATE_TARGET)}"),
        ("(a) pool timeouts", str(a.pool_timeouts), f"0: {_met(a.pool_timeouts == 0)}"),
        ("(a) worker RSS (peak)", f"{a.rss_peak_mb:.0f} MB", "reported"),
        *[_overhead_row(o) for o in r.overheads],
        ("(c) burst: all compacted",
         f"{c.wall_s:.1f} s vs serial {c.serial_s:.1f} s = {c.wall_s / c.serial_s:.1f}x "
         f"(the compressor alone: {c.serial_core_s:.1f} s = {c.wall_s / c.serial_core_s:.1f}x) "
         f"({c.enqueued} of {c.sessions} enqueued; append p50 {c.append_p50_ms:.0f} ms, "
         f"p99 {c.append_p99_ms:.0f} ms; {c.retried} answered 503 and sent again)",
         f"≤ {BURST_TARGET:g}x serial: {_met(c.wall_s <= BURST_TARGET * c.serial_s)}; "
         f"against the compressor alone: {_met(c.wall_s <= BURST_TARGET * c.serial_core_s)}"),
        *[_sweep_row(s) for s in r.sweeps],
    ]  # fmt: skip
    lines = ["| measure | result | target / anchor |", "|---|---|---|"]
    lines += [f"| {m} | {v} | {t} |" for m, v, t in rows]
    return "\n".join(lines)


def _overhead_row(o: loads.Overhead) -> tuple[str, str, str]:
    p50, p95 = loads.pct(o.total_ms, 0.5), loads.pct(o.total_ms, 0.95)
    ok = p50 <= OVERHEAD_P50_MS and p95 <= OVERHEAD_P95_MS
    return (
        f"(b) overhead per job, {o.tokens:,} tokens / {o.messages} messages, {o.label}",
        f"p50 {p50:.0f} ms, p95 {p95:.0f} ms (compressor p50 "
        f"{loads.pct(o.compress_ms, 0.5):.0f} ms; the rest: read, lock, claim, write-back "
        f"p50 {loads.pct(o.store_ms(), 0.5):.0f} ms; {len(o.total_ms)} jobs)",
        f"p50 ≤ {OVERHEAD_P50_MS:g}, p95 ≤ {OVERHEAD_P95_MS:g} ms: {_met(ok)}",
    )


def _sweep_row(s: loads.SweepCost) -> tuple[str, str, str]:
    return (
        f"(d) sweep selection, {s.sessions:,} idle sessions, {s.qualifying:,} qualifying "
        f"({s.qualifying / s.sessions:.0%})",
        f"p50 {s.p50_ms:.1f} ms, p95 {s.p95_ms:.1f} ms ({s.picks} picked: one batch)",
        "flat as sessions that do not qualify are added",
    )


def report(results: Sequence[Results]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    parts = [f"Run of {when} on {os.cpu_count()} cores (load average at the end: {load})."]
    for r in results:
        parts += ["", f"**{'SQLite' if r.backend == 'sqlite' else 'PostgreSQL'}**", "", table(r)]
    return "\n".join(parts)


def update_docs(block: str, path: Path = DOCS) -> None:
    """Replace what stands between the markers in docs/benchmarks.md with ``block``."""
    replace_block(path, *MARKERS, block)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", nargs="+", choices=("sqlite", "postgresql"), default=["sqlite"])
    p.add_argument("--postgres-url", default=os.environ.get("COMPACTION_BENCH_POSTGRES_URL",
                                                            DEFAULT_POSTGRES))  # fmt: skip
    p.add_argument("--sqlite-dir", default="var/bench")
    p.add_argument("--threads", type=int, default=64, help="the worker's --concurrency")
    p.add_argument("--jobs", type=int, default=320, help="jobs queued at once for (a)")
    p.add_argument("--llm-s", type=float, default=2.0, help="the LLM's answer time in (a)")
    p.add_argument("--overhead-runs", type=int, default=30)
    p.add_argument("--burst", type=int, default=200)
    p.add_argument("--sweep-sessions", type=int, default=100_000)
    p.add_argument("--update-docs", action="store_true", help=f"write the tables into {DOCS}")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = [run_backend(backend, args) for backend in args.backend]
    block = report(results)
    print(block)
    if args.update_docs:
        update_docs(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
