"""Bench environments for outside programs: a venv each, made on first use, reused afterwards.

An outside program we measure against (Hermes, the conformance kit) has dependencies of its own,
at versions that need not match ours, so it lives in its own gitignored venv under ``bench/``,
pinned to one version. We never import it: a script of ours runs in that venv and talks to the
bench in JSON lines over a pipe (``SideProcess``), one request line and one answer line at a
time. This module is the one place that makes such venvs and starts such processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

BENCH_DIR = Path(__file__).resolve().parent
# Written last, so an interrupted install is redone rather than trusted.
STAMP_NAME = ".installed"


class BenchEnvError(RuntimeError):
    """A bench venv could not be made, or the program's side of the pipe failed."""


@dataclass(frozen=True, slots=True)
class BenchVenv:
    path: Path
    package: str  # the PyPI name, pinned to ``version``
    version: str
    constraints: Path | None = None  # pip constraints for what the package pulls in
    error: type[BenchEnvError] = BenchEnvError  # raised when making or talking to it fails
    also: tuple[str, ...] = ()  # further pinned requirements installed beside it ("x==1.0")

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def requirements(self) -> tuple[str, ...]:
        return (self.requirement, *self.also)

    @property
    def stamp(self) -> str:
        """What the finished venv's stamp says: its version (and what else it holds)."""
        return " ".join((self.version, *self.also))

    def ensure(self, *, log: Any = print) -> float:
        """Create and install the venv unless a finished one is there; return the seconds taken."""
        stamp = self.path / STAMP_NAME
        if stamp.exists() and stamp.read_text().strip() == self.stamp:
            return 0.0
        log(f"setting up {self.path} ({' '.join(self.requirements)}); the first run only")
        started = time.monotonic()
        self._run([sys.executable, "-m", "venv", "--clear", str(self.path)])
        pip = [str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        pins = ["-c", str(self.constraints)] if self.constraints is not None else []
        self._run([*pip, *pins, *self.requirements])
        stamp.write_text(self.stamp + "\n")
        return time.monotonic() - started

    def _run(self, cmd: Sequence[str]) -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout)[-4000:]
            raise self.error(f"{' '.join(cmd[:3])}... exited {proc.returncode}:\n{tail}")


class SideProcess:
    """A script of ours running in a bench venv, reading request lines on stdin and writing
    answer lines on stdout; its stderr is kept in a temporary file for error messages."""

    def __init__(
        self, venv: BenchVenv, script: Path, *, env: Mapping[str, str] | None = None
    ) -> None:
        self._error = venv.error
        self._script_name = script.name
        self._stack = contextlib.ExitStack()
        # Outlives this method; the ExitStack closes it in close().
        stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self._stderr = self._stack.enter_context(stderr)
        self._proc = subprocess.Popen(
            [str(venv.python), str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8", **(env or {})},
        )

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self._send(request)
        return self._receive()

    def _send(self, doc: dict[str, Any]) -> None:
        assert self._proc.stdin is not None  # a pipe
        try:
            self._proc.stdin.write(json.dumps(doc, ensure_ascii=False) + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise self._error(f"{self._script_name} exited early:\n{self._stderr_tail()}") from None

    def _receive(self) -> dict[str, Any]:
        assert self._proc.stdout is not None  # a pipe
        line = self._proc.stdout.readline()
        if not line:
            raise self._error(f"{self._script_name} exited early:\n{self._stderr_tail()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _stderr_tail(self) -> str:
        self._proc.wait(timeout=30)
        self._stderr.seek(0)
        return self._stderr.read()[-4000:]

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
