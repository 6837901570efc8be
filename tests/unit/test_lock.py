"""The lock holds: uv.lock agrees with pyproject.toml, and `make install` refuses a stale one.

All offline (uv's cache, filled by `make install`). The Dockerfile's installs get the same check
in tests/integration/test_deploy_image_install.py.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.deploy.files import ROOT
from tests.deploy.lockfile import (
    STALE_EDITS,
    UV,
    project_copy,
    refuses_as_stale,
    run_uv,
    uv_env,
)


def make_install_syncs(project: Path, venv: Path) -> list[list[str]]:
    """The `uv sync` commands `make install` would run in ``project`` (make -n), with our uv."""
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(project), "install",
         f"UV={UV}", f"VENV={venv}"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return [shlex.split(line) for line in done.stdout.splitlines() if " sync " in line]


def dry_run_make_install(project: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`make install`'s `uv sync`, as a dry run into a scratch virtualenv."""
    venv = tmp_path / "venv"
    (sync,) = make_install_syncs(project, venv)
    assert "--locked" in sync and "--frozen" not in sync, sync
    return subprocess.run(
        [*sync, "--dry-run"], cwd=project, capture_output=True, text=True, timeout=120,
        env=uv_env(UV_PROJECT_ENVIRONMENT=str(venv)),
    )  # fmt: skip


def test_uv_lock_is_up_to_date_with_pyproject() -> None:
    done = run_uv(["lock", "--check"], cwd=ROOT)
    assert done.returncode == 0, f"uv.lock is out of date: run `uv lock`\n{done.stderr}"


def test_make_install_accepts_the_current_lock(tmp_path: Path) -> None:
    project = project_copy(tmp_path / "project", extra=("Makefile",))
    done = dry_run_make_install(project, tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("edit", STALE_EDITS)
def test_make_install_refuses_a_lock_older_than_pyproject(tmp_path: Path, edit: str) -> None:
    project = project_copy(tmp_path / "project", edit=edit, extra=("Makefile",))
    done = dry_run_make_install(project, tmp_path)
    assert done.returncode != 0, f"make install would install a stale uv.lock:\n{done.stderr}"
    if edit == "bound changed":  # uv names the problem itself
        assert refuses_as_stale(done.stderr), done.stderr


def test_uv_lock_check_fails_on_a_lock_older_than_pyproject(tmp_path: Path) -> None:
    project = project_copy(tmp_path / "project", edit="bound changed")
    done = run_uv(["lock", "--check"], cwd=project)
    assert done.returncode != 0 and refuses_as_stale(done.stderr), done.stderr
