"""Compaction for the chat-retention bench (``bench/chat_retention.py``), on our side of the pipe.

One chat in, its compacted form out, by each path (ours with a summarizer, or Hermes with its
summary failing); the kit's text form of a transcript; the stale-value check; and the adapter
that answers the kit's fixed-budget benchmark, whose budgets are in characters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.chatter import Exchange
from bench.invariants import text_of
from bench.ours import BENCH_TODAY
from bench.retention.run import HYGIENE_THRESHOLD, FailingSummaryHermes
from bench.venvs import BenchEnvError
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.messages import parse_messages, to_wire_list
from worker.compressor.summarizer import Summarizer
from worker.compressor.tokens import TokenCounter

Wire = dict[str, Any]
# The word our output puts on a line that carries an earlier value it replaced.
SUPERSEDED_WORD = "superseded"
# The kit counts characters, we count tokens: the first try aims a little under the budget,
# and a try that still overshoots is followed by at most this many tighter ones.
BUDGET_MARGIN = 0.97
BUDGET_RETRIES = 2


def kit_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """A transcript as the kit renders one: ``[role] text`` lines (list content: its text
    parts joined)."""
    return "\n".join(f"[{m.get('role')}] {text_of(m.get('content'))}" for m in messages)


def turns_to_messages(turns: Sequence[Mapping[str, Any]]) -> list[Wire]:
    """The kit's turns as chat messages."""
    return [{"role": t["role"], "content": t["text"]} for t in turns]


def stale_as_current(text: str, tokens: Sequence[str]) -> bool:
    """Whether a superseded value is still given as current: one of ``tokens`` on a line that
    does not say the value was superseded (case-insensitive, as the kit's probes)."""
    wanted = [t.lower() for t in tokens if t]
    return any(
        token in line
        for line in text.lower().splitlines()
        if SUPERSEDED_WORD not in line
        for token in wanted
    )


def hygiene_window(tokens: int) -> int:
    """The window at which ``tokens`` sit at the hygiene trigger (85%)."""
    return math.ceil(tokens / HYGIENE_THRESHOLD)


