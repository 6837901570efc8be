"""The maintenance commands beside a real `compaction up`, as a newcomer runs them: in the same
directory, in another terminal that has none of the stack's settings (not even its ports).

The stack runs on free ports with its reaper idle, so a job sent anywhere but the stack's own
Redis would stay queued for the whole test instead of being rescued."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.support.stack import REPO
from worker import keys
from worker.redis_server import free_port

pytestmark = pytest.mark.integration


def bare_env(**extra: str) -> dict[str, str]:
    """No COMPACTION_* or FLOWER_* from the caller's shell: only what the test sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACTION_", "FLOWER_"))}
    return env | {"PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", **extra}


def compaction(*args: str) -> list[str]:
    return [sys.executable, "-m", "api.cli", *args]


@dataclass
class Up:
    process: subprocess.Popen[bytes]
    cwd: Path
    api: str

    def log(self) -> str:
        return "".join(
            (self.cwd / name).read_text(errors="replace") for name in ("up.log", "up.err")
        )

    def run(
        self, *args: str, timeout_s: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """`compaction ARGS` from the stack's directory, without the stack's settings."""
        return subprocess.run(
            compaction(*args), cwd=self.cwd, env=bare_env(**env), capture_output=True,
            text=True, timeout=timeout_s, check=False,
        )  # fmt: skip


def start_up(cwd: Path, name: str, **env: str) -> subprocess.Popen[bytes]:
    """`compaction up` in ``cwd``; its stdout in NAME.log, its stderr in NAME.err."""
    with (cwd / f"{name}.log").open("wb") as out, (cwd / f"{name}.err").open("wb") as err:
        return subprocess.Popen(
            compaction("up"), cwd=cwd, env=bare_env(**env), stdout=out, stderr=err,
            start_new_session=True,
        )  # fmt: skip


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    """`compaction up` on non-default ports, once it printed its banner."""
    cwd = tmp_path_factory.mktemp("stack")
    api_port = free_port()
    process = start_up(
        cwd, "up",
        COMPACTION_API_PORT=str(api_port), COMPACTION_FLOWER_PORT=str(free_port()),
        COMPACTION_REAPER_INTERVAL_S="3600", COMPACTION_LOCK_BUSY_RETRY_S="1",
    )  # fmt: skip
    stack = Up(process, cwd, f"http://127.0.0.1:{api_port}")
    try:
        deadline = time.monotonic() + 120
        while "compaction-queue is up" not in stack.log():
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"compaction up never became ready:\n{stack.log()}")
            time.sleep(0.2)
        yield stack
    finally:
        stop(process)


def put_sample(up: Up, session_id: str, *, utilization: float) -> dict[str, Any]:
    """The bundled demo session, stored in a window it fills to ``utilization``."""
    from api.commands.demo import load_sample

    sample = load_sample()
    first = httpx.put(f"{up.api}/v1/sessions/{session_id}", timeout=60, json={
        "model": sample["model"], "context_length": 1_000_000, "messages": sample["messages"],
    })  # fmt: skip
    tokens = first.raise_for_status().json()["tokens"]
    answer = httpx.put(f"{up.api}/v1/sessions/{session_id}", timeout=60, json={
        "model": sample["model"], "context_length": int(tokens / utilization),
        "messages": sample["messages"],
    })  # fmt: skip
    body: dict[str, Any] = answer.raise_for_status().json()
    return body


