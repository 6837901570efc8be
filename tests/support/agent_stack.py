"""What the tests of our agent integrations share (Hermes' engine, the LangChain middleware):
this tree's wheel installed into the agent's own venv without dependencies (which also shows
the integration needs only httpx), and a real API and worker whose summarizer is a fake
OpenAI-compatible server that answers slowly, so that turns made while a job runs show that
the agent never waits for it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.support.fake_openai import FakeOpenAI
from tests.support.stack import REPO, stack_env, start_stack
from worker.redis_server import RedisServer, free_port


def install_wheel(python: Path, wheels: Path, target: Path) -> Path:
    """This tree's wheel, built into ``wheels`` and installed into ``target`` with the pip of
    ``python``, without dependencies; ``target``."""
    uv = Path(sys.executable).parent / "uv"
    run([str(uv), "build", "--wheel", "--out-dir", str(wheels), str(REPO)])
    (wheel,) = wheels.glob("compaction_queue-*.whl")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, "--no-deps", "--no-index", "--target", str(target), str(wheel)])
    return target


def run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(cmd[:4])}... exited {done.returncode}:\n{done.stderr}"


def stack_with_summarizer(
    redis: RedisServer, database_url: str, llm: FakeOpenAI, tmp_path: Path, summary_model: str
) -> Iterator[str]:
    """``compaction api`` and ``compaction worker`` whose summarizer is ``llm``'s
    ``summary_model``; yields the API's URL, stops both after."""
    port = free_port()
    env = stack_env(
        redis_url=redis.url, database_url=database_url, var_dir=tmp_path / "var",
        llm_base_url=llm.base_url, summary_model=summary_model, llm_stream="false",
        hygiene_threshold=0.85,
    )  # fmt: skip
    procs = start_stack(env, tmp_path, api_port=port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        for proc in procs:
            proc.stop()
