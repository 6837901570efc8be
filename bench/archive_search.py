"""Archive search and paging latency on SQLite and PostgreSQL, next to a plain LIKE scan.

Builds an archive of ``--messages`` archived messages (one session of ``--big-session``
messages, the rest in sessions of ``--session-size``; bench/archive_corpus.py makes them up),
written through the store's own indexing (worker/store/archive_index.py), then times:

- search (``worker.store.archive.search_archive``, snippets included) for needles that occur
  once (a request id, a path, an error line), common words, commands, error lines that recur,
  non-English words and an absent string, half in the big session and half in small ones;
- the same queries as ``LIKE '%…%'`` over the same table and session, without the trigram
  index (what a search without one costs);
- archive pages (``archive_page``) at random cursors of the big session.

Targets: search p99 <= 50 ms, any page of the 100,000-message session p99 <= 20 ms.

    python -m bench.archive_search --messages 1000000 --backend sqlite postgresql
    python -m bench.archive_search --messages 100000 --big-session 20000   # a quick run

Databases are kept under var/bench/ (SQLite) and in a schema of their own (PostgreSQL), and
reused by a later run of the same size (``--rebuild`` starts over).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url

from bench.archive_corpus import COMMANDS, ERRORS, Needles, session_messages
from worker.store.archive import archive_page, search_archive
from worker.store.archive_index import index_messages
from worker.store.db import Database, migrate
from worker.store.models import MessageRow, SessionRow, utcnow
from worker.store.search_text import parse_query

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SEARCH_P99_MS, PAGE_P99_MS = 50.0, 20.0
_CHUNK = 5_000


@dataclass(frozen=True, slots=True)
class Layout:
    messages: int
    big_session: int
    session_size: int

    def sessions(self) -> list[tuple[str, int, int]]:
        """(session id, number, message count); the big one first."""
        out = [("big", 0, self.big_session)]
        rest, n = self.messages - self.big_session, 1
        while rest > 0:
            count = min(self.session_size, rest)
            out.append((f"s{n:06d}", n, count))
            rest, n = rest - count, n + 1
        return out


# ---------------------------------------------------------------------------------------------
# building


@dataclass(frozen=True, slots=True)
class Target:
    url: str
    schema: str | None  # PostgreSQL: the benchmark's own schema

    def empty(self) -> None:
        """Nothing of an earlier build left (a fresh file; the schema made anew)."""
        if self.schema is None:
            path = Path(str(make_url(self.url).database))
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            return
        engine = create_engine(self.url)
        with engine.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'))
            conn.execute(text(f'CREATE SCHEMA "{self.schema}"'))
        engine.dispose()


def target_of(backend: str, layout: Layout, args: argparse.Namespace) -> Target:
    tag = f"{layout.messages}_{layout.big_session}_{layout.session_size}"
    if backend == "sqlite":
        return Target(f"sqlite:///{Path(args.sqlite_dir) / f'archive-{tag}.db'}", None)
    schema = f"bench_archive_{tag}"
    admin = create_engine(args.postgres_url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
    admin.dispose()
    url = make_url(args.postgres_url).update_query_dict({"options": f"-csearch_path={schema}"})
    return Target(url.render_as_string(hide_password=False), schema)


def archived_count(db: Database) -> int:
    with db.read() as s:
        return int(s.execute(text("SELECT count(*) FROM archive_text")).scalar_one())


def build(db: Database, layout: Layout) -> dict[str, Needles]:
    """Write every session's messages as archived, indexed as the store indexes them."""
    needles: dict[str, Needles] = {}
    next_id = 1
    started = time.perf_counter()
    for session_id, number, count in layout.sessions():
        messages, needles[session_id] = session_messages(number, count)
        with db.write() as s:
            now = utcnow()
            s.add(_session_row(session_id, count, now))
            s.flush()
            for start in range(0, count, _CHUNK):
                chunk = messages[start : start + _CHUNK]
                rows = [(next_id + i, start + i + 1, m) for i, m in enumerate(chunk)]
                s.execute(insert(MessageRow), [_message_values(session_id, r, now) for r in rows])
                index_messages(s, session_id=session_id, rows=rows)
                next_id += len(chunk)
        if number % 100 == 0:
            done = next_id - 1
            rate = done / (time.perf_counter() - started)
            print(f"  {done:,} messages ({rate:,.0f}/s)", file=sys.stderr)
    return needles