def wait_job(up: Up, job_id: str, *, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = httpx.get(f"{up.api}/v1/jobs/{job_id}", timeout=10).json()
        if job["status"] in ("succeeded", "skipped", "aborted", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} still {job.get('status')} after {timeout_s}s:\n{up.log()}")


def test_sweep_sends_its_job_to_the_stacks_redis_where_it_runs_at_once(up: Up) -> None:
    # Above the sweep's threshold (50%), below hygiene's (85%): only the sweep queues it.
    answer = put_sample(up, "sweep-me", utilization=0.7)
    assert answer["hygiene"]["decision"] == "below_threshold"
    done = up.run("sweep", COMPACTION_SWEEP_IDLE_HOURS="0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "queued 1 session(s)" in done.stdout, done.stdout
    (line,) = [row for row in done.stdout.splitlines() if row.startswith("sweep-me ")]
    job_id = line.split()[-1]
    # The reaper is idle: only a message in the stack's own Redis gets the job run.
    job = wait_job(up, job_id, timeout_s=30)
    assert (job["trigger"], job["status"]) == ("sweep", "succeeded"), job
    assert job["queue_wait_ms"] < 15_000, job


def test_demo_finds_the_stack_on_its_own_port(up: Up) -> None:
    done = up.run("demo", "--timeout=120", timeout_s=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-> enqueued" in done.stdout and "  succeeded" in done.stdout
    assert f"GET {up.api}/v1/sessions/" in done.stdout


def test_demo_stopped_by_ctrl_c_says_where_its_job_carries_on(up: Up) -> None:
    # The session is locked, as by another job: the demo's job waits queued while it is followed.
    session_id = "demo-held"
    stack = json.loads((up.cwd / "var" / "stack.json").read_text())
    client = redis.Redis.from_url(stack["redis_url"])
    client.set(keys.session_lock(session_id), "another-job", px=300_000)
    proc = subprocess.Popen(
        compaction("demo", f"--session-id={session_id}"), cwd=up.cwd, env=bare_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        seen = [proc.stdout.readline() for _ in range(3)]  # posted, following, its first status
        assert seen[2] == "  queued\n", seen
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip() == "compaction demo: interrupted"
    job_id = seen[1].split()[-1]
    assert out == (
        f"stopped following job {job_id}; it carries on in the stack: "
        f"GET {up.api}/v1/jobs/{job_id}\n"
    )
    client.delete(keys.session_lock(session_id))  # the other job is done: this one runs
    job = wait_job(up, job_id, timeout_s=60)
    assert job["status"] == "succeeded", job
    client.close()


def test_stats_and_a_dry_run_read_the_stacks_database(up: Up) -> None:
    stats = up.run("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["total"] >= 1
    dry = up.run("sweep", "--dry-run")
    assert dry.returncode == 0 and dry.stderr == "", dry.stderr  # it found the stack's Redis


def test_a_second_up_in_the_same_directory_is_refused(up: Up) -> None:
    second = start_up(
        up.cwd, "second",
        COMPACTION_API_PORT=str(free_port()), COMPACTION_FLOWER_PORT=str(free_port()),
    )  # fmt: skip
    try:
        code = second.wait(timeout=60)
    finally:
        stop(second)
    err = (up.cwd / "second.err").read_text()
    assert code == 2, err + (up.cwd / "second.log").read_text()
    assert (up.cwd / "second.log").read_text() == ""  # it started nothing
    assert err.count("\n") == 1, err
    assert err.startswith("compaction up: another `compaction up` is running from ")
    assert f"pid {up.process.pid}: API {up.api}, Flower http://127.0.0.1:" in err
    assert "Redis redis://127.0.0.1:" in err
    # The first one keeps its state and keeps serving.
    assert json.loads((up.cwd / "var" / "stack.json").read_text())["pid"] == up.process.pid
    assert httpx.get(f"{up.api}/readyz", timeout=10).status_code == 200
    assert up.process.poll() is None


def test_an_up_that_is_still_starting_keeps_a_second_one_out(tmp_path: Path) -> None:
    # Until its banner, a starting `up` has no stack.json yet: the lock alone names it.
    from worker.launcher import claim_directory
    from worker.settings import Settings

    with claim_directory(Settings(var_dir=tmp_path / "var")):
        done = subprocess.run(
            compaction("up"), cwd=tmp_path, env=bare_env(), capture_output=True, text=True,
            timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert f"(pid {os.getpid()}, still starting)" in done.stderr
    assert sorted(p.name for p in (tmp_path / "var").iterdir()) == ["stack.lock"]
