"""The gateway's hot path under load: appends to ``compaction api`` beside a bare-FastAPI floor.

One run starts a private redis-server, and per database (SQLite by default; PostgreSQL with
``--backend sqlite postgresql --postgres-url URL``, in a schema of its own, dropped after):
``compaction api`` (one process, log level info, a bearer token) and the floor app
(bench/service_floor.py: the same uvicorn options, auth, body model and database settings, one
SELECT and one INSERT in a transaction). Both serve the same database; ``--sessions`` sessions
are created with a PUT first. Then, at each concurrency, a load generator in its own process
(``wrk`` when on PATH, else bench/loadgen.py) sends the same requests to the floor and then to
the API: one user turn to a random session, each with its own Idempotency-Key; a short
unmeasured warm-up precedes each measurement, and each side is measured in two halves, floor,
append, append, floor, so that a change in the machine's load weighs on both alike.

Targets: append throughput >= 40% of the floor's at every concurrency, on both databases; p99
at 16 clients <= 150 ms on SQLite and <= 50 ms on PostgreSQL.

    python -m bench.service_api                                      # SQLite (~1.5 min)
    python -m bench.service_api --backend sqlite postgresql \\
        --postgres-url postgresql+psycopg://postgres@127.0.0.1:5432/test --update-docs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.docs_block import replace_block
from tests.support.pg_schema import private_schema
from tests.support.stack import StackProcess, stack_env
from worker.redis_server import RedisServer, free_port
from worker.store.db import migrate

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:service-api:start -->", "<!-- bench:service-api:end -->"
TOKEN = "bench-service-token"
FLOOR_SHARE, P99_MS = 0.40, {"sqlite": 150.0, "postgresql": 50.0}
CONTEXT_LENGTH = 1_000_000  # every session stays below the threshold: the common append


@dataclass(frozen=True, slots=True)
class Load:
    requests: int
    seconds: float
    non_2xx: int
    socket_errors: int
    p50_ms: float
    p99_ms: float

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


@dataclass(frozen=True, slots=True)
class Point:
    backend: str
    clients: int
    floor: Load
    append: Load


# ---------------------------------------------------------------------------------------------
# the processes


class FloorProcess(StackProcess):
    """bench/service_floor.py, started and stopped as ``compaction api`` is."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        super().__init__("floor", [], env=env, log_dir=log_dir)
        self.argv = [sys.executable, "-m", "bench.service_floor"]


def wait_answering(proc: StackProcess, url: str, *, post: bool) -> None:
    """Until ``url`` answers 2xx (the floor has no probe: it is asked for an append)."""

    def answers() -> bool:
        if post:
            turn = {"messages": [{"role": "user", "content": "warm"}]}
            r = httpx.post(url, json=turn, headers=auth(), timeout=5)
        else:
            r = httpx.get(url, timeout=5)
        return r.is_success

    proc.wait_for(answers, timeout_s=90, what=f"an answer from {url}")


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def serving(
    backend: str, url: str, redis_url: str, work: Path, sessions: int
) -> Iterator[tuple[int, int]]:
    """The API and the floor on ``url``: their ports, once both answer."""
    api_port, floor_port = free_port(), free_port()
    env = stack_env(redis_url=redis_url, database_url=url, var_dir=work / "var", api_token=TOKEN)
    api = StackProcess(f"api-{backend}", ["api", "--log-level", "info"],
                       env=env | {"COMPACTION_API_PORT": str(api_port)}, log_dir=work)  # fmt: skip
    floor = FloorProcess(env | {"COMPACTION_API_PORT": str(floor_port)}, work)
    with api, floor:
        wait_answering(api, f"http://127.0.0.1:{api_port}/readyz", post=False)
        seed_sessions(api_port, sessions)
        wait_answering(floor, f"http://127.0.0.1:{floor_port}/v1/sessions/s0/messages", post=True)
        yield api_port, floor_port


def seed_sessions(port: int, count: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth(), timeout=30) as client:
        for n in range(count):
            r = client.put(f"/v1/sessions/s{n}", json={
                "model": "gpt-4o", "context_length": CONTEXT_LENGTH,
                "messages": [{"role": "system", "content": "You are a coding agent."},
                             {"role": "user", "content": "The tests fail; find out why."}],
            })  # fmt: skip
            r.raise_for_status()


# ---------------------------------------------------------------------------------------------
# the databases


