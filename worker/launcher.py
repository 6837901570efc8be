"""The embedded stack behind ``compaction up``: Redis, migrations, then API, worker, beat, Flower.

Each component runs as a child process in its own process group (so the terminal's Ctrl-C
reaches only us, and we stop children in order), with its output streamed under a name prefix.
The first child to die stops the rest; SIGINT and SIGTERM stop everything; nothing outlives us.
Children also ask the kernel to SIGTERM them if we vanish without cleaning up (Linux).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import redis
from kombu.exceptions import OperationalError

from worker.errors import LaunchError
from worker.redis_server import RedisServer, free_port
from worker.settings import Settings

LAUNCHER_PID_ENV = "COMPACTION_LAUNCHER_PID"
_PR_SET_PDEATHSIG = 1
# What a component that is still starting answers a readiness probe with.
_NOT_READY = (OSError, httpx.HTTPError, redis.RedisError, OperationalError)
STOP_GRACE_S = 20.0  # a worker's warm shutdown waits for running jobs; then SIGKILL


def die_with_parent() -> None:
    """In a child of the launcher: get SIGTERM when the launcher dies, even by SIGKILL."""
    expected = os.environ.get(LAUNCHER_PID_ENV)
    if not expected or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(expected):  # the launcher died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def stack_file(settings: Settings) -> Path:
    """Where a running ``compaction up`` says what it started (removed when it stops)."""
    return settings.var_dir / "stack.json"


@dataclass(frozen=True, slots=True)
class RunningStack:
    """What the stack file of a running ``compaction up`` says."""

    pid: int
    redis_url: str | None
    api: str | None  # base URL of its API
    flower: str | None

    def describe(self) -> str:
        named = (("API", self.api), ("Flower", self.flower), ("Redis", self.redis_url))
        urls = [f"{name} {url}" for name, url in named if url]
        return f"pid {self.pid}: {', '.join(urls)}" if urls else f"pid {self.pid}"


def running_stack(settings: Settings) -> RunningStack | None:
    """The ``compaction up`` running from this directory (its var/), once it is ready."""
    try:
        info = json.loads(stack_file(settings).read_text())
        pid = int(info["pid"])
        os.kill(pid, 0)  # still running?
    except (OSError, ValueError, KeyError, TypeError):
        return None

    def text(key: str) -> str | None:
        value = info.get(key)
        return value if isinstance(value, str) else None

    return RunningStack(pid, text("redis_url"), text("api"), text("flower"))


def embedded_redis_url(settings: Settings) -> str | None:
    """The Redis URL of the ``compaction up`` running from this directory, if one is."""
    stack = running_stack(settings)
    return stack.redis_url if stack is not None else None


@contextlib.contextmanager
def claim_directory(settings: Settings) -> Iterator[None]:
    """Be the only ``compaction up`` of this var/ while the block runs, or raise ``LaunchError``.

    A second one would share the SQLite file, Redis's append-only file and beat's schedule
    (two beats queue every sweep twice), and remove the first one's stack file when it stopped.
    The kernel drops the lock when we exit, however we exit, so a crash leaves nothing to clean.
    """
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(settings.var_dir / "stack.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LaunchError(_already_running(settings, fd)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def _already_running(settings: Settings, lock_fd: int) -> str:
    stack = running_stack(settings)
    if stack is not None:
        running = stack.describe()
    else:  # still starting: only the lock file names it yet
        pid = os.pread(lock_fd, 32, 0).decode(errors="replace").strip()
        running = f"pid {pid}, still starting" if pid.isdigit() else "still starting"
    return (
        f"another `compaction up` is running from {settings.var_dir.resolve()}/ ({running}); "
        "stop it first, or start this one from another directory (or with its own "
        "COMPACTION_VAR_DIR)"
    )


def check_port_free(host: str, port: int, variable: str) -> None:
    """Raise ``LaunchError`` naming the setting when ``port`` cannot be bound."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # The same option uvicorn and tornado set, so a port in TIME_WAIT counts as free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise LaunchError(
                f"port {port} on {host} is busy ({exc.strerror}): stop whatever uses it or "
                f"set {variable} to a free port"
            ) from exc


