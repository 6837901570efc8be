"""The compressor core compiled to C with mypyc, used in place of its Python only while fresh.

Compiled, the core takes 25-30% less time (docs/benchmarks.md); its Python is the same code
and stays the reference. The compiled modules live apart from the sources, in
``worker/_compiled/<interpreter>/``, beside a stamp: the hash of the sources they were built
from. Importing ``worker`` puts a finder ahead of the usual ones that loads a compiled module
only when that stamp matches the sources as they are now, so an edited source, a missing or
partial build, another interpreter, or ``COMPACTION_COMPILED=0`` all mean the Python runs, never
a stale build.

    compaction compile            build when stale (``make install`` runs it)
    compaction compile --force    build again
    compaction compile --status   say which one runs, and why

A build needs mypy (a dev dependency: mypyc comes with it), a C compiler and Python's headers;
without them it says what is missing and the Python runs.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

PACKAGE = "worker.compressor"
WORKER_DIR = Path(__file__).resolve().parent
SOURCE_DIR = WORKER_DIR / "compressor"
BUILD_ROOT = WORKER_DIR / "_compiled"
# Read here, not in settings: the finder is in place before any module of the core is imported.
SWITCH = "COMPACTION_COMPILED"  # "0" (or "false", "no", "off"): always the Python
# Left in Python: exceptions and the classes other code subclasses or extends (mypyc turns a
# class attribute into a slot and refuses interpreted subclasses). The rest of the core is
# compiled.
INTERPRETED = frozenset({"__init__", "errors", "config", "report", "summarizer", "tokens"})
_STAMP = "stamp.json"
_OFF = frozenset({"0", "false", "no", "off"})
_GROUP = "compaction_compressor"  # mypycify names its shared library module after it
_LIBRARY = f"{_GROUP}__mypyc"
_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def compiled_modules(source_dir: Path = SOURCE_DIR) -> list[str]:
    """The core's modules that are compiled, by name, sorted."""
    return sorted(p.stem for p in source_dir.glob("*.py") if p.stem not in INTERPRETED)


def source_hash(source_dir: Path = SOURCE_DIR, names: Sequence[str] | None = None) -> str:
    """What a build is built from: the compiled modules' sources, and the interpreter."""
    digest = hashlib.sha256(sys.implementation.cache_tag.encode())
    for name in names if names is not None else compiled_modules(source_dir):
        digest.update(f"\0{name}\0".encode())
        digest.update((source_dir / f"{name}.py").read_bytes())
    return digest.hexdigest()


def build_dir(root: Path = BUILD_ROOT) -> Path:
    return root / sys.implementation.cache_tag


@dataclass(frozen=True, slots=True)
class State:
    compiled: bool
    why: str  # one line: what runs and why

    def __str__(self) -> str:
        return f"compressor {'compiled (mypyc)' if self.compiled else 'interpreted'}: {self.why}"


