"""Retention benchmark: how many planted artifacts survive one compaction, three ways.

    python -m bench.retention.run [--sessions PATTERN] [--json FILE] [--update-docs] [--no-hermes]
    python -m bench.retention.run --corpus heldout [...]   # the held-out corpus, its own docs block

Each corpus session (``bench/retention/corpus/``) is compacted once at the window where it sits
at 85% of the context window, with our default config, by:

* ``extractive``: ours with the extractive summarizer;
* ``poor-llm``: ours with a scripted LLM summarizer that records its prompts and answers one
  vague paragraph without any fact, so what survives is what our ledger and the verbatim head
  and tail carry;
* ``hermes-fallback``: Hermes Agent 0.19.0's own compressor with its summary call failing, so
  it inserts its deterministic fallback summary (``bench/hermes_side.py``, ``summary_fails``).

Then every artifact is scored in every output (``bench/retention/score.py``) and the tables are
printed (and, with ``--update-docs``, written into docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import hermes_env, invariants
from bench.docs_block import replace_block
from bench.hermes_env import HermesProcess
from bench.ours import BENCH_TODAY
from bench.retention import corpus, score
from bench.retention.plants import KINDS
from tests.support.wire_formats import to_anthropic, to_responses
from worker.compressor import formats
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.messages import Message, parse_messages, to_wire_list
from worker.compressor.report import CompactionReport
from worker.compressor.summarizer import Summarizer, SummaryRequest, SummaryResponse
from worker.compressor.tokens import TokenCounter
from worker.compressor.tooluse import Shown, read_tool_uses
from worker.encodings import counter_for_model

HYGIENE_THRESHOLD = 0.85  # as bench/cases.py: the session sits at 85% of its window
MODEL = "gpt-4"  # picks the encoding (cl100k_base), as the speed bench
DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
_BEGIN, _END = "<!-- retention:results:begin -->", "<!-- retention:results:end -->"
# Each corpus's results go in their own block of docs/benchmarks.md.
MARKERS = {
    "dev": (_BEGIN, _END),
    "heldout": (
        "<!-- retention-heldout:results:begin -->",
        "<!-- retention-heldout:results:end -->",
    ),
    "dev-native": (
        "<!-- retention-native:results:begin -->",
        "<!-- retention-native:results:end -->",
    ),
    "heldout-native": (
        "<!-- retention-heldout-native:results:begin -->",
        "<!-- retention-heldout-native:results:end -->",
    ),
}
# The wire format each agent's sessions are held in where it is not OpenAI Chat (``--wire
# native``): Claude Code and the chats of a messaging gateway in Anthropic blocks, Codex in
# Responses items (tests/support/wire_formats.py writes them as such gateways hold them).
NATIVE_WIRE: dict[str, formats.Format] = {
    "claude_code": formats.ANTHROPIC,
    "chat": formats.ANTHROPIC,
    "long_chat": formats.ANTHROPIC,
    "codex": formats.RESPONSES,
    "codex_text": formats.RESPONSES,
}
PATHS = ("extractive", "poor-llm", "hermes-fallback")
POOR_SUMMARY = (
    "The user and the assistant worked on several tasks in the repository; some commands were "
    "run and some files were changed. Work continues."
)
ERROR_KINDS = ("error_line", "open_error")


@dataclass
class PoorSummarizer:
    """An LLM that answers every summary call with one vague paragraph; records the prompts."""

    text: str = POOR_SUMMARY
    prompts: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "poor-llm"

    @property
    def is_llm(self) -> bool:
        return True

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.prompts.append(request.prompt)
        return SummaryResponse(text=self.text, model="poor-llm")


class FailingSummaryHermes(HermesProcess):
    """Hermes' side with its summary call failing (the ``summary_fails`` header option)."""

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if "op" not in request:  # the first line: the header
            request = {**request, "summary_fails": True}
        return super()._ask(request)


@dataclass
class PathResult:
    kept: list[bool]  # per artifact, in truth order
    reached_prompt: list[bool | None]  # error lines only (None for other kinds)
    tokens_after: int
    messages_after: int
    violations: list[str]
    notes: list[str]
    seconds: float
    prompts_chars: int = 0
    # per artifact: its superseded value given as current (None: it has none, or the path failed)
    stale: list[bool | None] = field(default_factory=list)


@dataclass
class SessionResult:
    name: str
    format: str
    language: str
    messages: int
    tokens: int
    window: int
    truth: list[dict[str, Any]]
    paths: dict[str, PathResult]
    # planted failing commands whose one-line account (the reader's, before any summarizer)
    # names their exit code: (named, planted)
    exit_in_account: tuple[int, int] = (0, 0)


