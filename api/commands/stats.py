"""``compaction stats``: recent jobs as a table (or JSON): counts by status, fallback rate,
dropped totals, savings and latency percentiles."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta

from worker.store.stats import JobStats, Percentiles

HELP = "a table of recent jobs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since", type=float, default=24.0, metavar="HOURS", help="look back this far (24)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    from api.commands.locate import database_problem, existing_database
    from worker.errors import LaunchError
    from worker.settings import get_settings
    from worker.store.db import Database
    from worker.store.models import utcnow
    from worker.store.stats import job_stats

    try:
        url = existing_database(get_settings())
    except LaunchError as exc:
        print(f"compaction stats: {exc}", file=sys.stderr)
        return 2
    db = Database(url)
    try:
        stats = job_stats(db, since=utcnow() - timedelta(hours=args.since))
    except SQLAlchemyError as exc:
        shown = make_url(url).render_as_string(hide_password=True)
        print(f"compaction stats: cannot read the jobs in {shown}: {database_problem(exc)}",
              file=sys.stderr)  # fmt: skip
        return 1
    finally:
        db.dispose()
    print(json.dumps(stats.to_dict(), indent=2) if args.json else render(stats, args.since))
    return 0


def render(stats: JobStats, hours: float) -> str:
    rows = [(status, str(n)) for status, n in stats.by_status.items()]
    rows += [
        ("total", str(stats.total)),
        ("", ""),
        ("fallback rate", _rate(stats)),
        ("dropped messages", str(stats.dropped_total)),
        ("savings % p50 / p95", _pair(stats.savings_pct, "{:.1f}")),
        ("queue wait p50 / p95", _pair(stats.queue_wait_ms, "{:.0f} ms")),
        ("run time p50 / p95", _pair(stats.run_ms, "{:.0f} ms")),
        ("LLM time p50 / p95", _pair(stats.llm_ms, "{:.0f} ms")),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"jobs enqueued in the last {hours:g} h (since {stats.since:%Y-%m-%d %H:%M} UTC)", ""]
    lines += [f"  {label:<{width}}  {value}" if label else "" for label, value in rows]
    return "\n".join(lines)


def _rate(stats: JobStats) -> str:
    if stats.fallback_rate is None:
        return "- (no succeeded job)"
    succeeded = stats.by_status.get("succeeded", 0)
    return f"{stats.fallback_rate:.1%} ({stats.fallback_count} of {succeeded} succeeded)"


def _pair(p: Percentiles, fmt: str) -> str:
    if p.p50 is None or p.p95 is None:
        return "-"
    return f"{fmt.format(p.p50)} / {fmt.format(p.p95)}"