def _session_row(session_id: str, count: int, now: Any) -> SessionRow:
    return SessionRow(
        id=session_id, model="gpt-4o", context_length=128_000, version=2, rewrite_count=1,
        next_seq=count + 1, token_total=0, message_count=0, compaction_count=0,
        ineffective_count=0, created_at=now, updated_at=now, last_activity_at=now,
    )  # fmt: skip


def _message_values(session_id: str, row: tuple[int, int, Any], now: Any) -> dict[str, Any]:
    message_id, seq, message = row
    return {
        "id": message_id, "session_id": session_id, "seq": seq, "role": message["role"],
        "data": message, "tokens": 50, "active": False, "generation": 0,
        "archived_at": now, "created_at": now,
    }  # fmt: skip


def needles_of(layout: Layout) -> dict[str, Needles]:
    return {sid: session_messages(n, count)[1] for sid, n, count in layout.sessions()}


# ---------------------------------------------------------------------------------------------
# queries


@dataclass(frozen=True, slots=True)
class Probe:
    kind: str
    session_id: str
    q: str


def probes(layout: Layout, needles: dict[str, Needles], n: int, seed: int = 11) -> list[Probe]:
    """``n`` queries of each kind, half in the big session and half in small ones."""
    rng = random.Random(seed)
    small = [sid for sid, _, _ in layout.sessions()[1:]] or ["big"]
    kinds: dict[str, Callable[[str], str]] = {
        "unique id": lambda sid: needles[sid].request_id,
        "unique path": lambda sid: needles[sid].path,
        "unique error line": lambda sid: needles[sid].error_line,
        "common words": lambda _: rng.choice(("connection pool", "database timeout", "retry")),
        "command": lambda _: rng.choice(COMMANDS),
        "recurring error line": lambda _: rng.choice(ERRORS),
        "non-English word": lambda _: rng.choice(("сборка", "журнал ошибок", "データベース")),
        "absent": lambda _: f"zqxj-{rng.getrandbits(32):08x}",
    }
    out = []
    for kind, make in kinds.items():
        for i in range(n):
            sid = "big" if i % 2 == 0 else rng.choice(small)
            out.append(Probe(kind, sid, make(sid)))
    return out


