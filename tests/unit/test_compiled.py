"""The compressor core compiled with mypyc: used only while it matches the sources, and the same
results as the Python it is compiled from (worker/compiled.py)."""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import worker.compressor.prose
import worker.compressor.tokens
from tests.support import core_digest
from worker import compiled

REPO = Path(__file__).resolve().parents[2]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def require_compiled() -> None:
    """Where the machine can compile, make install compiled the core (CI's can: it must have)."""
    if compiled.state.compiled:
        return
    lacking = compiled.missing_toolchain()
    if lacking is None and os.environ.get("CI") == "true":
        pytest.fail(f"make install did not compile the core: {compiled.state}", pytrace=False)
    pytest.skip(f"no compiled core here: {lacking or compiled.state}")


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_after_make_install_the_core_runs_compiled_but_for_its_python_only_modules() -> None:
    require_compiled()
    assert not worker.compressor.prose.__file__.endswith(".py")
    assert worker.compressor.tokens.__file__.endswith(".py")  # in compiled.INTERPRETED


def test_compiled_and_interpreted_cores_give_identical_results_on_every_corpus() -> None:
    require_compiled()
    here = core_digest.digest()  # this process runs the compiled core
    done = run("-m", "tests.support.core_digest", COMPACTION_COMPILED="0")
    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout)
    assert there == {"digest": here, "compiled": False}


def test_the_switch_turns_the_compiled_core_off_and_status_says_so() -> None:
    done = run("-m", "api.cli", "compile", "--status", COMPACTION_COMPILED="0")
    assert (done.returncode, done.stdout) == (1, "compressor interpreted: COMPACTION_COMPILED=0\n")


def test_without_a_c_compiler_compile_says_so_and_changes_nothing() -> None:
    before = sorted(compiled.BUILD_ROOT.rglob("*")) if compiled.BUILD_ROOT.exists() else []
    done = run("-m", "api.cli", "compile", "--force", CC="no-such-cc")
    assert done.returncode == 0  # make install goes on: the Python runs
    assert "no C compiler ('no-such-cc' is not on PATH)" in done.stderr
    assert "runs interpreted" in done.stderr
    after = sorted(compiled.BUILD_ROOT.rglob("*")) if compiled.BUILD_ROOT.exists() else []
    assert after == before


# --- Freshness, on a build and sources of our own making ----------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """Two modules' sources and a build of them (its files stand in for compiled ones)."""
    sources, build = tmp_path / "src", tmp_path / "build"
    sources.mkdir()
    build.mkdir()
    for name in ("alpha", "beta", "errors"):  # errors stays Python: not in the build
        (sources / f"{name}.py").write_text(f"NAME = {name!r}\n")
    stamp = {
        "sources": compiled.source_hash(sources),
        "modules": ["alpha", "beta"],
        "built_at": "2026-12-02 00:00:00 UTC",
    }
    (build / "stamp.json").write_text(json.dumps(stamp))
    for name in ("alpha", "beta", "compaction_compressor__mypyc"):
        (build / f"{name}{SUFFIX}").write_bytes(b"")
    return sources, build


def test_a_build_of_the_current_sources_is_used_module_by_module(tree: tuple[Path, Path]) -> None:
    sources, build = tree
    state, files = compiled.check(build, sources)
    assert state.compiled, state
    assert files == {
        "worker.compressor.alpha": build / f"alpha{SUFFIX}",
        "worker.compressor.beta": build / f"beta{SUFFIX}",
        "compaction_compressor__mypyc": build / f"compaction_compressor__mypyc{SUFFIX}",
    }


def test_an_edited_source_makes_the_whole_build_stale(tree: tuple[Path, Path]) -> None:
    sources, build = tree
    (sources / "beta.py").write_text("NAME = 'beta, edited'\n")
    state, files = compiled.check(build, sources)
    assert (state.compiled, files) == (False, {})
    assert "the sources changed since the build" in state.why


def test_a_new_module_makes_the_build_stale(tree: tuple[Path, Path]) -> None:
    sources, build = tree
    (sources / "gamma.py").write_text("NAME = 'gamma'\n")
    assert not compiled.check(build, sources)[0].compiled


def test_a_missing_file_or_stamp_means_the_python_runs(tree: tuple[Path, Path]) -> None:
    sources, build = tree
    (build / f"beta{SUFFIX}").unlink()
    state, _ = compiled.check(build, sources)
    assert not state.compiled and "the build is incomplete" in state.why
    (build / "stamp.json").write_text("{not json")
    assert "unreadable stamp" in compiled.check(build, sources)[0].why
    (build / "stamp.json").write_text('["a list"]')
    assert "not a build's stamp" in compiled.check(build, sources)[0].why
    (build / "stamp.json").unlink()
    assert "no build in" in compiled.check(build, sources)[0].why