@contextmanager
def database(backend: str, args: argparse.Namespace, work: Path) -> Iterator[str]:
    """A migrated, empty database: a new SQLite file, or a new PostgreSQL schema (dropped)."""
    if backend == "sqlite":
        url = f"sqlite:///{work / 'service.db'}"
        migrate(url)
        yield url
        return
    with private_schema(args.postgres_url, "bench_service") as url:
        yield url


# ---------------------------------------------------------------------------------------------
# the load


def load_generator(choice: str) -> str:
    if choice == "auto":
        return "wrk" if shutil.which("wrk") else "python"
    if choice == "wrk" and not shutil.which("wrk"):
        raise SystemExit("--loadgen wrk: wrk is not on PATH (Debian/Ubuntu: apt-get install wrk)")
    return choice


def run_load(args: argparse.Namespace, port: int, clients: int, seconds: float, tag: str) -> Load:
    """One measurement by the load generator, in a process of its own."""
    extra = [str(args.sessions), TOKEN, tag]
    if args.loadgen == "wrk":
        argv = ["wrk", f"-t{min(clients, 2)}", f"-c{clients}", f"-d{seconds:g}s", "--timeout",
                "10s", "-s", str(HERE / "service_api.lua"), f"http://127.0.0.1:{port}", "--",
                *extra]  # fmt: skip
    else:
        argv = [sys.executable, "-m", "bench.loadgen", "--port", str(port), "--concurrency",
                str(clients), "--duration-s", str(seconds), "--sessions", extra[0], "--token",
                TOKEN, "--tag", tag]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=seconds + 60)
    line = next(x for x in reversed(out.stdout.splitlines()) if x.startswith("{"))
    return _load_of(json.loads(line))


def _load_of(found: dict[str, float]) -> Load:
    return Load(int(found["requests"]), found["seconds"], int(found["non_2xx"]),
                int(found["socket_errors"]), found["p50_ms"], found["p99_ms"])  # fmt: skip


# Floor, append, append, floor: each side is measured in two halves around the other, so a
# change in the machine's load during the run weighs on both alike.
_ORDER = ("floor", "append", "append", "floor")


def measure(backend: str, ports: tuple[int, int], args: argparse.Namespace) -> list[Point]:
    port_of = {"append": ports[0], "floor": ports[1]}
    run = uuid.uuid4().hex[:6]
    for name, port in port_of.items():  # a process's first thousands of requests run slower
        run_load(args, port, 4, args.initial_warmup_s, f"{run}-{name}-start")
    points = []
    for clients in args.concurrency:
        for name, port in port_of.items():
            run_load(args, port, clients, args.warmup_s, f"{run}-{name}-c{clients}-warm")
        halves: dict[str, list[Load]] = {"floor": [], "append": []}
        for n, name in enumerate(_ORDER):
            tag = f"{run}-{name}-c{clients}-{n}"
            halves[name].append(run_load(args, port_of[name], clients, args.duration_s / 2, tag))
        found = {name: combined(loads) for name, loads in halves.items()}
        for name, load in found.items():
            print(f"{backend:10} c={clients:<3} {name:6} {load.rate:8.1f} req/s  "
                  f"p50 {load.p50_ms:7.2f} ms  p99 {load.p99_ms:8.2f} ms",
                  file=sys.stderr, flush=True)  # fmt: skip
        points.append(Point(backend, clients, found["floor"], found["append"]))
    return points


def combined(loads: Sequence[Load]) -> Load:
    """Two halves as one measurement: counts add up; p50 is the halves' weighted by their
    requests, p99 the higher of the two (a bound: the halves' latencies are not kept)."""
    requests = sum(x.requests for x in loads)
    return Load(
        requests=requests,
        seconds=sum(x.seconds for x in loads),
        non_2xx=sum(x.non_2xx for x in loads),
        socket_errors=sum(x.socket_errors for x in loads),
        p50_ms=sum(x.p50_ms * x.requests for x in loads) / max(requests, 1),
        p99_ms=max(x.p99_ms for x in loads),
    )


# ---------------------------------------------------------------------------------------------
# the report


NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def table(points: Sequence[Point]) -> str:
    lines = [
        "| database | clients | floor req/s | append req/s | append / floor | floor p50 / p99 ms "
        "| append p50 / p99 ms | non-2xx, socket errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        f, a = p.floor, p.append
        lines.append(
            f"| {NAMES[p.backend]} | {p.clients} | {f.rate:,.0f} | {a.rate:,.0f} | "
            f"**{a.rate / f.rate:.0%}** | {f.p50_ms:.1f} / {f.p99_ms:.1f} | "
            f"{a.p50_ms:.1f} / **{a.p99_ms:.1f}** | "
            f"{f.non_2xx + a.non_2xx}, {f.socket_errors + a.socket_errors} |"
        )
    return "\n".join(lines)


def verdicts(points: Sequence[Point]) -> list[str]:
    out = []
    for backend in dict.fromkeys(p.backend for p in points):
        mine = [p for p in points if p.backend == backend]
        share = min(p.append.rate / p.floor.rate for p in mine)
        out.append(f"- {NAMES[backend]}: append >= {FLOOR_SHARE:.0%} of the floor at every "
                   f"concurrency: {'met' if share >= FLOOR_SHARE else 'MISSED'} "
                   f"(lowest {share:.0%})")  # fmt: skip
        top = max(mine, key=lambda p: p.clients)
        limit = P99_MS[backend]
        verdict = "met" if top.append.p99_ms <= limit else "MISSED"
        out.append(f"- {NAMES[backend]}: append p99 at {top.clients} clients <= {limit:g} ms: "
                   f"{verdict} ({top.append.p99_ms:.1f} ms)")  # fmt: skip
    return out


def report(points: Sequence[Point], args: argparse.Namespace, load: tuple[float, float]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        f"Run of {when}: {os.cpu_count()} CPUs, load average {load[0]:.2f} before and "
        f"{load[1]:.2f} after; load generator `{args.loadgen}` "
        f"({'wrk, in its own process' if args.loadgen == 'wrk' else 'bench/loadgen.py'}); "
        f"{args.duration_s:g} s per measurement (two halves: floor, append, append, floor) "
        f"after {args.initial_warmup_s:g} s of warm-up at 4 clients once and {args.warmup_s:g} "
        "s before each; p50 weighs the halves' by their requests, p99 "
        "is the higher of the two; "
        f"{args.sessions} sessions, each request one user turn with its own Idempotency-Key.",
        "", table(points), "", *verdicts(points),
    ])  # fmt: skip


def update_docs(fragment: str, path: Path = DOCS) -> None:
    """Replace the block between the service-api markers in docs/benchmarks.md."""
    replace_block(path, BEGIN, END, fragment)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", nargs="+", choices=("sqlite", "postgresql"), default=["sqlite"])
    p.add_argument("--postgres-url", default=os.environ.get("COMPACTION_BENCH_POSTGRES_URL"))
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--duration-s", type=float, default=8.0, help="per measurement")
    p.add_argument("--warmup-s", type=float, default=2.0, help="before each measurement")
    p.add_argument("--initial-warmup-s", type=float, default=5.0,
                   help="at 4 clients, each server, before the first measurement")  # fmt: skip
    p.add_argument("--sessions", type=int, default=256, help="appended to at random")
    p.add_argument("--loadgen", choices=("auto", "wrk", "python"), default="auto")
    p.add_argument("--update-docs", action="store_true", help=f"write the table into {DOCS}")
    # `make bench` passes SERVICE_ARGS to bench/service_worker.py too: its own options are
    # not ours to refuse.
    args, theirs = p.parse_known_args(argv)
    if theirs:
        print(f"bench.service_api: ignoring {' '.join(theirs)}", file=sys.stderr)
    if "postgresql" in args.backend and not args.postgres_url:
        p.error("--backend postgresql needs --postgres-url (or COMPACTION_BENCH_POSTGRES_URL)")
    args.loadgen = load_generator(args.loadgen)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    before = os.getloadavg()[0]
    points: list[Point] = []
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp, \
            RedisServer(Path(tmp) / "redis", appendonly=False) as redis:  # fmt: skip
        for backend in args.backend:
            work = Path(tmp) / backend
            work.mkdir()
            with database(backend, args, work) as url, \
                    serving(backend, url, redis.url, work, args.sessions) as ports:  # fmt: skip
                points += measure(backend, ports, args)
    fragment = report(points, args, (before, os.getloadavg()[0]))
    print(fragment)
    if args.update_docs:
        update_docs(fragment)
    return 0


if __name__ == "__main__":
    sys.exit(main())
