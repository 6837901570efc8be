"""The providers' own SDKs, for validating our wire formats: ``anthropic`` and ``openai`` in
one venv of their own.

Our Anthropic Messages and OpenAI Responses transcripts must be what those SDKs take. Neither
the product nor the tests import them: they live in ``bench/.sdk-venv`` (gitignored, made on
first use by ``bench/venvs.py``), and ``tests/support/sdk_side.py`` validates transcripts with
their typed request params (pydantic over the SDKs' TypedDicts) over a pipe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.venvs import BENCH_DIR, BenchEnvError, BenchVenv, SideProcess

ANTHROPIC_VERSION = "2.10.0"
OPENAI_VERSION = "3.51.0"
VENV_DIR = BENCH_DIR / ".sdk-venv"
SIDE_SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "support" / "sdk_side.py"


class SdkEnvError(BenchEnvError):
    """The SDK venv could not be made, or the validating side failed."""


def sdk_venv(venv: Path = VENV_DIR) -> BenchVenv:
    return BenchVenv(
        venv, "anthropic", ANTHROPIC_VERSION, None, SdkEnvError, (f"openai=={OPENAI_VERSION}",)
    )


class SdkValidator(SideProcess):
    """``sdk_side.py`` in the SDK venv: each transcript validated with the SDK's own types."""

    def __init__(self, venv: Path = VENV_DIR) -> None:
        env = sdk_venv(venv)
        env.ensure()
        super().__init__(env, SIDE_SCRIPT)

    def problems(self, fmt: str, messages: list[Any], system: Any = None) -> list[str]:
        """What the SDK's types refuse in the transcript (empty when it validates)."""
        answer = self._ask({"format": fmt, "messages": messages, "system": system})
        return list(answer["problems"])

    def versions(self) -> dict[str, str]:
        return dict(self._ask({"versions": True})["versions"])
