"""The separate bench environment for Hermes: made on first use, reused afterwards.

Hermes ships as the ``hermes-agent`` wheel with dependencies that overlap ours at other
versions (fastapi, pydantic, httpx...), so it lives in its own venv, ``bench/.hermes-venv``
(gitignored), pinned by ``bench/hermes-constraints.txt``. We talk to it only through
``hermes_side.py``, in JSON lines over a pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERMES_VERSION = "0.19.0"
BENCH_DIR = Path(__file__).resolve().parent
VENV_DIR = BENCH_DIR / ".hermes-venv"
CONSTRAINTS = BENCH_DIR / "hermes-constraints.txt"
SIDE_SCRIPT = BENCH_DIR / "hermes_side.py"
# Written last, so an interrupted install is redone rather than trusted.
_STAMP = VENV_DIR / ".installed"


class HermesEnvError(RuntimeError):
    """The hermes venv could not be made, or the Hermes side failed."""


def venv_python(venv: Path = VENV_DIR) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path = VENV_DIR, *, log: Any = print) -> float:
    """Create and install the venv unless a finished one is there; return the seconds it took."""
    stamp = venv / _STAMP.name
    if stamp.exists() and stamp.read_text().strip() == HERMES_VERSION:
        return 0.0
    log(f"setting up {venv} (hermes-agent=={HERMES_VERSION}); the first run only")
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", "--clear", str(venv)])
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, "-c", str(CONSTRAINTS), f"hermes-agent=={HERMES_VERSION}"])
    stamp.write_text(HERMES_VERSION + "\n")
    return time.monotonic() - started


class HermesProcess:
    """``hermes_side.py`` running in the hermes venv, answering one request at a time."""

    def __init__(self, *, model: str, summary_text: str, venv: Path = VENV_DIR) -> None:
        self._stack = contextlib.ExitStack()
        home = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="hermes-bench-"))
        # HERMES_HOME: Hermes reads its config (timezone) from there; keep it off ~/.hermes.
        env = {
            **os.environ,
            "HERMES_HOME": home,
            "PYTHONHASHSEED": "0",
            "PYTHONIOENCODING": "utf-8",
        }
        # Outlives this method; the ExitStack closes it in close().
        stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self._stderr = self._stack.enter_context(stderr)
        self._proc = subprocess.Popen(
            [str(venv_python(venv)), str(SIDE_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            env=env,
        )
        hello = self._ask({"model": model, "summary_text": summary_text})
        self.version = str(hello["hermes_version"])

    def load(self, *, name: str, context_length: int, messages: list[dict[str, Any]]) -> None:
        self._ask(
            {"op": "load", "name": name, "context_length": context_length, "messages": messages}
        )

    def run(self, name: str, *, keep: bool = False) -> dict[str, Any]:
        """One timed compress of a loaded case; with ``keep``, also its output and prompts."""
        return self._ask({"op": "run", "name": name, "keep": keep})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None  # both are pipes
        try:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise HermesEnvError(f"hermes side exited early:\n{self._stderr_tail()}") from None
        line = self._proc.stdout.readline()
        if not line:
            raise HermesEnvError(f"hermes side exited early:\n{self._stderr_tail()}")
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

    def __enter__(self) -> HermesProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _run(cmd: Sequence[str], *, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-4000:]
        raise HermesEnvError(f"{' '.join(cmd[:3])}... exited {proc.returncode}:\n{tail}")
