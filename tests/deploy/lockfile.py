"""Copies of the project whose uv.lock is out of date with pyproject.toml, and uv run offline.

A lock goes stale when someone edits pyproject.toml and forgets `uv lock`. Offline, uv cannot
resolve the new requirements, so it says either "needs to be updated" or that a package is not
in its cache; what matters is that it refuses instead of installing the old lock.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

from tests.deploy.files import ROOT

UV = Path(sys.executable).parent / "uv"
NEEDS_UPDATE = "needs to be updated"
# Offline, uv can tell a lock is stale only from what its cache holds: with the index pages of
# an earlier `uv lock` it says the lock needs updating; with a cache filled by `uv sync` alone
# (a fresh machine) it cannot resolve the new pin and says so.
CANNOT_RESOLVE = "No solution found"


def refuses_as_stale(stderr: str) -> bool:
    """uv's answer names a stale lock (or a pin it cannot resolve offline)."""
    return NEEDS_UPDATE in stderr or CANNOT_RESOLVE in stderr


def _add_dependency(text: str) -> str:
    return text.replace("dependencies = [\n", 'dependencies = [\n    "tomli-w>=1.0",\n', 1)


def _pin_first_dependency(text: str) -> str:
    """The first dependency pinned to the version the lock has: still satisfied by the lock, so
    uv can tell, offline, that only the lock's record of pyproject is out of date."""
    first = tomllib.loads(text)["project"]["dependencies"][0]
    name = re.match(r"[A-Za-z0-9._-]+(\[[^\]]*\])?", first)
    assert name is not None, first
    bare = re.sub(r"[._-]+", "-", name[0].split("[")[0]).lower()
    locked = tomllib.loads((ROOT / "uv.lock").read_text())["package"]
    (version,) = [p["version"] for p in locked if p["name"] == bare]
    pinned = f"{name[0]}=={version}"
    assert pinned != first, first
    return text.replace(f'"{first}"', f'"{pinned}"', 1)


# What an edit of pyproject.toml without `uv lock` looks like.
STALE_EDITS: dict[str, Callable[[str], str]] = {
    "dependency added": _add_dependency,
    "bound changed": _pin_first_dependency,
}


def project_copy(dest: Path, *, edit: str | None = None, extra: tuple[str, ...] = ()) -> Path:
    """``dest`` with pyproject.toml (after ``edit``, one of STALE_EDITS), uv.lock and ``extra``
    files of the repository."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("uv.lock", *extra):
        shutil.copy2(ROOT / name, dest / name)
    pyproject = (ROOT / "pyproject.toml").read_text()
    edited = pyproject if edit is None else STALE_EDITS[edit](pyproject)
    assert edit is None or edited != pyproject, f"the {edit!r} edit changed nothing"
    (dest / "pyproject.toml").write_text(edited)
    return dest


def uv_env(**extra: str) -> dict[str, str]:
    """No UV_* setting from the caller's shell (UV_FROZEN would hide a stale lock); offline, on
    this interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    return env | {"UV_OFFLINE": "1", "UV_PYTHON": sys.executable, **extra}


def run_uv(args: list[str], *, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(UV), *args], cwd=cwd, env=uv_env(**env), capture_output=True, text=True, timeout=120
    )