def flower_credentials(settings: Settings) -> tuple[str, str]:
    """The configured Flower user and password, or ones generated once and kept under var/.

    Flower's /api/* refuses anonymous callers (and opening it anonymously would also allow
    cross-origin calls from any web page), so the embedded stack always runs it with basic
    auth and prints the credentials.
    """
    if settings.flower_user and settings.flower_password:
        return settings.flower_user, settings.flower_password.get_secret_value()
    path = settings.var_dir / "flower-password"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(18))
    return settings.flower_user or "admin", path.read_text().strip()


@dataclass
class Child:
    """One component process and the thread that relays its output."""

    name: str
    process: subprocess.Popen[bytes]
    relay: threading.Thread

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):  # already gone: nothing to signal
            os.killpg(self.process.pid, sig)


@dataclass(frozen=True)
class Component:
    name: str
    ready: Callable[[], bool]  # True once it answers


@dataclass
class Launcher:
    """Runs the stack in the foreground until a signal arrives or a child dies."""

    settings: Settings
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    ready_timeout_s: float = 120.0
    stop_grace_s: float = STOP_GRACE_S
    _children: list[Child] = field(default_factory=list)
    _redis: RedisServer | None = None
    _redis_url: str = ""
    _metrics_port: int = 0  # the worker's metrics, chosen in _prepare
    _out_lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: StopFlag | None = None  # while run() runs
    _ping_app: Any = None  # a Celery app to ping the worker with, made on first use

    def say(self, text: str, prefix: str = "up") -> None:
        with self._out_lock:
            for line in text.splitlines() or [""]:
                self.out.write(f"{prefix:>6} | {line}\n")
            self.out.flush()

    def run(self) -> int:
        """Start everything, supervise, stop everything. The exit status for the CLI."""
        with _stop_on_signals() as self._stop, claim_directory(self.settings):
            try:
                self._prepare()
                self._start_children()
                if not self._wait_ready():
                    return 1
                self._banner()
                self._write_stack_file()
                return self._supervise()
            finally:
                self._shutdown()

    # -- start -------------------------------------------------------------------------------
    def _prepare(self) -> None:
        s = self.settings
        check_port_free(s.api_host, s.api_port, "COMPACTION_API_PORT")
        check_port_free(s.flower_host, s.flower_port, "COMPACTION_FLOWER_PORT")
        # The worker's job-outcome metrics: on the port set, else on a free one (printed).
        self._metrics_port = s.worker_metrics_port or free_port()
        s.var_dir.mkdir(parents=True, exist_ok=True)
        if s.redis_url:
            self._redis_url = s.redis_url
        else:
            self._redis = RedisServer(s.var_dir / "redis", appendonly=True).start()
            self._redis_url = self._redis.url
            self.say(f"redis-server on {self._redis_url} (append-only file in var/redis/)")
        from worker.store.db import migrate  # the store loads SQLAlchemy and Alembic

        migrate(s.database_url)
        self.say(f"database migrated: {_display_url(s.database_url)}")

    def child_env(self) -> dict[str, str]:
        from worker.logs import resolve_format

        user, password = flower_credentials(self.settings)
        return {
            **os.environ,
            # The children write into our pipe: "auto" decides by our stderr, not theirs.
            "COMPACTION_LOG_FORMAT": resolve_format(self.settings.log_format, sys.stderr),
            "COMPACTION_REDIS_URL": self._redis_url,
            "COMPACTION_FLOWER_USER": user,
            "COMPACTION_FLOWER_PASSWORD": password,
            "COMPACTION_WORKER_METRICS_PORT": str(self._metrics_port),
            "PYTHONUNBUFFERED": "1",
            LAUNCHER_PID_ENV: str(os.getpid()),
        }

    def _start_children(self) -> None:
        env = self.child_env()
        for component in self.components():
            argv = [sys.executable, "-m", "api.cli", "up", "--child", component.name]
            self._children.append(self._spawn(component.name, argv, env))

    def _spawn(self, name: str, argv: Sequence[str], env: dict[str, str]) -> Child:
        process = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: we decide when it stops
        )
        relay = threading.Thread(target=self._relay, args=(name, process), daemon=True)
        relay.start()
        return Child(name=name, process=process, relay=relay)

    def _relay(self, name: str, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        with process.stdout:
            for raw in iter(process.stdout.readline, b""):
                self.say(raw.decode(errors="replace").rstrip("\n"), prefix=name)

    def components(self) -> list[Component]:
        s = self.settings
        api = f"http://{s.api_host}:{s.api_port}"
        flower = f"http://{s.flower_host}:{s.flower_port}"
        return [
            Component("api", lambda: _http_ok(f"{api}/readyz")),
            Component("worker", self._worker_answers),
            Component("beat", lambda: True),  # it has no port: alive is all we can check
            Component("flower", lambda: _http_ok(f"{flower}/healthcheck")),
        ]

    def _worker_answers(self) -> bool:
        if self._ping_app is None:
            from worker.celery_app import make_celery

            update = {"redis_url": self._redis_url}
            self._ping_app = make_celery(self.settings.model_copy(update=update))
        return bool(self._ping_app.control.ping(timeout=1.0))

    @property
    def stopping(self) -> StopFlag:
        assert self._stop is not None, "only while run() runs"
        return self._stop

    def _wait_ready(self) -> bool:
        pending = {c.name: c for c in self.components()}
        deadline = time.monotonic() + self.ready_timeout_s
        while pending and time.monotonic() < deadline and not self.stopping.is_set():
            if self._dead_child() is not None:
                return False
            for name, component in list(pending.items()):
                with contextlib.suppress(*_NOT_READY):  # not up yet: asked again next round
                    if component.ready():
                        del pending[name]
            self.stopping.wait(0.3)
        if pending and not self.stopping.is_set():
            self.say(f"not ready after {self.ready_timeout_s:.0f}s: {', '.join(pending)}")
            return False
        return not self.stopping.is_set()

    def _banner(self) -> None:
        s = self.settings
        user, password = flower_credentials(s)
        api = f"http://{s.api_host}:{s.api_port}"
        self.say(
            "\n".join(
                [
                    "compaction-queue is up",
                    f"  API     {api}",
                    f"  docs    {api}/docs",
                    f"  Flower  http://{s.flower_host}:{s.flower_port}  (user {user!r}, password {password!r})",
                    f"  Redis   {self._redis_url}",
                    f"  metrics {self._metrics_url}  (the worker's job outcomes; the API's at "
                    f"{api}/metrics)",
                    "next: `compaction demo` in another terminal; Ctrl-C stops everything",
                ]
            )
        )

    @property
    def _metrics_url(self) -> str:
        return f"http://{self.settings.worker_metrics_host}:{self._metrics_port}/metrics"

    def _write_stack_file(self) -> None:
        s = self.settings
        info = {
            "pid": os.getpid(),
            "redis_url": self._redis_url,
            "api": f"http://{s.api_host}:{s.api_port}",
            "flower": f"http://{s.flower_host}:{s.flower_port}",
            "worker_metrics": self._metrics_url,
        }
        stack_file(s).write_text(json.dumps(info, indent=2) + "\n")

    # -- supervise and stop ------------------------------------------------------------------
    def _dead_child(self) -> Child | None:
        for child in self._children:
            if not child.alive:
                self.say(f"{child.name} exited with status {child.process.returncode}; stopping")
                return child
        return None

    def _supervise(self) -> int:
        while not self.stopping.wait(0.25):
            if self._dead_child() is not None:
                return 1
        self.say("stopping")
        return 0

    def _shutdown(self) -> None:
        stack_file(self.settings).unlink(missing_ok=True)
        for child in self._children:
            child.signal_group(signal.SIGTERM)
        forced = self._wait_for_children()
        for child in self._children:
            if child.alive and not forced:
                self.say(f"{child.name} did not stop in {self.stop_grace_s:.0f}s; killing it")
            child.signal_group(signal.SIGKILL)  # also any straggler left in its group
            child.process.wait()
            child.relay.join(timeout=5)
        stopped = [child.name for child in self._children]
        self._children.clear()
        if self._ping_app is not None:
            self._ping_app.close()
            self._ping_app = None
        if self._redis is not None:
            self._redis.stop()  # last: a stopping worker hands its reserved jobs back to it
            self._redis = None
            stopped.append("redis-server")
        if stopped:  # the last line: everything this command started has stopped
            self.say(f"stopped {', '.join(stopped)}; the data stays in {self.settings.var_dir}")

    def _wait_for_children(self) -> bool:
        """Until every child has exited, ``stop_grace_s`` has passed, or a signal arrives
        (Ctrl-C again): True for the last. A worker's warm shutdown waits for its running jobs,
        so after a second the wait says what it waits for."""
        seen = self.stopping.signals
        started = time.monotonic()
        told = False
        while pending := [c.name for c in self._children if c.alive]:
            waited = time.monotonic() - started
            if waited >= self.stop_grace_s:
                return False
            if waited >= 1.0 and not told:
                self.say(
                    f"waiting up to {self.stop_grace_s:.0f}s for {', '.join(pending)} "
                    "(a worker finishes its running jobs); Ctrl-C again stops now"
                )
                told = True
            if self.stopping.wait_beyond(seen, min(0.1, self.stop_grace_s - waited)):
                self.say("stopping now")
                return True
        return False


class StopFlag:
    """Set by a signal handler, waited on by the main thread; it takes no lock.

    A handler runs in the main thread between two bytecodes, possibly while that thread is
    inside ``threading.Event.wait`` holding the event's lock: ``Event.set`` there waits for the
    lock forever, and the process then ignores every further SIGINT and SIGTERM. So ``set``
    only stores a flag and writes a byte to a pipe, and ``wait`` waits on the pipe.
    """

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self.signals = 0  # how many times it was set

    def set(self) -> None:
        self.signals += 1
        with contextlib.suppress(BlockingIOError):  # the pipe is full: it already wakes us
            os.write(self._write, b"\0")

    def is_set(self) -> bool:
        return self.signals > 0

    def wait(self, timeout_s: float) -> bool:
        """True once set; else after ``timeout_s``, False. A signal during the wait wakes it."""
        return self.wait_beyond(0, timeout_s)

    def wait_beyond(self, seen: int, timeout_s: float) -> bool:
        """True once it was set more than ``seen`` times; else after ``timeout_s``, False."""
        deadline = time.monotonic() + timeout_s
        while self.signals <= seen:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if select.select([self._read], [], [], left)[0]:
                with contextlib.suppress(BlockingIOError):
                    os.read(self._read, 4096)  # the bytes of the signals counted already
        return self.signals > seen  # read last: a signal that came as time ran out counts

    def close(self) -> None:
        os.close(self._read)
        os.close(self._write)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[StopFlag]:
    """A ``StopFlag`` that SIGINT and SIGTERM set for the duration; the handlers restored after."""
    stop = StopFlag()

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        stop.close()


def _http_ok(url: str) -> bool:
    return httpx.get(url, timeout=2.0).status_code == 200


def _display_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def run_stack(settings: Settings, *, out: IO[str] | None = None) -> int:
    """``compaction up``."""
    return Launcher(settings=settings, out=out or sys.stdout).run()
