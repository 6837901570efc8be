"""The real-model tier: a llama.cpp server (llama-cpp-python) serving SmolLM2-135M-Instruct.

These tests run only when selected with ``-m llm`` (``make test-llm`` does that after
``python -m tests.llm.setup_llama``); a plain ``pytest`` skips them, so ``make test`` never needs
a model. ``COMPACTION_TEST_LLM_BASE_URL`` points them at a server that is already running.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.llm import setup_llama
from worker.redis_server import free_port

MODEL_ALIAS = "smollm2"
N_CTX = 2048  # small on purpose: the over-long prompt test needs a window it can exceed
STARTUP_TIMEOUT_S = 180.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "llm" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="real-model tier: run `make test-llm` (pytest -m llm tests/llm)")
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def llama_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (…/v1) of a running llama.cpp server."""
    external = os.environ.get("COMPACTION_TEST_LLM_BASE_URL", "").strip()
    if external:
        yield external
        return
    model = setup_llama.model_path()
    if model is None or not setup_llama.is_ready():
        pytest.skip(
            "no llama.cpp server set up: run `make test-llm` (python -m tests.llm.setup_llama)"
        )
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        str(setup_llama.venv_python()), "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(N_CTX), "--n_threads", str(os.cpu_count() or 2),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        _wait_ready(base_url, process, log_path)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _wait_ready(base_url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama.cpp server exited with {process.returncode}:\n{tail}")
            try:
                if client.get(f"{base_url}/models").status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.5)
    raise RuntimeError(f"llama.cpp server not ready after {STARTUP_TIMEOUT_S:.0f} s")
