"""The conformance kit's bench environment: ``compaction-conformance-kit`` in its own venv.

The kit (PyPI ``compaction-conformance-kit``, MIT, no dependencies) is our outside yardstick
for what a compaction keeps. Neither the product nor our bench code imports it: it lives in
``bench/.kit-venv`` (gitignored, made on first use by ``bench/venvs.py``), and
``bench/kit_side.py`` serves its sessions, probes and budget benchmark over a pipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.venvs import BENCH_DIR, BenchEnvError, BenchVenv, SideProcess

KIT_VERSION = "0.8.0"
VENV_DIR = BENCH_DIR / ".kit-venv"
SIDE_SCRIPT = BENCH_DIR / "kit_side.py"

# compact(name, turns, round_num, budget_chars) -> the compacted text, for the kit's benchmark
Compact = Callable[[str, list[dict[str, Any]], int, int | None], str]


class KitEnvError(BenchEnvError):
    """The kit venv could not be made, or the kit side failed."""


def kit_venv(venv: Path = VENV_DIR) -> BenchVenv:
    return BenchVenv(venv, "compaction-conformance-kit", KIT_VERSION, None, KitEnvError)


def ensure_venv(venv: Path = VENV_DIR, *, log: Any = print) -> float:
    """Create and install the venv unless a finished one is there; return the seconds it took."""
    return kit_venv(venv).ensure(log=log)


class KitProcess(SideProcess):
    """``kit_side.py`` in the kit venv: the kit's sessions, its probes, its budget benchmark."""

    def __init__(self, venv: Path = VENV_DIR) -> None:
        super().__init__(kit_venv(venv), SIDE_SCRIPT)
        self.version = str(self._ask({})["kit_version"])

    def session(self, corpus: str, seed: int | None, *, strip_labels: bool) -> dict[str, Any]:
        """``{"key", "turns", "canaries"}`` of one of the kit's sessions."""
        return self._ask(
            {"op": "session", "corpus": corpus, "seed": seed, "strip_labels": strip_labels}
        )

    def score(self, key: str, texts: Sequence[str]) -> list[dict[str, dict[str, bool]]]:
        """Per text, ``{"survived": {id: bool}, "stale_present": {id: bool}}`` by the kit."""
        scores: list[dict[str, dict[str, bool]]] = self._ask(
            {"op": "score", "key": key, "texts": list(texts)}
        )["scores"]
        return scores

    def budget_benchmark(
        self,
        compactors: dict[str, bool],
        compact: Compact,
        *,
        budgets: Sequence[float],
        seeds: Sequence[int],
        rounds: int,
        strip_labels: bool,
    ) -> dict[str, Any]:
        """The kit's ``run_budget_benchmark``; ``compactors`` maps a name to whether it takes
        the budget, and every compaction the kit asks for is answered by ``compact``."""
        self._send(
            {
                "op": "budget",
                "compactors": compactors,
                "budgets": list(budgets),
                "seeds": list(seeds),
                "rounds": rounds,
                "strip_labels": strip_labels,
            }
        )
        while (msg := self._receive())["op"] == "compact":
            text = compact(msg["compactor"], msg["turns"], msg["round_num"], msg["budget_chars"])
            self._send({"text": text})
        return msg