def _score(
    truth: Sequence[dict[str, Any]],
    before: Sequence[dict[str, Any]],
    after: Sequence[dict[str, Any]],
    prompts: Sequence[str],
    counter: TokenCounter,
    *,
    seconds: float,
    notes: list[str],
) -> PathResult:
    text = score.transcript_text(after)
    kept = [score.kept(a, after, text=text) for a in truth]
    flat_prompts = [score.collapse(p) for p in prompts]
    reached: list[bool | None] = [
        any(score.contains(p, a["needle"]) for p in flat_prompts)
        if a["kind"] in ERROR_KINDS
        else None
        for a in truth
    ]
    tokens = sum(counter.count_messages(parse_messages(list(after))))
    violations = [str(v) for v in invariants.check_transcript(before, after)]
    stale = [score.stale_as_current(a, after) for a in truth]
    return PathResult(
        kept,
        reached,
        tokens,
        len(after),
        violations,
        notes,
        seconds,
        sum(len(p) for p in prompts),
        stale,
    )


def _failed(truth: Sequence[dict[str, Any]], error: str) -> PathResult:
    """A path that raised: nothing of it counts as kept (the artifacts stay in the denominator)."""
    return PathResult(
        [False] * len(truth),
        [None] * len(truth),
        0,
        0,
        [],
        [f"failed: {error}"],
        0.0,
        stale=[None] * len(truth),
    )


def _ours(
    wire: list[dict[str, Any]],
    counts: Sequence[int],
    config: CompressConfig,
    counter: TokenCounter,
    summarizer: Summarizer,
    native: formats.Transcript | None = None,
) -> tuple[list[dict[str, Any]], list[str], float]:
    """Compact the session; ``native``: the same session in another wire format, compacted in
    it (wire in to wire out) and read back as chat messages for the scorer."""
    started = time.perf_counter()
    result = compress(
        parse_messages(wire) if native is None else _records(native),
        config=config,
        summarizer=summarizer,
        counter=TokenCounter(counter.encoding),
        today=BENCH_TODAY,
        token_counts=counts if native is None else None,
    )
    if native is not None:
        written = formats.write(native.format, result.messages)
        seconds = time.perf_counter() - started
        return formats.as_chat(_records(written)), _notes(result.report), seconds
    seconds = time.perf_counter() - started
    return to_wire_list(result.messages), _notes(result.report), seconds


def _notes(report: CompactionReport) -> list[str]:
    notes = []
    if report.noop_reason:
        notes.append(f"no-op: {report.noop_reason}")
    if report.fallback_used:
        notes.append("fallback used")
    if report.aborted:
        notes.append("aborted")
    return notes


def run_session(
    doc: dict[str, Any],
    counter: TokenCounter,
    hermes: FailingSummaryHermes | None,
    *,
    native: bool = False,
) -> SessionResult:
    """One session, each path; ``native``: ours compacts it in its agent's own wire format
    (``NATIVE_WIRE``), Hermes (which speaks only OpenAI Chat) as it is."""
    wire: list[dict[str, Any]] = doc["messages"]
    truth: list[dict[str, Any]] = doc["truth"]
    counts = counter.count_messages(parse_messages(wire))
    tokens = sum(counts)
    window = math.ceil(tokens / HYGIENE_THRESHOLD)
    config = CompressConfig(context_length=window)
    paths: dict[str, PathResult] = {}
    held = native_transcript(doc) if native else None

    extractive = ExtractiveSummarizer()
    paths["extractive"] = _guarded(
        truth, lambda: _run_ours(truth, wire, counts, config, counter, extractive, [], held)
    )
    poor = PoorSummarizer()
    paths["poor-llm"] = _guarded(
        truth, lambda: _run_ours(truth, wire, counts, config, counter, poor, poor.prompts, held)
    )
    if hermes is not None:
        paths["hermes-fallback"] = _guarded(
            truth, lambda: _run_hermes(truth, wire, window, counter, hermes, doc["name"])
        )
    return SessionResult(
        doc["name"],
        doc["format"],
        doc["language"],
        len(wire),
        tokens,
        window,
        truth,
        paths,
        _exit_in_account(wire, truth),
    )


