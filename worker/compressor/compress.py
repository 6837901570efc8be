"""The one entry point of the core: messages in, compacted messages and a report out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import NamedTuple

from worker.compressor.assemble import (
    Assembled,
    Placement,
    assemble,
    strip_old_images,
    summary_placement,
)
from worker.compressor.boundaries import (
    Budget,
    Split,
    head_end,
    latest_real,
    plan_split,
    shrink_head,
)
from worker.compressor.config import CompressConfig
from worker.compressor.cuts import bytes_for, estimated_tokens, size
from worker.compressor.errors import InvalidTranscriptError, SummarizerRateLimitError
from worker.compressor.extractive import decisions, sure
from worker.compressor.ledger import Ledger, complete_summary, extract_ledger
from worker.compressor.markers import (
    BRIEF,
    FIXED_SUMMARY_PARTS,
    FULL,
    SUMMARY_SEPARATOR,
    Framing,
    is_summary,
    neutralize_tags,
    summary_body,
    summary_parts,
    without_summary,
)
from worker.compressor.messages import Message
from worker.compressor.prompts import summary_budget
from worker.compressor.prose import read_prose
from worker.compressor.prune import PruneResult, prune_head
from worker.compressor.redact import redact_text
from worker.compressor.report import CompactionReport, CompactionResult
from worker.compressor.salience import Statement, carried, rank, said_in, statement, user_statements
from worker.compressor.summarize import Folded, Job, summarize_turns
from worker.compressor.summarizer import Summarizer
from worker.compressor.tokens import TokenCounter
from worker.compressor.tooluse import Shown, read_tool_uses
from worker.compressor.turns import Window, build_turns


def compress(
    messages: Sequence[Message],
    *,
    config: CompressConfig,
    summarizer: Summarizer,
    counter: TokenCounter,
    today: date,
    token_counts: Sequence[int] | None = None,
    focus_topic: str | None = None,
    previous_summary: str | None = None,
    compaction_count: int = 0,
    recent_savings_pct: Sequence[float] = (),
) -> CompactionResult:
    """Compact a transcript: keep the head (its tool output pruned) and the tail (verbatim),
    summarize the middle.

    Summarizer errors never escape: an auth-class error aborts (messages unchanged), any other
    falls back to an extractive summary with an explicit marker.
    """
    msgs = list(messages)
    counts = _counts(msgs, token_counts, counter)
    start = _Start(
        msgs, counts, config, tuple(recent_savings_pct), config.target_tokens is not None
    )
    if len(msgs) < config.min_messages:
        return start.unchanged(noop_reason="too_few_messages")
    carrying = [i for i, msg in enumerate(msgs) if is_summary(msg)]  # earlier summaries
    first_pass = compaction_count == 0 and not previous_summary and not carrying
    head = head_end(msgs, protect_first_n=config.protect_first_n if first_pass else 0)
    said = _Said.read(msgs, counts, head)  # what quoting what matters of what was said takes
    start = replace(start, config=_room_for_what_was_said(start, head, said, counter))
    split, placement = _plan(start, first_pass=first_pass, said=said, counter=counter)
    window = _Window.of(msgs, split, carrying)
    if not window.removed:
        return start.unchanged(noop_reason="nothing_to_summarize", split=split)
    facts = _summarize_window(
        start,
        split,
        window,
        summarizer=summarizer,
        job=_JobInputs(counter, today, focus_topic, previous_summary),
    )
    if facts.body is None:
        return start.unchanged(aborted=True, facts=facts)
    return _finish(start, facts, facts.body, placement, counter)


@dataclass(frozen=True, slots=True)
class _JobInputs:
    counter: TokenCounter
    today: date
    focus_topic: str | None
    previous_summary: str | None


def _summarize_window(
    start: _Start, split: Split, window: _Window, *, summarizer: Summarizer, job: _JobInputs
) -> _Facts:
    """Read the transcript's tool use, summarize the window, complete the summary with the
    ledger; prune the head, which stays.

    Everything is read from the messages as they came, before anything is cut: the window is
    shown to the summarizer whole (each tool result as its account and an excerpt of its error
    lines, first and last lines), and the ledger and the extractive summary read it whole.
    """
    msgs, counts, config = start.msgs, start.counts, start.config
    reading = read_tool_uses(msgs, errors_before=split.tail_start)
    shown = Shown()  # for the ledger: redacted piece by piece
    # The head (which stays as it came, never redacted) and the turns (each redacted whole).
    raw = Shown(redacting=False)
    # The head stays: its old tool outputs become their one-line accounts and its long
    # tool-call arguments shrink (a first turn that wrote a whole file must not keep the
    # window full after a compaction).
    pruned = prune_head(
        msgs,
        split.head_end,
        reading,
        raw,
        min_chars=config.prune_min_chars,
        arg_max_chars=config.tool_arg_max_chars,
    )
    built = build_turns(
        msgs,
        counts,
        Window(split.head_end, split.tail_start, window.summaries, split.lifted),
        reading=reading,
        shown=raw,
        config=config,
    )
    turns, redactions = built.turns, built.redactions
    pruned = replace(
        pruned,
        pruned_tool_outputs=pruned.pruned_tool_outputs + built.shown_results,
        deduplicated_tool_outputs=pruned.deduplicated_tool_outputs + built.deduplicated,
        shrunk_tool_args=pruned.shrunk_tool_args + built.shrunk_calls,
    )
    uses = [u for u in reading.uses if split.head_end <= u.call_index < split.tail_start]
    prose = read_prose([t.message for t in turns], [t.at for t in turns])
    prior = redact_text(job.previous_summary or window.rehydrated or "")
    removed_at = {t.at for t in turns if t.removed}
    # What the user said, ranked once with what the earlier summary quoted of it: the summary,
    # the ledger and the LLM's prompt read this one ranking.
    said = user_statements(prose.within(removed_at).asks, said_in(prior.text))
    focus = redact_text(job.focus_topic or "")
    folded = summarize_turns(
        turns,
        previous=prior.text or None,
        job=Job(
            summarizer=summarizer,
            config=config,
            counter=job.counter,
            today=job.today,
            focus_topic=focus.text or None,
            budget_tokens=_summary_tokens(start, split, window, job.counter),
            room_tokens=int(_room_tokens(start, split, job.counter) * _extractive_share(uses)),
            bytes_per_token=_bytes_per_token(start, window),
            uses=uses,
            prose=prose,
            said=said,
        ),
    )
    redactions += folded.redactions + prior.count + focus.count
    facts = _Facts(split, window, pruned, folded, redactions, summarizer)
    if folded.text is None:
        return facts
    removed = [t for t in turns if t.removed]
    budget = _ledger_budget(start, split, folded.text, job.counter)

    found = extract_ledger(
        removed,
        uses,
        prose.within(removed_at),
        reading,
        shown,
        budget_bytes=bytes_for(budget),
        summary=folded.text,
        previous=prior.text,
        said=said,
    )
    ledger, completed, appended = _fit_ledger(found, folded.text, budget, job.counter)
    facts = replace(facts, redactions=facts.redactions + shown.redactions)
    return _with_ledger(facts, ledger, completed, appended)


class _Fitted(NamedTuple):
    ledger: Ledger
    completed: str  # the summary with the entries it did not hold appended
    appended: int
    tokens: int  # of what was appended, by exact count

    @classmethod
    def of(cls, ledger: Ledger, summary: str, counter: TokenCounter) -> _Fitted:
        completed, appended = complete_summary(summary, ledger)
        return cls(
            ledger, completed, appended, counter.count_text(completed[len(summary.rstrip()) :])
        )


def _fit_ledger(
    ledger: Ledger, summary: str, budget: int, counter: TokenCounter
) -> tuple[Ledger, str, int]:
    """``ledger`` (fitted to ``budget`` tokens by bytes) fitted again by the exact count: the
    ledger, the summary it completes and how many entries it appended.

    Sized by bytes, a ledger of CJK text may come out over its budget: it is fitted within a
    budget scaled down by as much. One of Latin text comes out a quarter under (its bytes were
    counted at CJK's rate): when it left entries out, the byte budget is raised by how far the
    try fell short, then bisected between the largest that fit and the smallest that did not,
    kept while the exact count stays within.
    """
    fitted = _Fitted.of(ledger, summary, counter)
    budget_bytes = bytes_for(budget)
    if fitted.tokens > budget:
        for _ in range(_REFITS):  # each try scaled by how far the last one went over
            budget_bytes = budget_bytes * budget // (fitted.tokens + 1)
            fitted = _Fitted.of(ledger.refit(budget_bytes), summary, counter)
            if fitted.tokens <= budget:
                break
        else:
            fitted = _Fitted.of(ledger.refit(0), summary, counter)
        return fitted.ledger, fitted.completed, fitted.appended
    # Under its budget and something left out: look for the largest byte budget whose ledger
    # still fits, between this one and one scaled by how far this fell short (bisected).
    low, high = budget_bytes, 0
    tried = fitted
    for _ in range(_REFITS):
        if not (fitted.ledger.left_out and tried.tokens) or fitted.tokens == budget:
            break
        guess = low * budget // max(tried.tokens, 1) if high == 0 else (low + high) // 2
        if guess <= low or (high and guess >= high):
            break
        tried = _Fitted.of(ledger.refit(guess), summary, counter)
        if tried.tokens <= budget:
            low = guess
            if tried.appended > fitted.appended:
                fitted = tried
        else:
            high = guess
    return fitted.ledger, fitted.completed, fitted.appended


_REFITS = 6  # a ledger over or under its budget is fitted again at most this often


def _bytes_per_token(start: _Start, window: _Window) -> float:
    """The UTF-8 bytes per token of what the window's people wrote (a rule-based summary
    quotes them), a little under, within what any text runs (CJK about 2.5, English 4 to 5)."""
    chars = tokens = 0
    for i in window.removed:
        msg = start.msgs[i]
        if msg.role in ("user", "assistant") and not msg.tool_calls:
            chars += size(msg.text())
            tokens += start.counts[i]
    if tokens < _RATE_MIN_TOKENS:
        return _BYTES_PER_TOKEN_LOW
    rate = chars / tokens * _RATE_MARGIN
    return min(_BYTES_PER_TOKEN_HIGH, max(_BYTES_PER_TOKEN_LOW, rate))


_RATE_MIN_TOKENS = 200  # fewer than this say little of a window's rate
_RATE_MARGIN = 0.9  # quotes and notes run denser than the text quoted
_BYTES_PER_TOKEN_LOW, _BYTES_PER_TOKEN_HIGH = 2.2, 4.5


def _extractive_share(uses: Sequence[object]) -> float:
    """The share of the room under the target a rule-based summary may fill; the ledger then
    completes it from the rest (the identifiers, URLs and error lines of tool use). Without
    tool use, what the summary quotes is what the ledger would list."""
    return _EXTRACTIVE_ROOM_SHARE if uses else _EXTRACTIVE_CHAT_SHARE


_EXTRACTIVE_ROOM_SHARE = 0.6
_EXTRACTIVE_CHAT_SHARE = 1.0


_MIN_SUMMARY_TOKENS = 256  # even a tiny window gets a summary that can say something
_ASKED_MIN_SUMMARY_TOKENS = 48  # ... unless the caller asked for a size that leaves less


def _summary_tokens(start: _Start, split: Split, window: _Window, counter: TokenCounter) -> int:
    """The summary's length: ``summary_budget``, but in a small window no more than the room
    the kept head and tail leave under the target, less the ledger's floor (a 2,000-token
    floor is a third of 6,000)."""
    budget = summary_budget(sum(start.counts[i] for i in window.removed), start.config)
    room = _room_tokens(start, split, counter) - _ledger_floor(start.config)
    least = _ASKED_MIN_SUMMARY_TOKENS if start.asked else _MIN_SUMMARY_TOKENS
    return max(least, min(budget, room))


def _room_tokens(start: _Start, split: Split, counter: TokenCounter) -> int:
    """What the compacted transcript leaves under its target for the summary's text, once
    head and tail are kept and the fixed text around the summary is counted."""
    config, counts = start.config, start.counts
    kept = sum(counts[: split.head_end]) + sum(counts[split.tail_start :])
    if split.lifted is not None:
        kept += counts[split.lifted]
    return config.target - kept - _around_tokens(start, counter)


def _around_tokens(start: _Start, counter: TokenCounter) -> int:
    """The fixed text a compaction puts around its summary (``Framing``), and the breaks that
    join it to the summary and the system prompt."""
    return sum(counter.count_fixed(t) + _JOIN_TOKENS for t in start.framing.texts)


_JOIN_TOKENS = 2  # a paragraph break between texts joined, and a token a join may split


def _ledger_budget(start: _Start, split: Split, summary: str, counter: TokenCounter) -> int:
    """Tokens the ledger may take: the room left under the target after the summary (counted
    exactly, with the text we put around it). The target is kept to: the summary's own budget
    left the ledger its floor (``_summary_tokens``)."""
    room = _room_tokens(start, split, counter) - counter.count_text(summary)
    return max(0, room)


def _ledger_floor(config: CompressConfig) -> int:
    """The room an LLM summary's budget leaves the ledger at least (less in a small window)."""
    return min(config.ledger_min_tokens, int(config.context_length * config.ledger_max_ratio) // 8)


def _with_ledger(facts: _Facts, ledger: Ledger, completed: str, appended: int) -> _Facts:
    """The summary (redacted already) completed with the ``appended`` ledger entries the
    summarizer left out (``complete_summary``).

    Every entry was redacted where it was read (turns, ``Shown``), before it was cut, and an
    entry is one line, so the joined text needs no second pass.
    """
    return replace(
        facts,
        body=neutralize_tags(completed),
        ledger_items=len(ledger.entries),
        ledger_appended=appended,
    )


def _counts(
    msgs: Sequence[Message], given: Sequence[int] | None, counter: TokenCounter
) -> list[int]:
    if given is None:
        return counter.count_messages(msgs)
    if len(given) != len(msgs):
        raise InvalidTranscriptError(
            None, f"token_counts has {len(given)} entries for {len(msgs)} messages"
        )
    return list(given)


def _plan(
    start: _Start, *, first_pass: bool, said: _Said, counter: TokenCounter
) -> tuple[Split, Placement]:
    """The split, and where the summary goes; the head gives up messages when no role fits.

    Under a size asked for, the tail takes at most ``_ASKED_TAIL_SHARE`` of it. A tail of
    conversation (no tool use in it) gives way to what the user said: when quoting
    the short things said after the head would not leave the tail its budget under the target
    (a chat in a small window), the tail keeps only the room they leave, and when they do not
    fit at all, a head of conversation keeps only the system prompt. A tail of tool use stays:
    summarized, it would shrink to one-line accounts."""
    msgs, counts, config = start.msgs, start.counts, start.config
    protect = config.protect_first_n if first_pass else 0
    tail_tokens = config.tail_budget_tokens
    ceiling = config.tail_soft_ceiling
    if start.asked:  # a size asked for: the tail takes at most its share of it, tool use or not
        tail_tokens, ceiling = min(tail_tokens, int(config.target * _ASKED_TAIL_SHARE)), 1.0
    budget = Budget(tail_tokens, ceiling, config.min_tail_messages)
    split = plan_split(msgs, counts, protect_first_n=protect, budget=budget)
    if not _uses_tools(msgs[split.tail_start :]):
        room = config.target - sum(counts[: split.head_end]) - _around_tokens(start, counter)
        left = room - said.bound
        if left < tail_tokens:
            left = room - said.tokens()
        if left < tail_tokens:
            # The protected first turns of a conversation give way too.
            if protect and left < 0 and not _uses_tools(msgs[: split.head_end]):
                protect = 0
            budget = Budget(max(0, left), ceiling, config.min_tail_messages)
            split = plan_split(msgs, counts, protect_first_n=protect, budget=budget)
    anchors = {latest_real(msgs, "user"), latest_real(msgs, "assistant")}
    while split.head_end < split.tail_start:
        after = split.lifted if split.lifted is not None else split.tail_start
        prev = msgs[split.head_end - 1] if split.head_end else None
        placement = summary_placement(prev, msgs[after] if after < len(msgs) else None)
        if placement != "merge" or after not in anchors:
            return split, placement
        # Merging would rewrite the latest user or assistant message: summarize one more head
        # message instead, until a role fits (it always does after the system prompt).
        smaller = shrink_head(msgs, split)
        if smaller is None:
            return split, placement
        split = smaller
    return split, "assistant"  # an empty window: nothing will be placed


def _room_for_what_was_said(
    start: _Start, head: int, said: _Said, counter: TokenCounter
) -> CompressConfig:
    """The config, its target grown (up to ``said_max_ratio`` of the window) to hold the head
    (``head`` messages), what quoting the salient things the user said after it takes
    (``said``), and the least of a tail, when no size was asked for and the target is smaller."""
    config, counts = start.config, start.counts
    if config.target_tokens is not None:
        return config
    rest = (
        sum(counts[:head])
        + _around_tokens(start, counter)
        + sum(counts[-config.min_tail_messages :])
    )
    if rest + said.bound <= config.target:
        return config  # room for all of it: what matters of it is not weighed
    needed = rest + said.tokens()
    if needed <= config.target:
        return config
    ceiling = int(config.context_length * config.said_max_ratio)
    return replace(config, target_tokens=max(config.target, min(needed, ceiling)))


def _uses_tools(msgs: Sequence[Message]) -> bool:
    return any(m.role == "tool" or m.tool_calls for m in msgs)


class _Said:
    """What was said from the head on, for the room a summary needs: what quoting what matters
    of it takes (``tokens``: salience ranks it), and a bound read without ranking (``bound``:
    quoting all of it), enough to tell when the room is there anyway (an agent's session, whose
    user says little)."""

    def __init__(self, statements: list[Statement], tokens: dict[int, int], advised: int) -> None:
        self._statements = statements
        self._tokens = tokens  # a message's count, by its index
        self.advised = advised
        quoted = sum(self._quoted(st.at, st.text) for st in statements)
        self.bound = quoted + advised + (_SUMMARY_SKELETON_TOKENS if quoted else 0)
        self._exact: int | None = None

    @classmethod
    def read(cls, msgs: Sequence[Message], counts: Sequence[int], start: int) -> _Said:
        """The short things the user said from ``start`` on (each family once, as ``salience``
        ranks them with what an earlier summary quoted), and the assistant's advice in a chat
        (``_advised_tokens``). A long message is quoted in part, by the summary's own budget."""
        said: list[Statement] = []
        tokens: dict[int, int] = {}
        for i in range(start, len(msgs)):
            msg = msgs[i]
            if msg.role == "tool" or msg.tool_calls:
                continue  # what the agent did, not what the user said (nor one of our summaries)
            body = summary_body(msg)
            if body is not None:  # what an earlier summary quoted of it
                for line in said_in(body):
                    st = carried(line, -1 - len(said))
                    if st is not None:
                        said.append(st)
                continue
            if msg.role == "user":
                text = msg.text()
                if len(text) <= _SHORT_SAID_CHARS:
                    said.append(statement(i, text))
                    tokens[i] = counts[i]
        return cls(said, tokens, _advised_tokens(msgs, start))

    def tokens(self) -> int:
        """What quoting what matters takes: a rule, or a statement that carries something of
        its own. Chatter, a refrain, a bot's status do not make the room grow."""
        if self._exact is None:
            quoted = sum(self._quoted(r.at, r.text) for r in rank(self._statements) if r.matters)
            self._exact = quoted + self.advised + (_SUMMARY_SKELETON_TOKENS if quoted else 0)
        return self._exact

    def _quoted(self, at: int, text: str) -> int:
        return (self._tokens.get(at) or estimated_tokens(text)) + _QUOTE_TOKENS


def _advised_tokens(msgs: Sequence[Message], start: int) -> int:
    """In a chat (no tool use), what quoting the assistant's surer decisions from ``start`` on
    takes (``extractive.decisions``, a choice or a strong reason): in a chat the advice is
    the rest of what was said. (An agent's decisions are among its actions.)"""
    if _uses_tools(msgs):
        return 0
    advised = decisions(read_prose(msgs[start:], range(start, len(msgs))))
    return sum(estimated_tokens(quoted) + _QUOTE_TOKENS for quoted in sure(advised))


_SHORT_SAID_CHARS = 600
_ASKED_TAIL_SHARE = 0.4  # of a size asked for, what the verbatim tail may take
_QUOTE_TOKENS = 4  # a bullet, quote marks, a note
_SUMMARY_SKELETON_TOKENS = 150  # the headings and notes of a rule-based summary


@dataclass(frozen=True, slots=True)
class _Window:
    """The window's messages sorted out: what goes, and the summary it may already carry."""

    removed: tuple[int, ...]  # indexes replaced by the summary (real turns, not summaries)
    summaries: frozenset[int]  # indexes carrying an earlier summary (never re-summarized)
    rehydrated: str | None  # the newest earlier summary's body

    @classmethod
    def of(cls, msgs: Sequence[Message], split: Split, carrying: Sequence[int]) -> _Window:
        """``carrying``: the indexes of every message in ``msgs`` that carries a summary."""
        window = split.window()
        summaries = [i for i in carrying if i in window]
        found = frozenset(summaries)
        removed = tuple(
            i
            for i in window
            if i != split.lifted and (i not in found or without_summary(msgs[i]) is not None)
        )
        body = summary_body(msgs[summaries[-1]]) if summaries else None
        return cls(removed, found, body or None)


@dataclass(frozen=True, slots=True)
class _Facts:
    """What one pass found and did, for the result and its report."""

    split: Split
    window: _Window
    pruned: PruneResult  # the head, which stays
    folded: Folded
    redactions: int
    summarizer: Summarizer
    body: str | None = None  # the finished summary (None: aborted)
    ledger_items: int = 0
    ledger_appended: int = 0


@dataclass(frozen=True, slots=True)
class _Start:
    """The input, and the report of a pass that leaves it as it is."""

    msgs: list[Message]
    counts: list[int]
    config: CompressConfig
    recent_savings_pct: tuple[float, ...]
    asked: bool = False  # the caller asked for the size (the target is kept to, no floors)

    @property
    def tokens(self) -> int:
        return sum(self.counts)

    @property
    def framing(self) -> Framing:
        """Brief under a small target, where the full wording would take the summary's room."""
        return BRIEF if self.config.target < self.config.brief_framing_below_tokens else FULL

    def unchanged(
        self,
        *,
        noop_reason: str | None = None,
        aborted: bool = False,
        split: Split | None = None,
        facts: _Facts | None = None,
    ) -> CompactionResult:
        split = facts.split if facts else split
        report = CompactionReport(
            tokens_before=self.tokens,
            tokens_after=self.tokens,
            messages_before=len(self.msgs),
            messages_after=len(self.msgs),
            aborted=aborted,
            noop_reason=noop_reason,
            head_end=split.head_end if split else 0,
            tail_start=split.tail_start if split else len(self.msgs),
            target_tokens=self.config.target,
            thrash_guard_tripped=self.thrash_guard(0.0),
        )
        report = _with_summarizer(report, facts) if facts else report
        return CompactionResult(tuple(self.msgs), report, None, tuple(self.counts))

    def thrash_guard(self, savings_pct: float) -> bool:
        """True when this pass and the ones before it all saved too little to keep going."""
        strikes = self.config.thrash_strikes
        recent = [*self.recent_savings_pct, savings_pct][-strikes:]
        return len(recent) == strikes and all(
            s < self.config.ineffective_savings_pct for s in recent
        )


def _with_summarizer(report: CompactionReport, facts: _Facts) -> CompactionReport:
    """The report with what the summarizer and the pre-pass did."""
    folded = facts.folded
    error = folded.error
    return replace(
        report,
        summarizer=folded.model or facts.summarizer.name,
        summarizer_calls=folded.calls,
        summarizer_input_tokens=folded.max_input_tokens,
        summarizer_input_tokens_total=folded.total_input_tokens,
        llm_ms=folded.llm_ms,
        aux_model_failed=folded.aux_model_failed,
        error_class=error.error_class if error else None,
        error=str(error) if error else None,
        retry_after_s=error.retry_after_s if isinstance(error, SummarizerRateLimitError) else None,
        redactions=facts.redactions,
        pruned_tool_outputs=facts.pruned.pruned_tool_outputs,
        deduplicated_tool_outputs=facts.pruned.deduplicated_tool_outputs,
        shrunk_tool_args=facts.pruned.shrunk_tool_args,
        ledger_items=facts.ledger_items,
        ledger_appended=facts.ledger_appended,
        notes=tuple(folded.notes),
    )


def _finish(
    start: _Start, facts: _Facts, body: str, placement: Placement, counter: TokenCounter
) -> CompactionResult:
    msgs, split = start.msgs, facts.split
    head = _without_old_summaries(facts.pruned.messages[: split.head_end])
    after = [msgs[split.lifted]] if split.lifted is not None else []
    after = _without_old_summaries([*after, *msgs[split.tail_start :]])
    kept, stripped_images = strip_old_images([*head, *after])  # one current image for both
    head, after = kept[: len(head)], kept[len(head) :]
    built = assemble(head, body, after, placement=placement, framing=start.framing)
    counts = _output_counts(start, split, built, placement, body, counter)
    tokens_after = sum(counts)
    if tokens_after >= start.tokens:
        return start.unchanged(noop_reason="not_smaller", facts=facts)
    savings = round(100.0 * (start.tokens - tokens_after) / start.tokens, 2)
    report = CompactionReport(
        tokens_before=start.tokens,
        tokens_after=tokens_after,
        messages_before=len(msgs),
        messages_after=len(built.messages),
        summarized_count=len(facts.window.removed),
        dropped_count=facts.folded.dropped_count,
        fallback_used=facts.folded.fallback_used,
        summary_tokens=counter.count_text(body),
        stripped_images=stripped_images,
        head_end=split.head_end,
        tail_start=split.tail_start,
        savings_pct=savings,
        target_tokens=start.config.target,
        thrash_guard_tripped=start.thrash_guard(savings),
    )
    report = _with_summarizer(report, facts)
    if built.dropped_results or built.stubbed_results:
        # Only irregular input gets here: results whose call is not right before them, calls
        # without results. The provider would refuse either; the note says what was repaired.
        note = (
            f"tool pairs repaired: {built.dropped_results} result(s) without their call dropped, "
            f"{built.stubbed_results} call(s) without a result given a stub"
        )
        report = replace(report, notes=(*report.notes, note))
    return CompactionResult(tuple(built.messages), report, body, counts)


def _without_old_summaries(msgs: Sequence[Message]) -> list[Message]:
    """Kept messages without an earlier summary: the new one replaces it.

    The split puts earlier summaries in the window; one stays outside only when it was merged
    into the latest assistant message, which keeps its own content.
    """
    out = []
    for msg in msgs:
        real = without_summary(msg) if is_summary(msg) else msg
        if real is not None:
            out.append(real)
    return out


def _output_counts(
    start: _Start,
    split: Split,
    built: Assembled,
    placement: Placement,
    body: str,
    counter: TokenCounter,
) -> tuple[int, ...]:
    """Token counts of the output: an unchanged message keeps its count, the rest are counted.

    The summary message is counted paragraph by paragraph: the prefix once per process, and
    the body (when it is the message's last paragraph) once with the report's
    ``summary_tokens``.
    """
    msgs, counts_in = start.msgs, start.counts
    kept = [*range(split.head_end), *range(split.tail_start, len(msgs))]  # what can be unchanged
    if split.lifted is not None:
        kept.append(split.lifted)
    known = {id(msgs[i]): counts_in[i] for i in kept}
    counts = []
    for i, msg in enumerate(built.messages):
        count = known.get(id(msg))
        if count is None and i == built.summary_index and placement != "merge":
            parts = summary_parts(body, with_end_marker=placement == "user", framing=start.framing)
            count = counter.count_message(
                msg,
                text_tokens=counter.count_joined(
                    parts, SUMMARY_SEPARATOR, fixed=FIXED_SUMMARY_PARTS
                ),
            )
        counts.append(counter.count_message(msg) if count is None else count)
    return tuple(counts)