def time_ms(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000.0


def like_scan(db: Database, probe: Probe) -> Callable[[], object]:
    """The same question answered without the index: LIKE over the session's rows."""
    escaped = probe.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    sql = text(
        "SELECT seq FROM archive_text WHERE session_id = :sid AND body LIKE :p ESCAPE '\\' "
        "ORDER BY seq DESC LIMIT 21"
    )

    def run() -> object:
        with db.read() as s:
            if db.dialect == "postgresql":  # GIN answers only bitmap scans: this keeps it out
                s.execute(text("SET LOCAL enable_bitmapscan = off"))
            return s.execute(sql, {"sid": probe.session_id, "p": f"%{escaped}%"}).all()

    return run


def run_searches(db: Database, plan: Sequence[Probe]) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {"search": {}, "like": {}}
    for probe in plan[: min(len(plan), 20)]:  # warm the caches
        search_archive(db, session_id=probe.session_id, query=parse_query(probe.q))
    for probe in plan:
        query = parse_query(probe.q)
        ms = time_ms(lambda: search_archive(db, session_id=probe.session_id, query=query))  # noqa: B023
        out["search"].setdefault(probe.kind, []).append(ms)
        out["like"].setdefault(probe.kind, []).append(time_ms(like_scan(db, probe)))
    return out


def run_pages(db: Database, big: int, n: int, limit: int, seed: int = 5) -> list[float]:
    rng = random.Random(seed)
    cursors = [0, big - limit] + [rng.randrange(0, big) for _ in range(n - 2)]
    for cursor in cursors[:10]:
        archive_page(db, session_id="big", after_seq=cursor, limit=limit)
    out = []
    for cursor in cursors:
        started = time.perf_counter()
        archive_page(db, session_id="big", after_seq=cursor, limit=limit)
        out.append((time.perf_counter() - started) * 1000.0)
    return out


# ---------------------------------------------------------------------------------------------
# report


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(backend: str, layout: Layout, build_s: float | None, found: dict[str, Any]) -> str:
    lines = [
        f"\n### {backend}: {layout.messages:,} archived messages "
        f"(one session of {layout.big_session:,}, the rest in sessions of "
        f"{layout.session_size:,})",
        "",
        f"build: {'reused' if build_s is None else f'{build_s:,.0f} s'}",
        "",
        "| query | n | search p50 ms | search p99 ms | LIKE p50 ms | LIKE p99 ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    search, like = found["searches"]["search"], found["searches"]["like"]
    for kind in search:
        s, lk = search[kind], like[kind]
        lines.append(
            f"| {kind} | {len(s)} | {statistics.median(s):.2f} | {pct(s, 0.99):.2f} | "
            f"{statistics.median(lk):.2f} | {pct(lk, 0.99):.2f} |"
        )
    every = [ms for values in search.values() for ms in values]
    every_like = [ms for values in like.values() for ms in values]
    lines.append(
        f"| **all** | {len(every)} | {statistics.median(every):.2f} | "
        f"**{pct(every, 0.99):.2f}** | {statistics.median(every_like):.2f} | "
        f"{pct(every_like, 0.99):.2f} |"
    )
    lines += [
        "",
        "| archive page of the big session | n | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
    ]
    for limit, values in found["pages"].items():
        lines.append(
            f"| limit {limit} | {len(values)} | {statistics.median(values):.2f} | "
            f"**{pct(values, 0.99):.2f}** |"
        )
    verdict = pct(every, 0.99) <= SEARCH_P99_MS and all(
        pct(v, 0.99) <= PAGE_P99_MS for v in found["pages"].values()
    )
    lines += ["", f"targets (search p99 <= {SEARCH_P99_MS:g} ms, page p99 <= "
              f"{PAGE_P99_MS:g} ms): {'met' if verdict else 'MISSED'}"]  # fmt: skip
    return "\n".join(lines)


def run_backend(backend: str, layout: Layout, args: argparse.Namespace) -> str:
    target = target_of(backend, layout, args)
    if args.rebuild:
        target.empty()
    migrate(target.url)
    db = Database(target.url)
    try:
        build_s: float | None = None
        if archived_count(db) != layout.messages:
            if archived_count(db):  # a build that did not finish
                db.dispose()
                target.empty()
                migrate(target.url)
                db = Database(target.url)
            print(f"{backend}: building {layout.messages:,} messages", file=sys.stderr)
            started = time.perf_counter()
            needles = build(db, layout)
            with db.write() as s:
                s.execute(text("ANALYZE"))
            build_s = time.perf_counter() - started
        else:
            needles = needles_of(layout)
        plan = probes(layout, needles, args.queries)
        found = {
            "searches": run_searches(db, plan),
            "pages": {
                limit: run_pages(db, layout.big_session, args.pages, limit) for limit in (50, 500)
            },
        }
        return report(backend, layout, build_s, found)
    finally:
        db.dispose()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--messages", type=int, default=1_000_000, help="archived messages in all")
    p.add_argument("--big-session", type=int, default=100_000, help="messages of the big one")
    p.add_argument("--session-size", type=int, default=1_000, help="messages of the others")
    p.add_argument("--backend", nargs="+", choices=("sqlite", "postgresql"),
                   default=["sqlite", "postgresql"])  # fmt: skip
    p.add_argument("--postgres-url", default=os.environ.get("COMPACTION_BENCH_POSTGRES_URL",
                                                            DEFAULT_POSTGRES))  # fmt: skip
    p.add_argument("--sqlite-dir", default="var/bench")
    p.add_argument("--queries", type=int, default=100, help="queries of each kind")
    p.add_argument("--pages", type=int, default=300, help="pages read of each size")
    p.add_argument("--rebuild", action="store_true", help="build the databases again")
    args = p.parse_args(argv)
    if not 0 < args.big_session <= args.messages:
        p.error("--big-session must be between 1 and --messages")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    layout = Layout(args.messages, args.big_session, args.session_size)
    for backend in args.backend:
        print(run_backend(backend, layout, args), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