def native_transcript(doc: dict[str, Any]) -> formats.Transcript:
    """The session in its agent's own wire format, as its gateway holds it."""
    fmt = NATIVE_WIRE[doc["format"]]
    msgs = parse_messages(doc["messages"])
    if fmt == formats.ANTHROPIC:
        system, turns = to_anthropic(msgs, seed=len(msgs))
        return formats.Transcript(fmt, turns, system)
    return formats.Transcript(fmt, to_responses(msgs, seed=len(msgs)))


def _exit_in_account(
    wire: list[dict[str, Any]], truth: Sequence[dict[str, Any]]
) -> tuple[int, int]:
    """How many planted failing commands the reader's one-line account gives with their exit
    code ("exit N"), of how many: the call is found by its id at the planted message."""
    msgs = parse_messages(wire)
    reading = read_tool_uses(msgs)
    shown = Shown()
    named = planted = 0
    for artifact in truth:
        if artifact["kind"] != "failing_command":
            continue
        planted += 1
        related, at = artifact["related"], artifact["message_index"]
        use = next(
            (
                u
                for u in reading.uses
                if u.call.id == related.get("call_id") and at in (u.call_index, u.result_index)
            ),
            None,
        )
        named += use is not None and f"exit {related['exit_code']}" in shown.one_liner(use)
    return named, planted


def _guarded(truth: Sequence[dict[str, Any]], run: Callable[[], PathResult]) -> PathResult:
    try:
        return run()
    except hermes_env.HermesEnvError:
        raise
    except Exception as exc:  # one path failing must not hide the others
        return _failed(truth, f"{type(exc).__name__}: {exc}")


def _run_ours(
    truth: Sequence[dict[str, Any]],
    wire: list[dict[str, Any]],
    counts: Sequence[int],
    config: CompressConfig,
    counter: TokenCounter,
    summarizer: Summarizer,
    prompts: list[str],
    native: formats.Transcript | None = None,
) -> PathResult:
    out, notes, seconds = _ours(wire, counts, config, counter, summarizer, native)
    # In another format, what came in is compared as the scorer reads what came out.
    before = wire if native is None else formats.as_chat(_records(native))
    return _score(truth, before, out, prompts, counter, seconds=seconds, notes=notes)


def _records(native: formats.Transcript) -> list[Message]:
    return formats.read(native.format, native.messages, native.system)


def _run_hermes(
    truth: Sequence[dict[str, Any]],
    wire: list[dict[str, Any]],
    window: int,
    counter: TokenCounter,
    hermes: FailingSummaryHermes,
    name: str,
) -> PathResult:
    hermes.load(name=name, context_length=window, messages=wire)
    raw = hermes.run(name, keep=True)
    notes = []
    if raw["fallback_used"]:
        notes.append(f"fallback summary, {raw['dropped_count']} dropped")
    if raw["aborted"]:
        notes.append("aborted")
    return _score(
        truth, wire, raw["messages"], raw["prompts"], counter, seconds=raw["time_s"], notes=notes
    )


# --- tables -----------------------------------------------------------------------------------


def _pct(kept: int, total: int) -> str:
    return f"{kept}/{total} ({100 * kept / total:.0f}%)" if total else "-"


