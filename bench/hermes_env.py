"""The separate bench environment for Hermes: made on first use, reused afterwards.

Hermes ships as the ``hermes-agent`` wheel with dependencies that overlap ours at other
versions (fastapi, pydantic, httpx...), so it lives in its own venv, ``bench/.hermes-venv``
(gitignored), pinned by ``bench/hermes-constraints.txt``. We talk to it only through
``hermes_side.py`` and JSON files.
"""

from __future__ import annotations

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


def run_hermes_side(job: dict[str, Any], *, venv: Path = VENV_DIR) -> dict[str, Any]:
    """Run ``hermes_side.py`` in the hermes venv on ``job``; return its parsed results."""
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        job_path, out_path, home = Path(tmp, "in.json"), Path(tmp, "out.json"), Path(tmp, "home")
        home.mkdir()
        job_path.write_text(json.dumps(job), encoding="utf-8")
        # HERMES_HOME: Hermes reads its config (timezone) from there; keep it off ~/.hermes.
        env = {**os.environ, "HERMES_HOME": str(home), "PYTHONHASHSEED": "0"}
        _run([str(venv_python(venv)), str(SIDE_SCRIPT), str(job_path), str(out_path)], env=env)
        result: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8"))
        return result


def _run(cmd: Sequence[str], *, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-4000:]
        raise HermesEnvError(f"{' '.join(cmd[:3])}... exited {proc.returncode}:\n{tail}")