def check(directory: Path, source_dir: Path = SOURCE_DIR) -> tuple[State, dict[str, Path]]:
    """Whether the build in ``directory`` matches the sources, and its files by module name."""
    try:
        stamp = json.loads((directory / _STAMP).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return State(False, f"no build in {directory} (compaction compile)"), {}
    except (OSError, ValueError) as exc:
        return State(False, f"unreadable stamp in {directory}: {exc}"), {}
    if not isinstance(stamp, dict):
        return State(False, f"unreadable stamp in {directory}: not a build's stamp"), {}
    names = compiled_modules(source_dir)
    if stamp.get("sources") != source_hash(source_dir, names) or stamp.get("modules") != names:
        return State(False, "the sources changed since the build (compaction compile)"), {}
    files = {f"{PACKAGE}.{n}": directory / f"{n}{_SUFFIX}" for n in names}
    files[_LIBRARY] = directory / f"{_LIBRARY}{_SUFFIX}"
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        return State(False, f"the build is incomplete ({missing[0]} is missing)"), {}
    return State(True, f"built {stamp.get('built_at', '?')} from the current sources"), files


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules of a fresh build, and nothing else."""

    def __init__(self, files: dict[str, Path]) -> None:
        self._files = files

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        file = self._files.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file)


state = State(False, "not activated")


def activate() -> State:
    """Put the finder in place when the build is fresh; what runs, and why, either way."""
    global state
    if os.environ.get(SWITCH, "").strip().lower() in _OFF:
        state = State(False, f"{SWITCH}={os.environ[SWITCH]}")
        return state
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return state
    loaded = [n for n in sys.modules if n.startswith(PACKAGE + ".")]
    if loaded:  # a module already imported as Python stays so: never two copies of a module
        state = State(False, f"{loaded[0]} was imported before the finder was in place")
        return state
    try:
        found, files = check(build_dir())
    except OSError as exc:  # a source unreadable: importing ``worker`` must not fail on it
        found, files = State(False, f"cannot check the build: {exc}"), {}
    if found.compiled:
        sys.meta_path.insert(0, _Finder(files))
    state = found
    return state


# ---------------------------------------------------------------------------------------------
# Building


class BuildError(Exception):
    """The build could not run or failed; the Python runs meanwhile."""


def missing_toolchain() -> str | None:
    """What a build needs and this machine lacks, or None."""
    try:
        import mypyc  # noqa: F401  (only to see it is there)
    except ImportError:
        return "mypy is not installed (it is a dev dependency: make install)"
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler!r} is not on PATH)"
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.is_file():
        return f"no Python headers ({headers} is missing; Debian: python3-dev)"
    return None


def build(*, force: bool = False) -> State:
    """Compile the core when its build is stale (or ``force``)."""
    target = build_dir()
    current, _ = check(target)
    if current.compiled and not force:
        return current
    lacking = missing_toolchain()
    if lacking is not None:
        raise BuildError(f"cannot compile the compressor: {lacking}")
    names = compiled_modules()
    sources = source_hash(names=names)
    started = time.monotonic()
    print(f"compiling the compressor with mypyc ({len(names)} modules, a minute or two)...")
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="compaction-mypyc-") as tmp:
        _compile(Path(tmp), names)
        fresh = Path(tempfile.mkdtemp(prefix=".building-", dir=BUILD_ROOT))
        for name in names:
            shutil.copy2(Path(tmp) / "worker" / "compressor" / f"{name}{_SUFFIX}", fresh)
        shutil.copy2(Path(tmp) / f"{_LIBRARY}{_SUFFIX}", fresh)
    stamp = {
        "sources": sources,
        "modules": names,
        "built_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    (fresh / _STAMP).write_text(json.dumps(stamp, indent=1), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    try:
        fresh.rename(target)  # whole or not at all: a reader never sees a build half copied
    except OSError:  # another build finished first: keep it if it is of these sources
        shutil.rmtree(fresh, ignore_errors=True)
        if not check(target)[0].compiled:
            raise
    print(f"compiled in {time.monotonic() - started:.0f} s: {target}")
    return check(target)[0]


_SETUP = f"""
import sys
from mypyc.build import mypycify
from setuptools import setup
setup(
    name="compaction-compressor-compiled",
    ext_modules=mypycify(sys.argv[1:], group_name="{_GROUP}"),
    script_args=["build_ext", "--inplace"],
)
"""


def _compile(tmp: Path, names: Sequence[str]) -> None:
    """Compile a copy of the sources in ``tmp``, in place."""
    shutil.copytree(
        WORKER_DIR,
        tmp / "worker",
        ignore=shutil.ignore_patterns("_compiled", "__pycache__", "*.so", "*.pyc"),
    )
    # The project's strict settings are for checking; compiling needs only the types.
    (tmp / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n", encoding="utf-8")
    paths = [f"worker/compressor/{name}.py" for name in names]
    done = subprocess.run(
        [sys.executable, "-c", _SETUP, "--config-file", "mypy.ini", *paths],
        cwd=tmp,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise BuildError(f"mypyc failed (exit {done.returncode}):\n{tail}")
