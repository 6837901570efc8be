"""The separate bench environment for Hermes: made on first use, reused afterwards.

Hermes ships as the ``hermes-agent`` wheel with dependencies that overlap ours at other
versions (fastapi, pydantic, httpx...), so it lives in its own venv, ``bench/.hermes-venv``
(gitignored), pinned by ``bench/hermes-constraints.txt``. We talk to it only through
``hermes_side.py``, in JSON lines over a pipe (``bench/venvs.py`` makes the venv and the pipe).
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

from bench.venvs import BENCH_DIR, BenchEnvError, BenchVenv, SideProcess

HERMES_VERSION = "0.19.0"
VENV_DIR = BENCH_DIR / ".hermes-venv"
CONSTRAINTS = BENCH_DIR / "hermes-constraints.txt"
SIDE_SCRIPT = BENCH_DIR / "hermes_side.py"


class HermesEnvError(BenchEnvError):
    """The hermes venv could not be made, or the Hermes side failed."""


def hermes_venv(venv: Path = VENV_DIR) -> BenchVenv:
    return BenchVenv(venv, "hermes-agent", HERMES_VERSION, CONSTRAINTS, HermesEnvError)


def venv_python(venv: Path = VENV_DIR) -> Path:
    return hermes_venv(venv).python


def ensure_venv(venv: Path = VENV_DIR, *, log: Any = print) -> float:
    """Create and install the venv unless a finished one is there; return the seconds it took."""
    return hermes_venv(venv).ensure(log=log)


class HermesProcess(SideProcess):
    """``hermes_side.py`` running in the hermes venv, answering one request at a time."""

    def __init__(self, *, model: str, summary_text: str, venv: Path = VENV_DIR) -> None:
        self._home = contextlib.ExitStack()
        home = self._home.enter_context(tempfile.TemporaryDirectory(prefix="hermes-bench-"))
        # HERMES_HOME: Hermes reads its config (timezone) from there; keep it off ~/.hermes.
        super().__init__(hermes_venv(venv), SIDE_SCRIPT, env={"HERMES_HOME": home})
        hello = self._ask({"model": model, "summary_text": summary_text})
        self.version = str(hello["hermes_version"])

    def load(self, *, name: str, context_length: int, messages: list[dict[str, Any]]) -> None:
        self._ask(
            {"op": "load", "name": name, "context_length": context_length, "messages": messages}
        )

    def run(self, name: str, *, keep: bool = False) -> dict[str, Any]:
        """One timed compress of a loaded case; with ``keep``, also its output and prompts."""
        return self._ask({"op": "run", "name": name, "keep": keep})

    def close(self) -> None:
        super().close()
        self._home.close()
