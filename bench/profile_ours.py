"""Where our compress spends its time on one bench case (cProfile; Hermes is not involved).

    .venv/bin/python -m bench.profile_ours --size 10000 [--cold] [--top 30]
    .venv/bin/python -m bench.profile_ours --long [--cold]

The settings are the bench's, with Hermes' derived trigger computed by its rule for the window,
so no hermes venv is needed.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from collections.abc import Sequence

from bench import cases as bench_cases
from bench.compress_vs_hermes import DEFAULT_MODEL, SUMMARY_TEXT, our_config
from bench.ours import run_once
from tests.data import real_transcripts
from worker.encodings import counter_for_model

_HERMES_SMALL_WINDOW = 512_000
_HERMES_MIN_THRESHOLD = 64_000


def hermes_like_settings(context_length: int) -> dict[str, float | int]:
    """Hermes 0.19.0's derived trigger for a window, by its rule, without running Hermes."""
    percent = 0.75 if context_length < _HERMES_SMALL_WINDOW else 0.50
    threshold = max(int(context_length * percent), _HERMES_MIN_THRESHOLD)
    if threshold >= context_length:
        # A window at or under the floor: Hermes triggers at 85% of it instead.
        threshold = max(1, min(int(context_length * 0.85), context_length - 1))
    return {"threshold_tokens": threshold, "summary_target_ratio": 0.20, "protect_first_n": 3}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10_000, help="generated transcript, in messages")
    p.add_argument("--long", action="store_true", help="the concatenated real session instead")
    p.add_argument("--cold", action="store_true", help="no token_counts (a fresh counter only)")
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args(argv)
    counter = counter_for_model(DEFAULT_MODEL)
    if args.long:
        wire = bench_cases.concatenated_session([m for _, m in real_transcripts()])
        name = "real-concatenated"
    else:
        wire, name = bench_cases.generated_wire(args.size), f"generated-{args.size}"
    case = bench_cases.make_case(name, "profile", wire, counter=counter, context_length=None)
    config = our_config(case, hermes_like_settings(case.context_length))
    profiler = cProfile.Profile()
    profiler.enable()
    run = run_once(
        case.wire,
        config=config,
        encoding=counter.encoding,
        summary_text=SUMMARY_TEXT,
        token_counts=None if args.cold else case.token_counts,
    )
    profiler.disable()
    print(f"{name} ({'cold' if args.cold else 'cached'}): {run.seconds * 1000:.1f} ms")
    stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
