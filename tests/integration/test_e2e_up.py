"""`compaction up` and the single-component commands, run as real processes."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import REPO, descendants, process_exists
from worker.redis_server import free_port

pytestmark = pytest.mark.integration


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No COMPACTION_* from the caller's shell: only what the test sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACTION_", "FLOWER_"))}
    env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", **extra)
    return env


def compaction(*args: str) -> list[str]:
    return [sys.executable, "-m", "api.cli", *args]


@pytest.mark.parametrize("command", ["worker", "beat", "flower"])
def test_a_component_without_a_redis_url_says_so(tmp_path: Path, command: str) -> None:
    done = subprocess.run(
        compaction(command), cwd=tmp_path, env=bare_env(tmp_path), capture_output=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert b"COMPACTION_REDIS_URL is not set" in done.stderr


def test_up_refuses_a_busy_port_before_starting_anything(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = bare_env(tmp_path, COMPACTION_API_PORT=str(port))
        done = subprocess.run(
            compaction("up"), cwd=tmp_path, env=env, capture_output=True, timeout=60, check=False
        )
    assert done.returncode == 2
    assert f"port {port}".encode() in done.stderr
    assert b"COMPACTION_API_PORT" in done.stderr
    assert not (tmp_path / "var" / "redis").exists()  # nothing was started


def test_up_serves_the_demo_then_sigint_stops_every_child(tmp_path: Path) -> None:
    api_port, flower_port = free_port(), free_port()
    env = bare_env(
        tmp_path, COMPACTION_API_PORT=str(api_port), COMPACTION_FLOWER_PORT=str(flower_port)
    )
    log = (tmp_path / "up.log").open("wb")
    up = subprocess.Popen(
        compaction("up"), cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(lambda: banner_printed(tmp_path), up, tmp_path, timeout_s=120)
        children = descendants(up.pid)
        assert len(children) >= 5, children  # redis-server, api, worker, beat, flower
        assert httpx.get(f"http://127.0.0.1:{api_port}/readyz", timeout=5).status_code == 200
        user, password = read_flower_credentials(tmp_path)
        flower_api = f"http://127.0.0.1:{flower_port}/api/workers"
        assert httpx.get(flower_api, timeout=5).status_code == 401
        authed = httpx.get(flower_api, auth=(user, password), timeout=10)
        assert authed.status_code == 200

        demo = subprocess.run(
            compaction("demo", "--timeout=120"), cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=180, check=False,
        )  # fmt: skip
        assert demo.returncode == 0, demo.stdout + demo.stderr
        assert "-> enqueued" in demo.stdout and "  succeeded" in demo.stdout
        assert '"status": "succeeded"' in demo.stdout and "% saved)" in demo.stdout
        # The telemetry reads in the job's own order (its status near the top, not sorted
        # in among the counts), its durations without float noise.
        shown_keys = re.findall(r'^  "(\w+)":', demo.stdout, re.M)
        assert shown_keys[:4] == ["id", "session_id", "trigger", "status"], shown_keys
        assert not re.search(r'_ms": \d+\.\d{2,}', demo.stdout), demo.stdout

        # The banner names the worker's metrics, and they count the demo's job.
        stack = json.loads((tmp_path / "var" / "stack.json").read_text())
        assert stack["worker_metrics"] in read_log(tmp_path).decode(errors="replace")
        metrics = httpx.get(stack["worker_metrics"], timeout=10).text
        finished = [
            line
            for line in metrics.splitlines()
            if line.startswith("compaction_worker_jobs_finished_total{")
            and 'status="succeeded"' in line
            and 'trigger="hygiene"' in line
        ]
        assert [line.rsplit(" ", 1)[1] for line in finished] == ["1.0"], finished or metrics

        # Ops see the job's telemetry in Flower: the task id is the job id, its result the row
        # as JSON text (the task's return value, which Celery's event shows as its repr).
        job = httpx.get(f"http://127.0.0.1:{api_port}/v1/jobs?limit=1", timeout=10).json()
        task_url = f"http://127.0.0.1:{flower_port}/api/task/info/{job['jobs'][0]['id']}"

        def flower_shows_telemetry() -> bool:
            info = httpx.get(task_url, auth=(user, password), timeout=10)
            return info.status_code == 200 and '"tokens_after":' in str(info.json().get("result"))

        wait_until(flower_shows_telemetry, up, tmp_path, timeout_s=30)
        task = httpx.get(task_url, auth=(user, password), timeout=10).json()
        shown = json.loads(ast.literal_eval(task["result"]))
        assert task["state"] == "SUCCESS" and shown["status"] == "succeeded"
        assert shown["fallback_used"] is False and shown["dropped_count"] == 0
        assert "worker" in shown  # the last field: nothing was cut off
        assert json.loads(task["kwargs"])["trigger"] == "hygiene"

        up.send_signal(signal.SIGINT)
        assert exit_status(up, tmp_path) == 0
        time.sleep(0.2)
        assert [pid for pid in children if process_exists(pid)] == []
        assert (tmp_path / "var" / "compaction.db").exists()
        assert (tmp_path / "var" / "redis" / "appendonlydir").exists() or any(
            (tmp_path / "var" / "redis").glob("appendonly*")
        )
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
        log.close()


def test_a_second_signal_stops_a_worker_that_waits_for_its_running_job(tmp_path: Path) -> None:
    # The worker's warm shutdown waits for a job whose summary the LLM takes minutes to write;
    # the first Ctrl-C says so, the second stops everything without the 20-s grace.
    with FakeOpenAI(default=Reply.ok("Summary: slow.").after(600)) as llm:
        env = bare_env(
            tmp_path,
            COMPACTION_API_PORT=str(free_port()),
            COMPACTION_FLOWER_PORT=str(free_port()),
            COMPACTION_LLM_BASE_URL=llm.base_url,
            COMPACTION_SUMMARY_MODEL="slow-summary",
            COMPACTION_LLM_STREAM="false",
        )
        with (tmp_path / "up.log").open("wb") as log:
            up = subprocess.Popen(
                compaction("up"), cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        demo = None
        try:
            wait_until(lambda: banner_printed(tmp_path), up, tmp_path, timeout_s=120)
            demo = subprocess.Popen(
                compaction("demo", "--timeout=900"), cwd=tmp_path, env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            wait_until(lambda: bool(llm.requests), up, tmp_path, timeout_s=60)  # the job waits
            up.send_signal(signal.SIGINT)
            wait_until(lambda: b"Ctrl-C again stops now" in read_log(tmp_path), up, tmp_path,
                       timeout_s=30)  # fmt: skip
            up.send_signal(signal.SIGINT)
            assert exit_status(up, tmp_path) == 0
            output = read_log(tmp_path).decode(errors="replace")
            assert "waiting up to 20s for worker" in output
            assert "stopping now" in output and "did not stop in" not in output
            # The last line says that everything stopped, and where the data is.
            last = output.rstrip().splitlines()[-1]
            assert "stopped " in last and "redis-server" in last and "var" in last, last
        finally:
            if demo is not None:
                demo.kill()
                demo.wait()
            if up.poll() is None:
                os.killpg(up.pid, signal.SIGKILL)
                up.wait()


def read_log(tmp_path: Path) -> bytes:
    return (tmp_path / "up.log").read_bytes()


def start_up(tmp_path: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """`compaction up` on free ports, once it printed its banner; its descendants' pids."""
    env = bare_env(
        tmp_path,
        COMPACTION_API_PORT=str(free_port()),
        COMPACTION_FLOWER_PORT=str(free_port()),
    )
    with (tmp_path / "up.log").open("wb") as log:
        up = subprocess.Popen(
            compaction("up"), cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    wait_until(lambda: banner_printed(tmp_path), up, tmp_path, timeout_s=120)
    return up, descendants(up.pid)


def test_sigterm_stops_every_child_too(tmp_path: Path) -> None:
    up, children = start_up(tmp_path)
    try:
        up.send_signal(signal.SIGTERM)
        assert exit_status(up, tmp_path) == 0
        time.sleep(0.2)
        assert [pid for pid in children if process_exists(pid)] == []
        assert not (tmp_path / "var" / "stack.json").exists()
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()


def test_a_child_that_dies_is_reported_and_stops_the_rest(tmp_path: Path) -> None:
    up, children = start_up(tmp_path)
    try:
        worker = next(pid for pid in children if b"--child\x00worker" in cmdline(pid))
        os.kill(worker, signal.SIGKILL)
        assert exit_status(up, tmp_path) == 1
        time.sleep(0.2)
        assert [pid for pid in children if process_exists(pid)] == []
        output = (tmp_path / "up.log").read_text()
        assert "worker exited with status -9; stopping" in output
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def banner_printed(tmp_path: Path) -> bool:
    return b"compaction-queue is up" in (tmp_path / "up.log").read_bytes()


def read_flower_credentials(tmp_path: Path) -> tuple[str, str]:
    return "admin", (tmp_path / "var" / "flower-password").read_text().strip()


def exit_status(proc: subprocess.Popen[bytes], tmp_path: Path) -> int:
    """The stopping launcher's exit status; its output if it has not exited in a minute."""
    try:
        return proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        output = (tmp_path / "up.log").read_text(errors="replace")
        raise AssertionError(f"compaction up did not exit:\n{output}") from None


def wait_until(
    check: object, proc: subprocess.Popen[bytes], tmp_path: Path, *, timeout_s: float
) -> None:
    assert callable(check)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    output = (tmp_path / "up.log").read_text(errors="replace")
    raise AssertionError(f"compaction up never became ready:\n{output}")
