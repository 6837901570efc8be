"""Real processes for integration tests: Celery workers, the API (uvicorn), ``compaction up``.

Every process runs ``python -m api.cli ...`` exactly as an operator would, with an environment
built from scratch (only ``COMPACTION_*`` values the test chose), its output in a log file under
the test's tmp dir (a pipe nobody reads would fill up and stall it), and its own process group
so stopping it leaves nothing behind. ``StackProcess.log()`` is what to print when a test fails.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]


def stack_env(
    *, redis_url: str, database_url: str, var_dir: Path, **settings: Any
) -> dict[str, str]:
    """The environment of a child: this interpreter's basics plus chosen COMPACTION_* values.

    ``settings`` are Settings field names (``lock_ttl_s=2``) and become ``COMPACTION_LOCK_TTL_S``.
    """
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TIKTOKEN_CACHE_DIR", "XDG_CACHE_HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(
        PYTHONUNBUFFERED="1",
        PYTHONPATH=str(REPO),
        COMPACTION_REDIS_URL=redis_url,
        COMPACTION_DATABASE_URL=database_url,
        COMPACTION_VAR_DIR=str(var_dir),
    )
    for name, value in settings.items():
        if value is not None:
            env[f"COMPACTION_{name.upper()}"] = str(value)
    return env


class StackProcess:
    """One ``compaction <command>`` child. Use as a context manager."""

    def __init__(
        self,
        name: str,
        args: list[str],
        *,
        env: Mapping[str, str],
        log_dir: Path,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = [sys.executable, "-m", "api.cli", *args]
        self.env = dict(env)
        self.cwd = cwd or REPO
        self.log_path = log_dir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> StackProcess:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_for(self, check: Callable[[], bool], *, timeout_s: float, what: str) -> None:
        """Poll ``check`` until true; fail with this process's log if it dies or times out."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.alive:
                raise AssertionError(f"{self.name} exited before {what}:\n{self.log()}")
            with contextlib.suppress(httpx.HTTPError, OSError):  # not up yet: ask again
                if check():
                    return
            time.sleep(0.1)
        raise AssertionError(f"{self.name}: no {what} after {timeout_s}s:\n{self.log()}")

    def send(self, sig: int) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, sig)

    def kill_hard(self) -> None:
        """SIGKILL the whole process group, as a crashed machine would: no cleanup runs."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after ``grace_s``; the exit status."""
        if self.process is None:
            return None
        if self.alive:
            self.send(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.kill_hard()
        with contextlib.suppress(ProcessLookupError):  # stragglers in its group, if any
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.wait()

    def __enter__(self) -> StackProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc is not None:
            sys.stderr.write(f"--- {self.name} log ---\n{self.log()}\n")


def start_worker(
    env: Mapping[str, str],
    log_dir: Path,
    *,
    name: str = "worker",
    concurrency: int = 4,
    pool: str = "threads",
) -> StackProcess:
    """A ``compaction worker``, returned once it consumes from the queue."""
    return start_workers(env, log_dir, names=[name], concurrency=concurrency, pool=pool)[0]


def start_workers(
    env: Mapping[str, str],
    log_dir: Path,
    *,
    names: Iterable[str],
    concurrency: int = 4,
    pool: str = "threads",
) -> list[StackProcess]:
    """Several workers, started together (each takes seconds to import), once all are ready."""
    procs = [
        StackProcess(
            name,
            [
                "worker",
                f"--pool={pool}",
                f"--concurrency={concurrency}",
                f"--hostname={name}-%h@test",
            ],
            env=env,
            log_dir=log_dir,
        ).start()
        for name in names
    ]
    try:
        for proc in procs:
            proc.wait_for(functools.partial(_worker_ready, proc), timeout_s=60, what="worker ready")
    except BaseException:
        for proc in procs:
            proc.stop()
        raise
    return procs


def _worker_ready(proc: StackProcess) -> bool:
    return " ready." in proc.log()


def start_api(env: Mapping[str, str], log_dir: Path, *, port: int) -> StackProcess:
    """``compaction api`` on ``port``, returned once /readyz answers 200."""
    proc = api_process(env, log_dir, port=port).start()
    wait_api_ready(proc, port)
    return proc


def api_process(env: Mapping[str, str], log_dir: Path, *, port: int) -> StackProcess:
    return StackProcess(
        "api", ["api"], env={**env, "COMPACTION_API_PORT": str(port)}, log_dir=log_dir
    )


def wait_api_ready(proc: StackProcess, port: int) -> None:
    url = f"http://127.0.0.1:{port}/readyz"
    proc.wait_for(
        lambda: httpx.get(url, timeout=2).status_code == 200, timeout_s=60, what="/readyz"
    )


def start_stack(env: Mapping[str, str], log_dir: Path, *, api_port: int) -> list[StackProcess]:
    """The API and one worker, started together; returned once both are ready."""
    api = api_process(env, log_dir, port=api_port).start()
    try:
        worker = start_worker(env, log_dir)
    except BaseException:
        api.stop()
        raise
    try:
        wait_api_ready(api, api_port)
    except BaseException:
        api.stop()
        worker.stop()
        raise
    return [api, worker]


def process_exists(pid: int) -> bool:
    """True while ``pid`` is a live process (a zombie awaiting its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc), children first."""
    out: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children: list[int] = []
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                children += [int(c) for c in (task / "children").read_text().split()]
        out.extend(children)
        frontier.extend(children)
    return out


@contextlib.contextmanager
def broker(redis_url: str) -> Iterator[Any]:
    """A Celery app on ``redis_url`` for sending tasks from a test, closed afterwards."""
    from worker.celery_app import make_celery
    from worker.settings import Settings

    app = make_celery(Settings(redis_url=redis_url))
    try:
        yield app
    finally:
        app.close()


def wait_until(
    check: Callable[[], bool], *, timeout_s: float, what: str, logs: Iterable[StackProcess] = ()
) -> None:
    """Poll ``check``; on timeout fail with the logs of the given processes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    dump = "\n".join(f"--- {p.name} ---\n{p.log()}" for p in logs)
    raise AssertionError(f"no {what} after {timeout_s}s\n{dump}")
