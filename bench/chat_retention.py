"""Chat retention against an outside yardstick: the conformance kit's canaries in long chats.

    python -m bench.chat_retention [--seeds 1-8] [--rounds 5] [--update-docs] [--json FILE]
                                   [--no-hermes] [--quick]

The kit (``compaction-conformance-kit``, in its own venv: ``bench/kit_env.py``) plants typed
canaries (safety rules, hard constraints, facts, goal state, user preferences) in sessions of
its own. We take its seeded session and its randomized and generated corpora over ``--seeds``,
each at the kit's size and lengthened into a long chat with our chatter (``bench/chatter.py``)
between the kit's turns, and with the canaries' type labels kept and stripped. Each chat is
compacted at the hygiene point by extractive, poor-llm (ours) and hermes-fallback; rounds 2..R
append fresh chatter to the last output until it is back at 85% of the window and compact
again. The kit's own probes score every output. Then the kit's own fixed-budget benchmark runs
with our paths as its compactors (``bench/kit_compact.py``: ``BudgetAdapter``). The method is
in docs/benchmarks.md ("Chat retention").
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import chat_tables, hermes_env, invariants, kit_env
from bench.chatter import Exchange, chatter
from bench.docs_block import replace_block
from bench.kit_compact import (
    BudgetAdapter,
    Carry,
    PathCompact,
    Wire,
    count,
    hermes,
    hygiene_window,
    kit_text,
    lengthen,
    ours,
    stale_as_current,
    top_up,
    turns_to_messages,
)
from bench.kit_env import KitProcess
from bench.retention.run import (
    MODEL,
    POOR_SUMMARY,
    FailingSummaryHermes,
    PoorSummarizer,
    core_label,
)
from worker.compressor.config import CompressConfig
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.tokens import TokenCounter
from worker.encodings import counter_for_model

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
MARKERS = ("<!-- chat-retention:results:begin -->", "<!-- chat-retention:results:end -->")
PATHS = ("extractive", "poor-llm", "hermes-fallback")
OUR_PATHS = PATHS[:2]
CORPORA = ("seeded", "random", "generated")
SIZES = ("kit", "long")
LABELS = ("kept", "stripped")
LONG_MESSAGES = 3_000  # a lengthened chat, all told
BUDGETS = (0.10, 0.20, 0.30)
DEFAULT_SEEDS = range(1, 9)
KIT_BUDGET_SEEDS = range(1, 5)  # run_budget_benchmark's own default


@dataclass
class RoundResult:
    survived: dict[str, bool]  # canary id -> the kit's probe
    stale_present: dict[str, bool]  # canaries with superseded values: the kit's measure
    stale_current: dict[str, bool]  # the same: on a line that does not say "superseded"
    messages_before: int
    messages_after: int
    window_share: float  # output tokens / window
    violations: list[str]
    notes: list[str]


@dataclass
class SessionResult:
    corpus: str
    seed: int | None
    size: str
    labels: str
    messages: int
    tokens: int
    window: int
    canaries: list[dict[str, Any]]  # id, type, superseded_tokens
    rounds: dict[str, list[RoundResult]] = field(default_factory=dict)  # path -> per round


@dataclass(frozen=True, slots=True)
class Run:
    """What one bench run holds: the kit, our counter, the paths and the settings."""

    kit: KitProcess
    counter: TokenCounter
    paths: dict[str, PathCompact]
    rounds: int


@dataclass(frozen=True, slots=True)
class Pass:
    """One compaction of a chat by one path."""

    before: list[Wire]
    after: list[Wire] | None  # None: the path raised
    notes: list[str]


def run_rounds(
    run: Run, wire: list[Wire], window: int, compact: PathCompact, exchanges: Iterator[Exchange]
) -> list[Pass]:
    """Round 1 compacts the chat; each later round tops the last output up with fresh chatter
    to the hygiene trigger and compacts again (a path that raises stops there)."""
    config = CompressConfig(context_length=window)
    passes: list[Pass] = []
    carry = Carry()
    current = wire
    for k in range(1, run.rounds + 1):
        if k > 1:
            current = top_up(passes[-1].after or [], window, exchanges, run.counter)
        try:
            done = compact(current, config, carry)
        except (hermes_env.HermesEnvError, kit_env.KitEnvError):
            raise
        except Exception as exc:  # one path failing must not hide the others
            passes.append(Pass(current, None, [f"failed: {type(exc).__name__}: {exc}"]))
            break
        passes.append(Pass(current, done.messages, list(done.notes)))
        carry = done.carry
    return passes


def score_rounds(
    run: Run, key: str, window: int, canaries: Sequence[dict[str, Any]], passes: list[Pass]
) -> list[RoundResult]:
    """Every pass scored by the kit's probes and our stale check; a path that failed at round
    k keeps nothing at k..R (every canary stays in the count)."""
    texts = [kit_text(p.after or []) for p in passes]
    scores = run.kit.score(key, texts)
    superseded = {c["id"]: c["superseded_tokens"] for c in canaries if c["superseded_tokens"]}
    nothing = {c["id"]: False for c in canaries}
    results = []
    for done, text, kit_score in zip(passes, texts, scores, strict=True):
        if done.after is None:
            results.append(RoundResult(nothing, {}, {}, len(done.before), 0, 0.0, [], done.notes))
            continue
        results.append(
            RoundResult(
                survived=kit_score["survived"],
                stale_present=kit_score["stale_present"],
                stale_current={cid: stale_as_current(text, t) for cid, t in superseded.items()},
                messages_before=len(done.before),
                messages_after=len(done.after),
                window_share=count(run.counter, done.after) / window,
                violations=[str(v) for v in invariants.check_transcript(done.before, done.after)],
                notes=done.notes,
            )
        )
    while len(results) < run.rounds:
        results.append(RoundResult(nothing, {}, {}, 0, 0, 0.0, [], ["failed earlier"]))
    return results


def forbidden_values(canaries: Sequence[dict[str, Any]]) -> set[str]:
    """Every token a probe or the stale checks look for: chatter must hold none of them."""
    lists = (
        "required_tokens",
        "superseded_tokens",
        "behavior_required_tokens",
        "exact_use_required_tokens",
    )
    return {t.lower() for c in canaries for name in lists for t in c[name]}


def run_session(run: Run, corpus: str, seed: int | None, labels: str) -> list[SessionResult]:
    doc = run.kit.session(corpus, seed, strip_labels=labels == "stripped")
    key, canaries = doc["key"], doc["canaries"]
    forbidden = forbidden_values(canaries)
    short = turns_to_messages(doc["turns"])
    # The same chatter for kept and stripped labels: the seed names the kit's session only.
    base = f"{corpus}-{seed}"
    results = []
    for size in SIZES:
        wire = (
            short
            if size == "kit"
            else lengthen(short, chatter(f"{base}:long", forbidden=forbidden), LONG_MESSAGES)
        )
        tokens = count(run.counter, wire)
        window = hygiene_window(tokens)
        result = SessionResult(
            corpus,
            seed,
            size,
            labels,
            len(wire),
            tokens,
            window,
            [
                {"id": c["id"], "type": c["type"], "superseded_tokens": c["superseded_tokens"]}
                for c in canaries
            ],
        )
        for name, compact in run.paths.items():
            # Every path is topped up from the same stream, a different one from the chat's.
            fresh = chatter(f"{base}:{size}:rounds", forbidden=forbidden)
            passes = run_rounds(run, wire, window, compact, fresh)
            result.rounds[name] = score_rounds(run, key, window, canaries, passes)
        results.append(result)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = _progress
    started = time.monotonic()
    setup = kit_env.ensure_venv(log=log)
    if not args.no_hermes:
        setup += hermes_env.ensure_venv(log=log)
    if setup:
        log(f"bench venvs ready in {setup:.0f} s")
    counter = counter_for_model(MODEL)
    hermes_proc = (
        None if args.no_hermes else FailingSummaryHermes(model=MODEL, summary_text=POOR_SUMMARY)
    )
    paths: dict[str, PathCompact] = {
        "extractive": ours(ExtractiveSummarizer, counter),
        "poor-llm": ours(PoorSummarizer, counter),
    }
    if hermes_proc is not None:
        paths["hermes-fallback"] = hermes(hermes_proc)
    try:
        with KitProcess() as kit:
            run = Run(kit, counter, paths, args.rounds)
            sessions = _run_sessions(run, args.seeds, log)
            budget = _run_budget(run, args.budget_seeds, log)
            kit_version = kit.version
    finally:
        if hermes_proc is not None:
            hermes_proc.close()
    elapsed = time.monotonic() - started
    header = chat_tables.header(
        sessions,
        seeds=args.seeds,
        budget_seeds=args.budget_seeds,
        rounds=args.rounds,
        core=args.label or core_label(),
        kit_version=kit_version,
        hermes_version=hermes_proc.version if hermes_proc is not None else "not run",
        python=platform.python_version(),
        seconds=elapsed,
    )
    fragment = chat_tables.render(sessions, budget, list(paths), rounds=args.rounds, header=header)
    print(fragment)
    log(f"\nrun time: {elapsed:.1f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {"sessions": [asdict(s) for s in sessions], "budget": budget}
        args.json.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.update_docs:
        replace_block(DOCS, *MARKERS, fragment)
    return 0


def _progress(message: str) -> None:
    print(message, file=sys.stderr)


def _run_sessions(
    run: Run, seeds: Sequence[int], log: Callable[[str], None]
) -> list[SessionResult]:
    plan = [("seeded", None)] + [(c, s) for c in CORPORA[1:] for s in seeds]
    results = []
    for labels in LABELS:
        for i, (corpus, seed) in enumerate(plan, start=1):
            t0 = time.monotonic()
            got = run_session(run, corpus, seed, labels)
            results += got
            log(
                f"[labels {labels} {i}/{len(plan)}] {corpus}{'' if seed is None else f' seed {seed}'}: "
                f"{got[0].messages:,} and {got[1].messages:,} messages, {time.monotonic() - t0:.1f} s"
            )
    return results


def _run_budget(run: Run, seeds: Sequence[int], log: Callable[[str], None]) -> dict[str, Any]:
    adapter = BudgetAdapter(run.paths, run.counter)
    takes_budget = {name: name in OUR_PATHS for name in run.paths}
    out: dict[str, Any] = {}
    for labels in LABELS:
        t0 = time.monotonic()
        payload = run.kit.budget_benchmark(
            takes_budget,
            adapter,
            budgets=BUDGETS,
            seeds=seeds,
            rounds=run.rounds,
            strip_labels=labels == "stripped",
        )["payload"]
        out[labels] = payload
        log(f"[budget benchmark, labels {labels}] {time.monotonic() - t0:.1f} s")
    out["adapter"] = {
        "calls": adapter.calls,
        "unchanged": adapter.unchanged,
        "retried": adapter.retried,
        "over_budget": adapter.over_budget,
        "errors": adapter.errors,
    }
    return out


def _seed_range(text: str) -> list[int]:
    """``3``, ``1-8`` or ``1,4,9-12``."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds += range(int(lo), int(hi or lo) + 1)
    if not seeds:
        raise argparse.ArgumentTypeError(f"no seeds in {text!r}")
    return seeds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "--seeds",
        type=_seed_range,
        default=None,
        help="the kit's seeds for its randomized and generated corpora and its budget benchmark, "
        "e.g. 1-8 or 9-40 (default: 1-8, and the kit's own 1-4 for the budget benchmark); "
        "any range must hold",
    )
    p.add_argument("--rounds", type=int, default=5, help="compactions per chat (default 5)")
    p.add_argument("--json", type=Path, help="also write every result here")
    p.add_argument(
        "--update-docs", action="store_true", help=f"rewrite the chat-retention block in {DOCS}"
    )
    p.add_argument("--no-hermes", action="store_true", help="skip the Hermes path")
    p.add_argument("--quick", action="store_true", help="seeds 1-2 (budget: 1), 3 rounds")
    p.add_argument("--label", help="name the measured core in the header (default: from git)")
    args = p.parse_args(argv)
    if args.quick:
        args.budget_seeds = args.seeds or [1]
        args.seeds = args.seeds or [1, 2]
        args.rounds = 3 if args.rounds == 5 else args.rounds
    else:
        args.budget_seeds = args.seeds or list(KIT_BUDGET_SEEDS)
        args.seeds = args.seeds or list(DEFAULT_SEEDS)
    return args


if __name__ == "__main__":
    sys.exit(main())