def count(counter: TokenCounter, messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(counter.count_messages(parse_messages(list(messages))))


# --- one compaction, by path ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Carry:
    """What the service keeps for a session between its compactions (worker/store)."""

    previous_summary: str | None = None
    compaction_count: int = 0
    recent_savings_pct: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Compacted:
    messages: list[Wire]
    carry: Carry  # for the next pass
    notes: tuple[str, ...] = ()


# compact(messages, config, carry) -> the compacted transcript
PathCompact = Callable[[list[Wire], CompressConfig, Carry], Compacted]


def ours(summarizer: Callable[[], Summarizer], counter: TokenCounter) -> PathCompact:
    """Our compress with a fresh summarizer each pass, given the session's carry."""

    def run(wire: list[Wire], config: CompressConfig, carry: Carry) -> Compacted:
        result = compress(
            parse_messages(wire),
            config=config,
            summarizer=summarizer(),
            counter=TokenCounter(counter.encoding),
            today=BENCH_TODAY,
            previous_summary=carry.previous_summary,
            compaction_count=carry.compaction_count,
            recent_savings_pct=carry.recent_savings_pct,
        )
        report = result.report
        notes = [f"no-op: {report.noop_reason}"] if report.noop_reason else []
        if report.fallback_used:
            notes.append("fallback used")
        if report.aborted:
            notes.append("aborted")
        after = Carry(
            result.summary or carry.previous_summary,
            carry.compaction_count + 1,
            (*carry.recent_savings_pct, report.savings_pct)[-4:],
        )
        return Compacted(to_wire_list(result.messages), after, tuple(notes))

    return run


def hermes(process: FailingSummaryHermes) -> PathCompact:
    """Hermes' compressor on a fresh instance (it keeps nothing between passes; the config
    gives only the window, and Hermes takes no target size)."""

    def run(wire: list[Wire], config: CompressConfig, carry: Carry) -> Compacted:
        process.load(name="chat", context_length=config.context_length, messages=wire)
        raw = process.run("chat", keep=True)
        notes = []
        if raw["fallback_used"]:
            notes.append("fallback summary")
        if raw["aborted"]:
            notes.append("aborted")
        messages: list[Wire] = raw["messages"]
        return Compacted(messages, Carry(compaction_count=carry.compaction_count + 1), tuple(notes))

    return run


# --- chats from the kit's sessions and our chatter --------------------------------------------


def lengthen(wire: Sequence[Wire], exchanges: Iterator[Exchange], total: int) -> list[Wire]:
    """The kit's session with chatter between its exchanges, spread evenly, to about ``total``
    messages; the kit's messages keep their order, the roles keep alternating."""
    head, body = list(wire[:1]), list(wire[1:])
    pairs = [body[i : i + 2] for i in range(0, len(body), 2)]
    gaps = len(pairs) + 1  # before each exchange of the kit's, and after the last
    extra = max(0, (total - len(wire)) // 2)
    out = head
    for gap in range(gaps):
        for _ in range(extra * (gap + 1) // gaps - extra * gap // gaps):
            out += _exchange(next(exchanges))
        if gap < len(pairs):
            out += pairs[gap]
    return out


def top_up(
    wire: Sequence[Wire], window: int, exchanges: Iterator[Exchange], counter: TokenCounter
) -> list[Wire]:
    """The transcript with fresh chatter appended until it is back at the hygiene trigger."""
    out = list(wire)
    tokens = count(counter, out)
    if out and out[-1].get("role") == "user":  # the next message is the assistant's
        reply = {"role": "assistant", "content": next(exchanges).assistant}
        out.append(reply)
        tokens += count(counter, [reply])
    while tokens < HYGIENE_THRESHOLD * window:
        pair = _exchange(next(exchanges))
        out += pair
        tokens += count(counter, pair)
    return out


def _exchange(exchange: Exchange) -> list[Wire]:
    return [
        {"role": "user", "content": exchange.user},
        {"role": "assistant", "content": exchange.assistant},
    ]


# --- the kit's fixed-budget benchmark ---------------------------------------------------------


def budget_target_tokens(budget_chars: int, input_tokens: int, input_chars: int) -> int:
    """The token target for a character budget, at the input's own tokens per character."""
    return max(1, int(budget_chars * input_tokens / max(1, input_chars) * BUDGET_MARGIN))


def tighter_target(target_tokens: int, budget_chars: int, output_chars: int) -> int:
    """The next try's target, scaled down by how far the last output overshot the budget."""
    return max(1, int(target_tokens * budget_chars / output_chars * BUDGET_MARGIN))


@dataclass
class BudgetAdapter:
    """Answers the kit's compaction requests: the kit's turns become messages, are compacted
    by the named path at the input's hygiene window (ours aiming at the budget), and the
    output goes back in the kit's text form."""

    paths: Mapping[str, PathCompact]
    counter: TokenCounter
    calls: int = 0
    unchanged: int = 0  # one turn that already fits: returned as it came
    retried: int = 0  # calls that needed a tighter try
    over_budget: int = 0  # calls still over budget after the last try
    errors: list[str] = field(default_factory=list)

    def __call__(
        self, name: str, turns: list[dict[str, Any]], round_num: int, budget_chars: int | None
    ) -> str:
        self.calls += 1
        if budget_chars is not None and len(turns) == 1 and len(turns[0]["text"]) <= budget_chars:
            self.unchanged += 1
            return str(turns[0]["text"])
        try:
            return self._compact(name, turns, budget_chars)
        except BenchEnvError:
            raise
        except Exception as exc:  # one failing compaction must not stop the benchmark
            # Nothing comes back, so nothing survives it (the block counts these failures).
            self.errors.append(f"{name} round {round_num}: {type(exc).__name__}: {exc}")
            return ""

    def _compact(self, name: str, turns: list[dict[str, Any]], budget_chars: int | None) -> str:
        wire = turns_to_messages(turns)
        tokens = count(self.counter, wire)
        window = hygiene_window(tokens)
        compact = self.paths[name]
        if budget_chars is None:  # a path that takes no budget: compacted as in the service
            return kit_text(compact(wire, CompressConfig(context_length=window), Carry()).messages)
        target = budget_target_tokens(budget_chars, tokens, len(kit_text(wire)))
        tries = 0
        while True:
            config = CompressConfig(context_length=window, target_tokens=target)
            text = kit_text(compact(wire, config, Carry()).messages)
            tries += 1
            if len(text) <= budget_chars or tries > BUDGET_RETRIES:
                break
            target = tighter_target(target, budget_chars, len(text))
        if tries > 1:
            self.retried += 1
        if len(text) > budget_chars:
            self.over_budget += 1
        return text
