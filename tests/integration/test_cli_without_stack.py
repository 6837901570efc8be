"""The maintenance commands where no stack runs: one line that says what is wrong, and nothing
created; a dry run that needs only the database. Each runs as a real `compaction` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from tests.support.stack import REPO
from tests.support.worker_fixtures import seed_session
from worker.store.db import Database
from worker.store.models import SessionRow, utcnow

pytestmark = pytest.mark.integration


def compaction(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`compaction ARGS` in ``cwd`` with no COMPACTION_* setting but ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACTION_", "FLOWER_"))}
    return subprocess.run(
        [sys.executable, "-m", "api.cli", *args], cwd=cwd, capture_output=True, text=True,
        timeout=120, check=False, env=base | {"PYTHONPATH": str(REPO), **env},
    )  # fmt: skip


def files_under(path: Path) -> list[Path]:
    return sorted(path.rglob("*"))


@pytest.mark.parametrize("command", [["stats"], ["sweep"], ["sweep", "--dry-run"]])
def test_outside_a_stack_a_command_says_so_in_one_line_and_creates_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    done = compaction(*command, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"compaction {command[0]}: no database at var/compaction.db")
    assert "compaction up" in done.stderr and "COMPACTION_DATABASE_URL" in done.stderr
    assert files_under(tmp_path) == []  # no empty var/compaction.db left behind


def test_stats_on_a_database_without_tables_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")  # what an older `compaction stats` left behind
    done = compaction("stats", cwd=tmp_path, COMPACTION_DATABASE_URL="sqlite:///empty.db")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr == (
        "compaction stats: cannot read the jobs in sqlite:///empty.db: no such table: jobs\n"
    )


@pytest.fixture
def idle_session(database_url: str) -> str:
    """An idle session above the sweep's threshold in a migrated database; its id."""
    db = Database(database_url)
    try:
        session_id = seed_session(db)
        with db.write() as s:
            s.execute(
                update(SessionRow)
                .where(SessionRow.id == session_id)
                .values(last_activity_at=utcnow() - timedelta(hours=10))
            )
    finally:
        db.dispose()
    return session_id


def test_sweep_dry_run_needs_only_the_database(
    tmp_path: Path, database_url: str, idle_session: str
) -> None:
    done = compaction("sweep", "--dry-run", cwd=tmp_path, COMPACTION_DATABASE_URL=database_url)
    assert done.returncode == 0, done.stderr
    assert "would queue 1 session(s)" in done.stdout and idle_session in done.stdout
    # Cooldowns live in Redis: the one thing a dry run without it cannot know, and it says so.
    assert done.stderr == (
        "compaction sweep: no Redis (COMPACTION_REDIS_URL is unset and no `compaction up` runs "
        "here): cooldowns were not checked\n"
    )


def test_sweep_without_a_broker_queues_nothing_and_says_why(
    tmp_path: Path, database_url: str, idle_session: str
) -> None:
    done = compaction("sweep", cwd=tmp_path, COMPACTION_DATABASE_URL=database_url)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("compaction sweep: COMPACTION_REDIS_URL is not set")
    dry = compaction("sweep", "--dry-run", cwd=tmp_path, COMPACTION_DATABASE_URL=database_url)
    assert idle_session in dry.stdout  # still eligible: no job was created


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(tmp_path: Path) -> None:
    # The transcript is a FIFO nobody writes to: `compress` blocks reading it. A writer's
    # non-blocking open succeeds only once a reader holds it, so the signal lands in the read.
    fifo = tmp_path / "transcript.json"
    os.mkfifo(fifo)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACTION_", "FLOWER_"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "compress", str(fifo)], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=base | {"PYTHONPATH": str(REPO)},
    )  # fmt: skip
    writer = None
    try:
        while writer is None and proc.poll() is None:
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: the command has not opened it yet
                time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip() == "compaction compress: interrupted"
    assert out == ""
