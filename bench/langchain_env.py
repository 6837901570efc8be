"""LangChain's environment: ``langchain``, ``langgraph``, ``deepagents`` and ``langchain-openai``
in a venv of their own, for driving our middleware (``api/langchain/``) from their agent loops.

The product never depends on LangChain: the middleware imports it only when it is used, in an
application's environment that has it. Our tests bring that environment here, in
``bench/.langchain-venv`` (gitignored, made on first use by ``bench/venvs.py``), pinned to one
version of each; ``tests/support/langchain_driver.py`` runs there and answers over a pipe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.venvs import BENCH_DIR, BenchEnvError, BenchVenv

DEEPAGENTS_VERSION = "0.7.32"
LANGCHAIN_VERSION = "1.5.0"
LANGCHAIN_CORE_VERSION = "1.8.1"
LANGGRAPH_VERSION = "1.2.22"
# The OpenAI-compatible chat model: the tests point it at a local fake server.
LANGCHAIN_OPENAI_VERSION = "1.7.4"
VENV_DIR = BENCH_DIR / ".langchain-venv"


class LangchainEnvError(BenchEnvError):
    """The LangChain venv could not be made."""


def langchain_venv(venv: Path = VENV_DIR) -> BenchVenv:
    also = (
        f"langchain=={LANGCHAIN_VERSION}",
        f"langchain-core=={LANGCHAIN_CORE_VERSION}",
        f"langgraph=={LANGGRAPH_VERSION}",
        f"langchain-openai=={LANGCHAIN_OPENAI_VERSION}",
    )
    return BenchVenv(venv, "deepagents", DEEPAGENTS_VERSION, None, LangchainEnvError, also)


def venv_python(venv: Path = VENV_DIR) -> Path:
    return langchain_venv(venv).python


def ensure_venv(venv: Path = VENV_DIR, *, log: Any = print) -> float:
    """Create and install the venv unless a finished one is there; return the seconds it took."""
    return langchain_venv(venv).ensure(log=log)
