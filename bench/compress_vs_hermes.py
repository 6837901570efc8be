"""Our compress against Hermes' own ContextCompressor, side by side, on the same transcripts.

    make bench                        # or: .venv/bin/python -m bench.compress_vs_hermes
    make bench BENCH_ARGS="--update-docs --json var/bench.json"

Hermes (``hermes-agent==0.19.0``) runs in ``bench/.hermes-venv``, made on the first run. Both
sides get the same transcripts and the same instant stub summary; see docs/benchmarks.md for the
method and the reading of the numbers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script (``python bench/compress_vs_hermes.py``): make the repository importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cases as bench_cases
from bench import hermes_env, table
from bench.docs_block import replace_block
from bench.hermes_env import HermesProcess
from bench.measure import CaseResult, median, outcome
from bench.ours import OurRun, run_once
from worker import compiled
from worker.compressor.config import CompressConfig
from worker.compressor.report import CompactionReport
from worker.compressor.tokens import TokenCounter, encoding_name_for_model
from worker.encodings import FastEncoding, counter_for_model, get_encoding

# What both stubs answer: the shape of a real handoff, ~180 tokens, no facts from any case.
SUMMARY_TEXT = """## Active Task
User asked to finish the change described in the task and verify it with the test suite.

## Goal
Fix the reported defect without breaking existing behaviour.

## Completed Actions
1. READ the module named in the report — found the faulty branch [tool: bash]
2. PATCH the branch and add a regression test [tool: bash]
3. TEST the focused test module — 1 failure left before the last edit [tool: bash]

## Active State
- Working directory: the repository root; one source file and one test file modified.

## Blocked
None.

## Key Decisions
Kept the public signature unchanged so callers need no edits.

## Relevant Files
- the patched module; the new regression test.

## Remaining Work
Re-run the full test suite and review the diff.

## Critical Context
The failing case only appears with the non-default input described in the report."""

# Hermes 0.19.0 caps a summary at min(5% of the window, 10,000) tokens (its
# _SUMMARY_TOKENS_CEILING); ours at 12,000 by default. We give ours Hermes' cap.
HERMES_SUMMARY_TOKENS_CEILING = 10_000
DEFAULT_MODEL = "gpt-4"  # cl100k_base: how both outputs and both summarizer inputs are counted
DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
_BEGIN, _END = "<!-- bench:results:begin -->", "<!-- bench:results:end -->"


def our_config(case: bench_cases.Case, hermes_settings: dict[str, Any]) -> CompressConfig:
    """Our tunables mapped onto what Hermes derived for the same window.

    Hermes raises its trigger to 75% for windows under 512K and budgets the verbatim tail as
    20% of that trigger; our tail budget is window x compress_threshold_ratio x 20%, so taking
    Hermes' effective trigger as our ratio gives both sides the same tail budget in tokens.
    """
    return CompressConfig(
        context_length=case.context_length,
        compress_threshold_ratio=hermes_settings["threshold_tokens"] / case.context_length,
        summary_target_ratio=hermes_settings["summary_target_ratio"],
        protect_first_n=hermes_settings["protect_first_n"],
        max_summary_tokens_ceiling=HERMES_SUMMARY_TOKENS_CEILING,
    )


def hermes_notes(raw: dict[str, Any]) -> list[str]:
    notes = []
    if raw["fallback_used"]:
        notes.append(f"fallback used, {raw['dropped_count']} dropped")
    if raw["aborted"]:
        notes.append("aborted")
    return notes


def window_overflows(run: OurRun, config: CompressConfig, counter: TokenCounter) -> int:
    """Calls whose prompt plus reserved answer, by tiktoken, exceed the summarizer's window."""
    return sum(
        counter.count_text(prompt) + reserved > config.summarizer_context_tokens
        for prompt, reserved in zip(run.prompts, run.reserved_output_tokens, strict=True)
    )


def our_notes(report: CompactionReport, *, same_output: bool, overflows: int) -> list[str]:
    notes = []
    if overflows:
        notes.append(f"{overflows} call(s): prompt + reserved answer above the summarizer window")
    if report.noop_reason:
        notes.append(f"no-op: {report.noop_reason}")
    if report.fallback_used:
        notes.append(f"fallback used, {report.dropped_count} dropped")
    if report.aborted:
        notes.append("aborted")
    if not same_output:
        notes.append("cold and cached runs produced different transcripts")
    return notes


SIDES = ("hermes", "cold", "cached")