def _tally(
    results: Sequence[SessionResult],
    key: Callable[[SessionResult, dict[str, Any]], str | None],
    paths: Sequence[str],
) -> dict[str, dict[str, list[int]]]:
    """{row: {path: [kept, total]}} over every artifact (none left out)."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: {p: [0, 0] for p in paths})
    for r in results:
        for i, artifact in enumerate(r.truth):
            row = key(r, artifact)
            if row is None:
                continue
            for p in paths:
                cell = out[row][p]
                cell[0] += int(r.paths[p].kept[i])
                cell[1] += 1
    return out


def _table(
    title: str, rows: dict[str, dict[str, list[int]]], order: Sequence[str], paths: Sequence[str]
) -> str:
    lines = [f"| {title} | " + " | ".join(paths) + " |", "|---" * (len(paths) + 1) + "|"]
    for row in order:
        if row in rows:
            lines.append(f"| {row} | " + " | ".join(_pct(*rows[row][p]) for p in paths) + " |")
    total = {p: [sum(rows[r][p][0] for r in rows), sum(rows[r][p][1] for r in rows)] for p in paths}
    lines.append("| **all** | " + " | ".join(_pct(*total[p]) for p in paths) + " |")
    return "\n".join(lines)


DEPTH_BUCKETS = ((0.0, 0.25), (0.25, 0.45), (0.45, 1.0))


def _bucket_name(lo: float, hi: float) -> str:
    return f"{max(lo, 0.08):.0%}-{min(hi, 0.65):.0%}"


def _depth_bucket(depth: float) -> str:
    return next(_bucket_name(lo, hi) for lo, hi in DEPTH_BUCKETS if lo <= depth < hi)


def render(results: Sequence[SessionResult], paths: Sequence[str], header: str) -> str:
    kinds = _tally(results, lambda r, a: a["kind"], paths)
    formats = _tally(results, lambda r, a: r.format, paths)
    depth = _tally(results, lambda r, a: _depth_bucket(a["depth"]), paths)
    fmt_order = list(dict.fromkeys(r.format for r in results))
    parts = [
        header,
        "",
        "Kept, by artifact kind (kept/planted):",
        "",
        _table("kind", kinds, KINDS, paths),
        "",
        "Kept, by agent format (all kinds together):",
        "",
        _table("format", formats, fmt_order, paths),
        "",
        "Kept, by depth of the artifact in the session:",
        "",
        _table("depth", depth, [_bucket_name(lo, hi) for lo, hi in DEPTH_BUCKETS], paths),
        "",
        _prompt_line(results),
        "",
        *_stale_lines(results, paths),
        _totals_line(results, paths),
        "",
        "Per session: tokens after compaction as % of the window, invariant violations, notes.",
        "",
        _session_table(results, paths),
    ]
    violations = [(r.name, p, v) for r in results for p in paths for v in r.paths[p].violations]
    parts += ["", "Invariant violations (bench/invariants.py, DESIGN.md 1-3):", ""]
    if violations:
        parts += [f"- {p} on {name}: {v}" for name, p, v in violations[:40]]
        if len(violations) > 40:
            parts.append(f"- ... {len(violations) - 40} more")
    else:
        parts.append("- none on any path")
    return "\n".join(parts)


def _prompt_line(results: Sequence[SessionResult]) -> str:
    reached = [
        x
        for r in results
        if "poor-llm" in r.paths
        for x in r.paths["poor-llm"].reached_prompt
        if x is not None
    ]
    by_kind = {}
    for kind in ERROR_KINDS:
        vals = [
            r.paths["poor-llm"].reached_prompt[i]
            for r in results
            if "poor-llm" in r.paths
            for i, a in enumerate(r.truth)
            if a["kind"] == kind
        ]
        by_kind[kind] = _pct(sum(bool(v) for v in vals), len(vals))
    return (
        "Error lines handed to the summarizer (poor-llm path: the needle is in some prompt the "
        f"LLM got): {_pct(sum(reached), len(reached))} — error_line {by_kind['error_line']}, "
        f"open_error {by_kind['open_error']}."
    )


def _stale_lines(results: Sequence[SessionResult], paths: Sequence[str]) -> list[str]:
    """Superseded values given as current (value updates), when the corpus has any."""
    planted = [
        (r, i) for r in results for i, a in enumerate(r.truth) if a["related"].get("superseded")
    ]
    if not planted:
        return []
    n = len(planted)
    stale = ", ".join(
        f"{p} {_pct(sum(bool(r.paths[p].stale[i]) for r, i in planted), n)}" for p in paths
    )
    resolved = ", ".join(
        f"{p} {_pct(sum(r.paths[p].kept[i] and not r.paths[p].stale[i] for r, i in planted), n)}"
        for p in paths
    )
    return [
        "Value updates, the old value given as current (on a line of the output without the word "
        f"`superseded`; fewer is better): {stale}. Resolved (the latest value kept and the old "
        f"one not given as current): {resolved}.",
        "",
    ]


def _totals_line(results: Sequence[SessionResult], paths: Sequence[str]) -> str:
    after = ", ".join(
        f"{p} {sum(100 * r.paths[p].tokens_after / r.window for r in results) / len(results):.1f}%"
        for p in paths
    )
    violations = ", ".join(f"{p} {sum(len(r.paths[p].violations) for r in results)}" for p in paths)
    failed = sum(
        1 for r in results for p in paths if any(n.startswith("failed") for n in r.paths[p].notes)
    )
    named = sum(r.exit_in_account[0] for r in results)
    planted = sum(r.exit_in_account[1] for r in results)
    return (
        f"Tokens after compaction, mean share of the window over the sessions: {after}. "
        f"Invariant violations: {violations}. Paths that failed on a session: {failed}. "
        f"Planted failing commands whose one-line account names the exit code: "
        f"{_pct(named, planted)}."
    )


def _session_table(results: Sequence[SessionResult], paths: Sequence[str]) -> str:
    head = (
        "| session | format | lang | messages | tokens | window | "
        + " | ".join(f"{p}: after / violations" for p in paths)
        + " | notes |"
    )
    lines = [head, "|---" * (7 + len(paths)) + "|"]
    for r in results:
        cells = []
        notes = []
        for p in paths:
            res = r.paths[p]
            cells.append(f"{100 * res.tokens_after / r.window:.1f}% / {len(res.violations)}")
            notes += [f"{p}: {n}" for n in res.notes]
        lines.append(
            f"| {r.name} | {r.format} | {r.language} | {r.messages:,} | {r.tokens:,} | {r.window:,} | "
            + " | ".join(cells)
            + f" | {'; '.join(notes)} |"
        )
    return "\n".join(lines)


def update_docs(fragment: str, path: Path = DOCS, corpus_name: str = "dev") -> None:
    replace_block(path, *MARKERS[corpus_name], fragment)


def core_label() -> str:
    """Which compressor core was measured: the imported ``worker`` package, and its git state."""
    import subprocess

    import worker

    where = Path(worker.__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"core: {where} (not in a git checkout)"
    state = "with uncommitted changes" if dirty else "clean"
    return f"core: worker/ at {head} ({state})"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--sessions", default="*", help="only corpus sessions matching (fnmatch)")
    p.add_argument(
        "--corpus",
        choices=sorted(corpus.CORPORA),
        default="dev",
        help="which corpus (default: dev)",
    )
    p.add_argument("--json", type=Path, help="also write every artifact's result here")
    p.add_argument(
        "--update-docs", action="store_true", help=f"rewrite the retention block in {DOCS}"
    )
    p.add_argument("--no-hermes", action="store_true", help="skip the Hermes path")
    p.add_argument(
        "--wire",
        choices=("chat", "native"),
        default="chat",
        help="chat: every session in OpenAI Chat form (default); native: the sessions of the "
        "agents that speak another format, in it (Claude Code and the chats as Anthropic "
        "Messages, Codex as Responses items), on our paths only",
    )
    p.add_argument("--label", help="name the measured core in the header (default: from git)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    directory, specs = corpus.CORPORA[args.corpus]
    docs = corpus.load_corpus(directory, args.sessions, specs)
    native = args.wire == "native"
    if native:
        docs = [d for d in docs if d["format"] in NATIVE_WIRE]
    if not docs:
        raise SystemExit(
            f"no {args.corpus} sessions match {args.sessions!r} "
            f"(python -m bench.retention.corpus --corpus {args.corpus} --write)"
        )
    started = time.monotonic()
    counter = counter_for_model(MODEL)
    paths = PATHS if not (args.no_hermes or native) else PATHS[:2]
    hermes: FailingSummaryHermes | None = None
    hermes_version = "not run"
    if len(paths) == len(PATHS):
        setup = hermes_env.ensure_venv(log=lambda m: print(m, file=sys.stderr))
        if setup:
            print(f"hermes venv ready in {setup:.0f} s", file=sys.stderr)
        hermes = FailingSummaryHermes(model=MODEL, summary_text=POOR_SUMMARY)
        hermes_version = hermes.version
    results = []
    try:
        for i, doc in enumerate(docs, start=1):
            print(
                f"[{i}/{len(docs)}] {doc['name']}: {len(doc['messages']):,} messages",
                file=sys.stderr,
            )
            results.append(run_session(doc, counter, hermes, native=native))
    finally:
        if hermes is not None:
            hermes.close()
    elapsed = time.monotonic() - started
    n_art = sum(len(r.truth) for r in results)
    which = "Held-out corpus: " if args.corpus != "dev" else ""
    if native:
        which += (
            "In each agent's own wire format (Claude Code and the chats as Anthropic Messages, "
            "Codex as OpenAI Responses items; ours wire in, wire out): "
        )
    header = (
        f"{which}{len(results)} sessions, {sum(r.messages for r in results):,} messages, {n_art} planted "
        f"artifacts; each session compacted once at 85% of its window with "
        f"`CompressConfig(context_length=W)`; {args.label or core_label()}. "
        f"Hermes: hermes-agent {hermes_version}. "
        f"Python {platform.python_version()}; run took {elapsed:.0f} s."
    )
    fragment = render(results, paths, header)
    print(fragment)
    print(f"\nrun time: {elapsed:.1f} s", file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "hermes_version": hermes_version,
                    "paths": list(paths),
                    "sessions": [asdict(r) for r in results],
                },
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )
    if args.update_docs:
        update_docs(fragment, corpus_name=args.corpus + ("-native" if native else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
