"""Faults under load: the whole service (API, two workers, beat) on a private Redis, a real
database and a scripted LLM, fed by gateways that append turns without pause, while Redis is
stopped, killed, wiped and frozen, the database goes away and a worker is killed.

    .venv/bin/python -m bench.chaos                       # SQLite, every fault (~8 minutes)
    .venv/bin/python -m bench.chaos --postgres URL        # PostgreSQL behind a proxy it cuts
    .venv/bin/python -m bench.chaos --faults redis-freeze worker-kill --outage-s 30

Each gateway behaves as the API asks a client to: every append carries an Idempotency-Key and
is sent again, with the same key, after a transport error or a 503 (after its Retry-After).
What it prints, per fault: jobs in flight (open when the fault began or created during it),
how they ended, how many were still open 60 s after the service came back ("stranded"), the
time from recovery to the last of them finishing, the longest API answer and the longest
``/healthz`` answer during the fault. At the end every turn any gateway sent is looked up in
the store: lost (acknowledged, not stored), duplicated (stored twice), unacknowledged.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import redis
from sqlalchemy import make_url, select

from bench.docs_block import replace_block
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.faultproxy import FaultProxy
from tests.support.pg_schema import private_schema
from tests.support.stack import StackProcess, stack_env, start_api, start_workers
from worker.redis_server import RedisServer, free_port
from worker.store.db import Database, migrate
from worker.store.models import JobRow
from worker.store.sessions import active_messages, archived_messages

MODEL = "gpt-4o-mini"
SUMMARY_MODEL = "chaos-summary"
CONTEXT_LENGTH = 6_000  # small: a session crosses its threshold every few turns
GATEWAYS = 12
TURN_PAUSE_S = 0.4
RECOVERY_TARGET_S = 60.0  # every job in flight finished this long after the service is back
API_TARGET_S = 5.0
HEALTHZ_TARGET_S = 0.1
CLIENT_TIMEOUT_S = 30.0
FAULTS = ("redis-stop", "redis-kill", "redis-wipe", "redis-freeze", "database", "worker-kill")


# --------------------------------------------------------------------------------------------
# The stack


@dataclass
class Stack:
    root: Path
    redis: RedisServer
    database_url: str  # what the service uses (through the proxy on PostgreSQL)
    direct_url: str  # what the bench reads with (never cut)
    proxy: FaultProxy | None
    llm: FakeOpenAI
    env: dict[str, str]
    api_port: int
    processes: dict[str, StackProcess] = field(default_factory=dict)
    worker_names: list[str] = field(default_factory=list)

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def start_workers(self, *names: str) -> None:
        for proc in start_workers(self.env, self.root, names=names, concurrency=8):
            self.processes[proc.name] = proc
        self.worker_names += names

    def stop(self) -> None:
        for proc in self.processes.values():
            proc.stop()
        self.redis.stop()
        self.llm.stop()
        if self.proxy is not None:
            self.proxy.close()


@contextlib.contextmanager
def running_stack(root: Path, postgres: str | None) -> Iterator[Stack]:
    schema = private_schema(postgres, "cq_chaos") if postgres else contextlib.nullcontext(None)
    with schema as in_schema:
        yield from _stack_on(root, in_schema)


def _stack_on(root: Path, postgres: str | None) -> Iterator[Stack]:
    """The stack on PostgreSQL (``postgres``: a migrated schema's URL, reached through a proxy
    the faults cut) or on a new SQLite file."""
    redis_server = RedisServer(root / "redis", appendonly=True).start()
    proxy = None
    if postgres:
        direct = postgres
        host, port = make_url(direct).host, make_url(direct).port or 5432
        proxy = FaultProxy(port, str(host))
        database_url = proxy.url_for(direct)
    else:
        direct = database_url = f"sqlite:///{root / 'compaction.db'}"
        migrate(direct)
    llm = FakeOpenAI(default=Reply.ok("Summary: the conversation so far.").after(2.0)).start()
    env = stack_env(
        redis_url=redis_server.url, database_url=database_url, var_dir=root / "var",
        llm_base_url=llm.base_url, summary_model=SUMMARY_MODEL, llm_stream="false",
        max_auto_compactions_per_hour=10_000, thrash_strikes=10_000,
        reaper_interval_s=10,
    )  # fmt: skip
    stack = Stack(root, redis_server, database_url, direct, proxy, llm, env, free_port())
    try:
        stack.processes["api"] = start_api(env, root, port=stack.api_port)
        stack.processes["beat"] = StackProcess("beat", ["beat"], env=env, log_dir=root).start()
        stack.start_workers("worker-1", "worker-2")
        yield stack
    finally:
        stack.stop()


# --------------------------------------------------------------------------------------------
# The load: gateways that append, a prober of /healthz


@dataclass
class Call:
    started: float  # time.monotonic()
    seconds: float
    status: int | None  # None: a transport error


@dataclass
class Turn:
    session_id: str
    key: str
    text: str
    acknowledged: bool = False


class Load:
    def __init__(self, stack: Stack, gateways: int) -> None:
        self.stack = stack
        self.stop_event = threading.Event()
        self.calls: list[Call] = []
        self.health: list[Call] = []
        self.turns: list[Turn] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._gateway, args=(f"chaos-{i}",), daemon=True)
            for i in range(gateways)
        ] + [threading.Thread(target=self._probe, daemon=True)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        for thread in self._threads:
            thread.join(CLIENT_TIMEOUT_S * 3)

    def _gateway(self, session_id: str) -> None:
        with httpx.Client(base_url=self.stack.api, timeout=CLIENT_TIMEOUT_S) as client:
            first = {"model": MODEL, "context_length": CONTEXT_LENGTH, "messages": _opening()}
            self._send(client, "PUT", f"/v1/sessions/{session_id}", first, f"{session_id}-put")
            n = 0
            while not self.stop_event.is_set():
                n += 1
                turn = Turn(session_id, f"{session_id}-{n}", f"turn {session_id}/{n}: {_filler(n)}")
                with self._lock:
                    self.turns.append(turn)
                body = {"messages": [{"role": "user", "content": turn.text},
                                     {"role": "assistant", "content": f"ack {session_id}/{n}"}]}  # fmt: skip
                path = f"/v1/sessions/{session_id}/messages"
                turn.acknowledged = self._send(client, "POST", path, body, turn.key)
                time.sleep(TURN_PAUSE_S)

    def _send(self, client: httpx.Client, method: str, path: str, body: Any, key: str) -> bool:
        """Send until an answer that is not "try again" (bounded); True on a 2xx."""
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                answer = client.request(method, path, json=body, headers={"Idempotency-Key": key})
            except httpx.HTTPError:
                self._record(self.calls, started, None)
                time.sleep(1.0)
                continue
            self._record(self.calls, started, answer.status_code)
            if answer.is_success:
                return True
            if answer.status_code in (503, 409, 429):
                time.sleep(min(float(answer.headers.get("Retry-After", "1") or 1), 5.0))
                continue
            print(f"  {method} {path}: {answer.status_code} {answer.text[:200]}", file=sys.stderr)
            return False
        return False

    def _probe(self) -> None:
        with httpx.Client(base_url=self.stack.api, timeout=10.0) as client:
            while not self.stop_event.is_set():
                started = time.monotonic()
                try:
                    status: int | None = client.get("/healthz").status_code
                except httpx.HTTPError:
                    status = None
                self._record(self.health, started, status)
                time.sleep(0.2)

    def _record(self, into: list[Call], started: float, status: int | None) -> None:
        with self._lock:
            into.append(Call(started, time.monotonic() - started, status))


def _opening() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Let us plan the release together."},
        {"role": "assistant", "content": "Sure: what is the first step?"},
    ]


def _filler(n: int) -> str:
    # About 250 tokens a turn: a session crosses 85% of 6,000 tokens every dozen turns or so.
    words = ("deploy", "rollback", "schema", "index", "latency", "budget", "owner", "ticket")
    return " ".join(f"{words[(n + i) % len(words)]}-{i}" for i in range(120))


# --------------------------------------------------------------------------------------------
# Faults: each starts one and returns what ends it


def _redis_stop(stack: Stack, outage_s: float) -> Callable[[], None]:
    stack.redis.stop()  # SIGTERM: the append-only file is flushed
    time.sleep(outage_s)
    return lambda: _start(stack.redis)


def _start(server: RedisServer) -> None:
    server.start()


def _redis_kill(stack: Stack, outage_s: float) -> Callable[[], None]:
    assert stack.redis.process is not None
    stack.redis.process.kill()  # no flush: up to a second of writes may be gone
    stack.redis.process.wait()
    stack.redis.process = None
    time.sleep(outage_s)
    return lambda: _start(stack.redis)


def _redis_wipe(stack: Stack, outage_s: float) -> Callable[[], None]:
    with redis.Redis.from_url(stack.redis.url) as client:
        client.flushall()  # queue, unacked messages, locks, cooldowns: all gone at once
    return lambda: None


def _redis_freeze(stack: Stack, outage_s: float) -> Callable[[], None]:
    assert stack.redis.process is not None
    pid = stack.redis.process.pid
    os.kill(pid, signal.SIGSTOP)  # a partition: connections stay open, nothing answers
    time.sleep(outage_s)
    return lambda: os.kill(pid, signal.SIGCONT)


def _database(stack: Stack, outage_s: float) -> Callable[[], None]:
    if stack.proxy is not None:
        stack.proxy.cut()  # PostgreSQL is gone for everyone: open connections and new ones
        time.sleep(outage_s)
        return stack.proxy.heal
    # SQLite has no server to lose: its outage is the file locked by someone else's write.
    path = stack.direct_url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    time.sleep(outage_s)

    def heal() -> None:
        conn.execute("COMMIT")
        conn.close()

    return heal


def _worker_kill(stack: Stack, outage_s: float) -> Callable[[], None]:
    name = _busy_worker(stack)
    stack.processes.pop(name).kill_hard()  # mid-job, as a crashed machine
    time.sleep(outage_s)
    # Its replacement, as an orchestrator would start one.
    return lambda: stack.start_workers(f"{name}-again")


def _busy_worker(stack: Stack, wait_s: float = 30.0) -> str:
    """A live worker that is running a job right now (else the first one)."""
    live = [n for n in stack.worker_names if n in stack.processes]
    db = Database(stack.direct_url)
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with db.read() as s:
                running = set(s.scalars(select(JobRow.worker).where(JobRow.status == "running")))
            for name in live:
                if any(w and w.endswith(f"/{stack.processes[name].pid}") for w in running):
                    return name
            time.sleep(0.2)
    finally:
        db.dispose()
    return live[0]


INJECT: dict[str, Callable[[Stack, float], Callable[[], None]]] = {
    "redis-stop": _redis_stop,
    "redis-kill": _redis_kill,
    "redis-wipe": _redis_wipe,
    "redis-freeze": _redis_freeze,
    "database": _database,
    "worker-kill": _worker_kill,
}


# --------------------------------------------------------------------------------------------
# Measuring


@dataclass
class FaultResult:
    name: str
    outage_s: float
    in_flight: Counter[str]  # jobs open when the fault began: how they ended
    during: Counter[str]  # jobs created during the fault: how they ended
    stranded: int  # of both, still open RECOVERY_TARGET_S after the service came back
    recovered_s: float | None  # service back -> the last of them finished (None: never)
    api_max_s: float  # the longest answer among calls that overlapped the fault
    api_calls: int
    api_failed: int  # transport errors and 5xx among them
    healthz_max_s: float


def run_fault(stack: Stack, load: Load, name: str, outage_s: float) -> FaultResult:
    db = Database(stack.direct_url)
    try:
        _wait_for_running_job(db)  # so that the fault meets work in flight
        before = _job_ids(db, open_only=True)
        began, began_at = time.monotonic(), datetime.now(UTC)
        heal = INJECT[name](stack, outage_s)
        heal()
        back = time.monotonic()
        back_at = began_at.timestamp() + (back - began)
        print(f"  {name}: {back - began:.1f}s of fault; watching recovery", flush=True)
        during = _job_ids(db, since=began_at, until=back_at) - before
        flight = before | during
        while time.monotonic() < back + RECOVERY_TARGET_S and _open(db, flight):
            time.sleep(1.0)
        stranded = len(_open(db, flight))
        while time.monotonic() < back + 3 * RECOVERY_TARGET_S and _open(db, flight):
            time.sleep(2.0)  # how long the stranded ones take, if they ever finish
        rows = {r.id: r for r in _jobs(db, flight)}
        last = max((r.finished_at.timestamp() for r in rows.values() if r.finished_at), default=0)
        calls = [c for c in load.calls if c.started <= back and c.started + c.seconds >= began]
        health = [c for c in load.health if c.started <= back and c.started + c.seconds >= began]
        return FaultResult(
            name, back - began,
            Counter(_ended(rows[i]) for i in before if i in rows),
            Counter(_ended(rows[i]) for i in during if i in rows),
            stranded,
            None if _open(db, flight) else max(0.0, last - back_at),
            max((c.seconds for c in calls), default=0.0), len(calls),
            sum(1 for c in calls if c.status is None or c.status >= 500),
            max((c.seconds for c in health), default=0.0),
        )  # fmt: skip
    finally:
        db.dispose()


def _ended(job: JobRow) -> str:
    """``succeeded``, or the status with its reason (``failed: broker_unavailable``)."""
    reason = job.error_class or job.skip_reason
    return f"{job.status}: {reason}" if reason else str(job.status)


def _wait_for_running_job(db: Database, wait_s: float = 30.0) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with db.read() as s:
            if s.scalars(select(JobRow.id).where(JobRow.status == "running")).first():
                return
        time.sleep(0.1)


def _job_ids(
    db: Database,
    *,
    open_only: bool = False,
    since: datetime | None = None,
    until: float | None = None,
) -> set[str]:
    query = select(JobRow.id)
    if open_only:
        query = query.where(JobRow.status.in_(("queued", "running")))
    if since is not None:
        query = query.where(JobRow.enqueued_at >= since)
    if until is not None:
        query = query.where(JobRow.enqueued_at <= datetime.fromtimestamp(until, UTC))
    with db.read() as s:
        return set(s.scalars(query))


def _jobs(db: Database, ids: set[str]) -> list[JobRow]:
    if not ids:
        return []
    with db.read() as s:
        return list(s.scalars(select(JobRow).where(JobRow.id.in_(ids))))


def _open(db: Database, ids: set[str]) -> list[JobRow]:
    try:
        return [r for r in _jobs(db, ids) if r.status in ("queued", "running")]
    except Exception:  # the bench's own read failed: count them open, look again
        return [JobRow(id=i) for i in ids]


@dataclass
class Ledger:
    sent: int
    acknowledged: int
    lost: int  # acknowledged, not stored
    duplicated: int  # stored more than once
    unacknowledged: int  # never got a 2xx (the gateway gave up)


def audit(stack: Stack, turns: Sequence[Turn]) -> Ledger:
    """Look every turn up: in the active transcript, and in each batch a compaction archived.

    A compaction archives the active messages and stores the kept ones again (the tail, the
    latest user message), so one turn is legitimately in several batches; a turn stored twice
    by the gateway's retries shows up twice within one batch.
    """
    db = Database(stack.direct_url)
    anywhere: Counter[str] = Counter()
    twice: set[str] = set()
    try:
        for session_id in {t.session_id for t in turns}:
            batches: dict[object, Counter[str]] = {}
            archived = archived_messages(db, session_id=session_id)
            for row in [*archived, *active_messages(db, session_id=session_id)]:
                content = row.message.get("content")
                if row.message.get("role") == "user" and isinstance(content, str):
                    batch = batches.setdefault((row.archived_by_job, row.archived_at), Counter())
                    batch[content] += 1
                    anywhere[content] += 1
            twice |= {text for batch in batches.values() for text, n in batch.items() if n > 1}
    finally:
        db.dispose()
    acknowledged = [t for t in turns if t.acknowledged]
    return Ledger(
        sent=len(turns),
        acknowledged=len(acknowledged),
        lost=sum(1 for t in acknowledged if anywhere[t.text] == 0),
        duplicated=sum(1 for t in turns if t.text in twice),
        unacknowledged=len(turns) - len(acknowledged),
    )


# --------------------------------------------------------------------------------------------
# Report


def table(results: Sequence[FaultResult], ledger: Ledger, *, database: str, gateways: int) -> str:
    lines = [
        f"Database: {database}; {gateways} gateways appending a turn every {TURN_PAUSE_S}s; "
        "an LLM that answers in 2 s; two workers (threads, 8 each) and beat.",
        "",
        "| fault | outage | jobs in flight: how they ended | jobs created during it | "
        f"stranded {RECOVERY_TARGET_S:.0f} s after | last done after recovery | "
        "longest API answer | API 5xx/errors | longest /healthz |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        recovered = "never" if r.recovered_s is None else f"{r.recovered_s:.1f} s"
        lines.append(
            f"| {r.name} | {r.outage_s:.0f} s | {_outcomes(r.in_flight)} | "
            f"{_outcomes(r.during)} | {r.stranded} | {recovered} | {r.api_max_s:.2f} s | "
            f"{r.api_failed} of {r.api_calls} | {r.healthz_max_s * 1000:.0f} ms |"
        )
    lines += [
        "",
        f"Turns: {ledger.sent} sent, {ledger.acknowledged} acknowledged, **{ledger.lost} lost**, "
        f"**{ledger.duplicated} duplicated**, {ledger.unacknowledged} never acknowledged.",
        "",
        f"Targets: 0 lost, 0 duplicated, 0 stranded {RECOVERY_TARGET_S:.0f} s after recovery, "
        f"no API answer over {API_TARGET_S:.0f} s, /healthz under "
        f"{HEALTHZ_TARGET_S * 1000:.0f} ms.",
    ]
    return "\n".join(lines)


def _outcomes(counts: Counter[str]) -> str:
    if not counts:
        return "none"
    total = sum(counts.values())
    return f"{total}: " + ", ".join(f"{n} {what}" for what, n in counts.most_common())


DOCS = Path(__file__).resolve().parent.parent / "docs" / "faults.md"


def update_docs(block: str, report: str) -> None:
    """Replace the ``chaos:<block>`` results block of docs/faults.md with ``report``."""
    begin, end = f"<!-- chaos:{block}:begin -->", f"<!-- chaos:{block}:end -->"
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    replace_block(DOCS, begin, end, f"Run of {when}.\n\n{report}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--faults", nargs="*", choices=FAULTS, default=list(FAULTS))
    p.add_argument("--outage-s", type=float, default=20.0, help="how long each outage lasts")
    p.add_argument("--postgres", help="a PostgreSQL URL (a private schema is made in it)")
    p.add_argument("--gateways", type=int, default=GATEWAYS)
    p.add_argument("--update-docs", action="store_true", help=f"write the table into {DOCS}")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp, \
            running_stack(Path(tmp), args.postgres) as stack:  # fmt: skip
        load = Load(stack, args.gateways)
        load.start()
        time.sleep(10)  # steady state: sessions crossing their threshold, jobs in flight
        results = []
        for name in args.faults:
            results.append(run_fault(stack, load, name, args.outage_s))
            time.sleep(5)
        load.stop()
        time.sleep(5)
        ledger = audit(stack, load.turns)
        database = "PostgreSQL" if args.postgres else "SQLite"
        report = table(results, ledger, database=database, gateways=args.gateways)
        print(report)
        if args.update_docs:
            update_docs(database.lower(), report)
        if ledger.lost or ledger.duplicated:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