def run_case(
    case: bench_cases.Case,
    hermes: HermesProcess,
    *,
    counter: TokenCounter,
    measure: TokenCounter,
    repeats: int,
) -> CaseResult:
    """Both sides on one case, their runs interleaved (the order rotates every repeat).

    ``counter``'s engine is the one ours runs with; both outputs are measured with ``measure``
    (tiktoken itself), whatever engine ours counted with.
    """
    hermes.load(name=case.name, context_length=case.context_length, messages=case.wire)
    hermes_runs = [hermes.run(case.name, keep=repeats == 1)]  # its settings map ours
    config = our_config(case, hermes_runs[0]["settings"])
    ours: dict[str, list[OurRun]] = {"cold": [], "cached": []}
    for r in range(repeats):
        for side in SIDES[r % 3 :] + SIDES[: r % 3]:
            if side == "hermes" and r > 0:
                hermes_runs.append(hermes.run(case.name, keep=r == repeats - 1))
            elif side != "hermes":
                counts = case.token_counts if side == "cached" else None
                ours[side].append(
                    run_once(
                        case.wire,
                        config=config,
                        encoding=counter.encoding,
                        summary_text=SUMMARY_TEXT,
                        token_counts=counts,
                    )
                )
    last_hermes, cold, cached = hermes_runs[-1], ours["cold"][-1], ours["cached"][-1]
    return CaseResult(
        name=case.name,
        group=case.group,
        messages_before=len(case.wire),
        tokens_before=case.tokens_before,
        context_length=case.context_length,
        hermes=outcome(
            before=case.wire,
            after=last_hermes["messages"],
            times_s=[run["time_s"] for run in hermes_runs],
            prompts=last_hermes["prompts"],
            counter=measure,
            notes=hermes_notes(last_hermes),
        ),
        ours=outcome(
            before=case.wire,
            after=cached.messages,
            times_s=[run.seconds for run in ours["cached"]],
            prompts=cached.prompts,
            counter=measure,
            notes=our_notes(
                cached.report,
                same_output=cold.messages == cached.messages,
                overflows=window_overflows(cached, config, counter),
            ),
        ),
        ours_cold_s=median([run.seconds for run in ours["cold"]]),
        ours_budget_tokens=config.summarizer_context_tokens,
        tail_budget_tokens=config.tail_budget_tokens,
        hermes_settings=hermes_runs[0]["settings"],
    )


def machine_line(hermes_version: str, load: tuple[float, float, float], engine: str) -> str:
    cpu = _cpu_model()
    return (
        f"{cpu}, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"tiktoken {version('tiktoken')}, hermes-agent {hermes_version}, {engine}, "
        f"our {compiled.state}; "
        f"load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1/5/15 min)"
    )


def engine_line(counter: TokenCounter) -> str:
    """Which engine our counts came from (the outputs are measured with tiktoken either way)."""
    if isinstance(counter.encoding, FastEncoding):
        return f"our counts by splintr-rs {version('splintr-rs')} (checked against tiktoken)"
    return "our counts by tiktoken"


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cores = cpuinfo.read_text().count("processor\t:")
                return f"{line.split(':', 1)[1].strip()} ({cores} cores)"
    return platform.processor() or platform.machine()


def render(results: Sequence[CaseResult], *, header: str) -> str:
    rows = table.main_rows(results)
    parts = [
        header,
        "",
        "Time: median of the repeats, wall clock, wire dicts in to wire dicts out.",
        "",
        table.time_table(rows),
        "",
        "Size: tokens counted with tiktoken the same way for both outputs; summarizer input is "
        "the prompt each summary call was handed, in tiktoken tokens (t) and characters (ch).",
        "",
        table.size_table(rows),
        "",
        "Settings Hermes derived for each window (ours mapped onto them, see the method):",
        "",
        table.settings_table(results),
        "",
        "Invariant violations (DESIGN.md 1-3, one checker for both):",
        "",
        table.violation_listing(results),
        "",
        "Notes (no-ops, fallbacks, aborts, cold/cached mismatches):",
        "",
        table.notes_listing(results),
    ]
    if any(r.group == "real" for r in results):
        parts += ["", "Real sessions one by one:", "", table.real_detail_table(results)]
    return "\n".join(parts)


def update_docs(fragment: str, path: Path = DOCS) -> None:
    """Replace the generated block between the markers in docs/benchmarks.md."""
    replace_block(path, _BEGIN, _END, fragment)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=9, help="runs per case and side (median)")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=list(bench_cases.GENERATED_SIZES),
        help="generated transcript sizes, in messages",
    )
    p.add_argument("--no-real", action="store_true", help="skip the real transcripts")
    p.add_argument(
        "--context-length",
        type=int,
        default=None,
        help="one window for every case (default: each case sits at 85%% of its window)",
    )
    p.add_argument("--model", default=DEFAULT_MODEL, help="picks the tiktoken encoding")
    p.add_argument("--json", type=Path, help="also write the raw results here")
    p.add_argument("--update-docs", action="store_true", help=f"rewrite the table in {DOCS}")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # Other work on the machine skews both sides; the header says how busy it was.
    load = os.getloadavg()
    counter = counter_for_model(args.model)
    measure = TokenCounter(get_encoding(encoding_name_for_model(args.model)))
    setup_s = hermes_env.ensure_venv()
    if setup_s:
        print(f"hermes venv ready in {setup_s:.0f} s", file=sys.stderr)
    cases = bench_cases.build_cases(
        counter, sizes=args.sizes, real=not args.no_real, context_length=args.context_length
    )
    # The collection before each timed run then walks only what runs left behind, not every
    # case held here (which evicted the CPU caches before each run); Hermes' side does the same.
    gc.collect()
    gc.freeze()
    with HermesProcess(model=args.model, summary_text=SUMMARY_TEXT) as hermes:
        # Untimed warm-up of both sides: first-call costs (lazy imports, regex compiles).
        run_case(cases[0], hermes, counter=counter, measure=measure, repeats=3)
        results = []
        for case in cases:
            print(f"{case.name}: {len(case.wire):,} messages", file=sys.stderr)
            results.append(
                run_case(case, hermes, counter=counter, measure=measure, repeats=args.repeats)
            )
        hermes_version = hermes.version
    fragment = render(
        results, header=f"Machine: {machine_line(hermes_version, load, engine_line(counter))}."
    )
    print(fragment)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        raw = {"hermes_version": hermes_version, "results": [asdict(r) for r in results]}
        args.json.write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")
    if args.update_docs:
        update_docs(fragment)
    return 0


if __name__ == "__main__":
    sys.exit(main())
