"""Running the summarizer over the window: one call when it fits, else chunks folded in order.

Each call's prompt plus the room reserved for its answer fits the summarizer's window, by our
own count. Chunks are cut on message boundaries; each later chunk updates the running summary
with the iterative prompt. A model that still answers "too long" gets the same turns again in
smaller chunks, a bounded number of times. Any other failure switches to the extractive fallback
for the turns no LLM summary covered; an auth failure aborts the whole compaction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from worker.compressor.config import CompressConfig
from worker.compressor.cuts import cut_middle, estimated_tokens
from worker.compressor.errors import (
    EmptySummaryError,
    SummarizerAuthError,
    SummarizerContextTooLongError,
    SummarizerError,
)
from worker.compressor.extractive import extractive_summary
from worker.compressor.jsonvalue import text_without_lone_surrogates
from worker.compressor.messages import Message
from worker.compressor.prompts import (
    PART_SEPARATOR,
    job_fixed_parts,
    max_output_tokens,
    prompt_parts,
    render_prompt,
)
from worker.compressor.prose import Prose
from worker.compressor.redact import redact_text
from worker.compressor.salience import Ranked, carry_over, user_statements
from worker.compressor.serialize import Serialized, serialize_turn
from worker.compressor.summarizer import (
    Summarizer,
    SummaryRequest,
    SummaryResponse,
    rule_based_budget,
)
from worker.compressor.tokens import TokenCounter
from worker.compressor.tooluse import ToolUse
from worker.compressor.turns import Turn

MAX_RESPLITS = 3  # "context too long" answers tolerated before falling back
_MIN_TURN_ROOM = 256  # below this a call could not carry even one trimmed turn
_TURN_SEPARATOR_TOKENS = 2  # the blank line between serialized turns
# Labels hold random call ids: count them dense, to stay on the safe side.
_LABEL_CHARS_PER_TOKEN = 2


@dataclass(frozen=True, slots=True)
class Job:
    """What stays the same across the calls of one compaction."""

    summarizer: Summarizer
    config: CompressConfig
    counter: TokenCounter
    today: date
    focus_topic: str | None
    budget_tokens: int
    uses: Sequence[ToolUse] = ()  # the window's tool uses, read before any cut
    prose: Prose = field(default_factory=Prose)  # what was said in the window
    room_tokens: int | None = None  # room under the target, for a rule-based summary
    bytes_per_token: float | None = None  # the window's, for a rule-based summary's sizing
    # What the user said, ranked (``salience.user_statements``): a rule-based summary quotes
    # it, and an LLM is given what it must carry over (``salience.carry_over``) in every call.
    said: Sequence[Ranked] | None = None  # None: read from ``prose``
    user_said: str = ""


@dataclass(slots=True)
class Folded:
    """The outcome: the summary body (None when aborted) and what it took."""

    text: str | None = None
    model: str | None = None
    calls: int = 0
    max_input_tokens: int = 0
    total_input_tokens: int = 0
    llm_ms: float = 0.0
    aux_model_failed: str | None = None
    error: SummarizerError | None = None
    dropped_count: int = 0  # removed messages whose content reached no LLM summary
    redactions: int = 0
    aborted: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def fallback_used(self) -> bool:
        return self.error is not None and not self.aborted


def summarize_turns(turns: Sequence[Turn], *, previous: str | None, job: Job) -> Folded:
    """The summary of ``turns`` on top of ``previous``, however many calls that takes."""
    folded = Folded()
    if not job.summarizer.is_llm:
        return _rule_based(turns, previous, job, folded)
    ranked = job.said if job.said is not None else user_statements(job.prose.asks)
    said = carry_over(ranked, most_chars=min(_CARRY_SHARE * job.budget_tokens, _CARRY_MOST_CHARS))
    return _fold(_Serialized.of(turns, job), previous, replace(job, user_said=said), folded)


# The user's statements listed for an LLM take at most this many characters per token of the
# summary it is asked for (about a third of it): room for the rest of the summary stays.
_CARRY_SHARE = 1.2
_CARRY_MOST_CHARS = 6_000  # (about 1,500 tokens: what every call of a fold pays again)


def _rule_based(turns: Sequence[Turn], previous: str | None, job: Job, folded: Folded) -> Folded:
    """A rule-based summarizer reads the messages, not a prompt: one call, nothing to bound.

    It sizes its text by an estimate (bytes); when the text comes out over its budget by our
    exact count (CJK text estimates low), it is asked once more with the budget scaled down; when it comes out well under it and left something out (Latin text estimates high),
    once more scaled up, and the larger text is taken if it fits.
    """
    window = [t.message for t in turns]
    uses, prose = _read_in(turns, job)
    request = _request(job, "", window, previous, index=0, count=1, uses=uses, prose=prose)
    outcome = _call_or_error(job, request, folded)
    if isinstance(outcome, SummaryResponse):
        limit = request.rule_based_tokens
        tokens = job.counter.count_text(outcome.text)
        if limit <= 0:
            pass  # no room at all: the least it wrote stands (the target is missed, and said)
        elif tokens > limit:
            outcome = _smaller(job, request, limit, tokens, folded)
        elif tokens < limit * _RULE_BASED_UNDER and _LEFT_OUT in outcome.text:
            outcome = _larger(job, request, outcome, limit, tokens, folded)
    folded.text = _accepted(outcome, folded, turns, previous, job)
    return folded


def _smaller(
    job: Job, request: SummaryRequest, limit: int, tokens: int, folded: Folded
) -> SummaryResponse | SummarizerError:
    """A text within ``limit``: budgets scaled down by how far each try went over, a few
    times (the last try is taken whatever it counts)."""
    scale = 1.0
    for _ in range(_SMALLER_TRIES):
        scale *= limit / tokens
        outcome = _call_or_error(
            job, _scaled(request, int(limit * 1000 * scale), 1000 * limit), folded
        )
        if not isinstance(outcome, SummaryResponse):
            return outcome
        tokens = job.counter.count_text(outcome.text)
        if tokens <= limit:
            break
    return outcome


_SMALLER_TRIES = 3


def _larger(
    job: Job,
    request: SummaryRequest,
    fitted: SummaryResponse,
    limit: int,
    tokens: int,
    folded: Folded,
) -> SummaryResponse:
    """The largest text within ``limit`` of budgets scaled up from ``request``'s, found by
    bisecting the scale between one that fit (1) and the shortfall's (``limit / tokens``)."""
    low, high = 1.0, limit / max(tokens, 1)
    for attempt in range(_LARGER_TRIES):
        scale = high if attempt == 0 else (low + high) / 2
        larger = _call_or_error(
            job, _scaled(request, int(limit * 1000 * scale), 1000 * limit), folded
        )
        if not isinstance(larger, SummaryResponse):
            return fitted
        if job.counter.count_text(larger.text) <= limit:
            low, fitted = scale, larger
            if _LEFT_OUT not in larger.text or scale >= high:
                return fitted
        else:
            high = scale
    return fitted


_LARGER_TRIES = 4


def _scaled(request: SummaryRequest, limit: int, tokens: int) -> SummaryRequest:
    """``request`` with its budgets scaled by ``limit / tokens``."""
    return replace(
        request,
        budget_tokens=request.budget_tokens * limit // tokens,
        room_tokens=(request.room_tokens or 0) * limit // tokens,
    )


_RULE_BASED_UNDER = 0.9
_LEFT_OUT = "left out for length"


@dataclass(frozen=True, slots=True)
class _Serialized:
    turns: Sequence[Turn]
    texts: list[str]
    tokens: list[int]  # per turn, with its separator

    @classmethod
    def of(cls, turns: Sequence[Turn], job: Job) -> _Serialized:
        config = job.config
        texts, tokens = [], []
        for turn in turns:
            done = serialize_turn(turn.message, config=config)
            texts.append(done.text)
            tokens.append(_turn_tokens(turn, done) + _TURN_SEPARATOR_TOKENS)
        return cls(turns, texts, tokens)


def _turn_tokens(turn: Turn, done: Serialized) -> int:
    """A serialized turn's tokens, without tokenizing it again.

    Unchanged message: its known count plus its labels (a secret becomes a marker of about the
    same size). Changed (a one-line tool summary, shrunk arguments, a cut): estimated from its
    UTF-8 size (``cuts.estimated_tokens``). The LLM client counts each prompt exactly before
    sending it and answers "context too long" when our estimate was short; the fold then
    re-splits.
    """
    if turn.known_tokens is None or done.cut:
        return estimated_tokens(done.text)
    return turn.known_tokens + math.ceil(done.label_chars / _LABEL_CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class _Call:
    end: int  # this call covers turns [start, end)
    prompt: str
    input_tokens: int  # the prompt, by our count
    turn_tokens: int  # the part of it that is turns
    room: int  # tokens available for turns in a call like this one
    running: str | None  # the running summary as sent (trimmed if it had grown too large)


def _fold(src: _Serialized, previous: str | None, job: Job, folded: Folded) -> Folded:
    running, start, chunk, cap, resplits = previous, 0, 0, None, 0
    after = _suffix_sums(src.tokens)  # after[i]: the tokens of turns i and later
    while start < len(src.turns):
        call = _plan_call(src, start, running, job, cap)
        remaining = after[start]
        count = chunk + max(1, math.ceil(remaining / call.room))
        window = [t.message for t in src.turns[start : call.end]]
        request = _request(job, call.prompt, window, call.running, index=chunk, count=count)
        folded.max_input_tokens = max(folded.max_input_tokens, call.input_tokens)
        folded.total_input_tokens += call.input_tokens
        outcome = _call_or_error(job, request, folded)
        if isinstance(outcome, SummarizerContextTooLongError) and resplits < MAX_RESPLITS:
            resplits += 1
            cap = max(_MIN_TURN_ROOM, call.turn_tokens // 2)
            folded.notes.append(f"summarizer context too long: re-split to {cap} tokens a call")
            continue
        text = _accepted(outcome, folded, src.turns[start:], call.running, job)
        if text is None or folded.error is not None:
            folded.text = text
            return folded
        running, start, chunk = text, call.end, chunk + 1
    folded.text = running
    return folded


def _suffix_sums(values: Sequence[int]) -> list[int]:
    sums = [0] * (len(values) + 1)
    for i in range(len(values) - 1, -1, -1):
        sums[i] = sums[i + 1] + values[i]
    return sums


def _plan_call(
    src: _Serialized, start: int, running: str | None, job: Job, cap: int | None
) -> _Call:
    """As many whole turns from ``start`` as fit one call (always at least one, trimmed if need be)."""
    context = job.config.summarizer_context_tokens
    running, overhead = _fit_running(running, job)
    room = context - max_output_tokens(job.budget_tokens) - overhead
    room = max(_MIN_TURN_ROOM, min(room, cap) if cap is not None else room)
    end, used = start, 0
    while end < len(src.turns) and (end == start or used + src.tokens[end] <= room):
        used += src.tokens[end]
        end += 1
    texts = src.texts[start:end]
    if used > room:  # a single turn larger than a whole call: send it trimmed
        texts, used = _trimmed(texts[0], used, room, job)
    prompt = _render(job, "\n\n".join(texts), running)
    return _Call(end, prompt, overhead + used, used, room, running)


def _fit_running(running: str | None, job: Job) -> tuple[str | None, int]:
    """The running summary (cut if it outgrew a quarter of the window) and the prompt overhead."""
    overhead = _overhead(job, running)
    quarter = job.config.summarizer_context_tokens // 4
    if running is None or overhead <= 2 * quarter:
        return running, overhead
    summary_tokens = job.counter.count_text(running)
    keep = max(0, len(running) * quarter // max(summary_tokens, 1))
    running = cut_middle(running, keep * 3 // 4, keep // 4)
    return running, _overhead(job, running)


def _overhead(job: Job, running: str | None) -> int:
    """The prompt's tokens without turns; its fixed paragraphs are encoded once per process."""
    parts = prompt_parts(
        turns="",
        previous_summary=running,
        focus_topic=job.focus_topic,
        budget_tokens=job.budget_tokens,
        today=job.today,
        user_said=job.user_said,
    )
    fixed = job_fixed_parts(job.today, job.budget_tokens)
    return job.counter.count_joined(parts, PART_SEPARATOR, fixed=fixed)


def _trimmed(text: str, tokens: int, room: int, job: Job) -> tuple[list[str], int]:
    for _ in range(4):
        chars = int(len(text) * room / max(tokens, 1) * 0.9)
        text = cut_middle(text, chars * 3 // 4, chars // 4)
        tokens = job.counter.count_text(text) + _TURN_SEPARATOR_TOKENS
        if tokens <= room:
            break
    return [text], tokens


def _render(job: Job, turns: str, running: str | None) -> str:
    return render_prompt(
        turns=turns,
        previous_summary=running,
        focus_topic=job.focus_topic,
        budget_tokens=job.budget_tokens,
        today=job.today,
        user_said=job.user_said,
    )


def _call_or_error(
    job: Job, request: SummaryRequest, folded: Folded
) -> SummaryResponse | SummarizerError:
    folded.calls += 1
    try:
        response = job.summarizer.summarize(request)
    except SummarizerError as exc:
        folded.llm_ms += exc.latency_ms or 0.0
        folded.aux_model_failed = folded.aux_model_failed or exc.aux_model_failed
        return exc
    folded.llm_ms += response.latency_ms or 0.0
    folded.aux_model_failed = folded.aux_model_failed or response.aux_model_failed
    if not response.text.strip():
        return EmptySummaryError("the summarizer returned an empty summary", model=response.model)
    return response


def _accepted(
    outcome: SummaryResponse | SummarizerError,
    folded: Folded,
    uncovered: Sequence[Turn],
    running: str | None,
    job: Job,
) -> str | None:
    """The redacted summary text of a good answer; else the abort or the fallback."""
    if isinstance(outcome, SummaryResponse):
        # A lone surrogate (an answer's JSON escape without its other half) is not text that
        # UTF-8, the tokenizer or the database can take.
        red = redact_text(text_without_lone_surrogates(outcome.text.strip()))
        folded.redactions += red.count
        folded.model = outcome.model
        return red.text
    folded.error = outcome
    if isinstance(outcome, SummarizerAuthError):
        folded.aborted = True
        return None
    return _fallback(uncovered, running, outcome, job, folded)


def _fallback(
    turns: Sequence[Turn], running: str | None, error: SummarizerError, job: Job, folded: Folded
) -> str:
    """An extractive summary of the turns no LLM summary covered, with an explicit marker."""
    folded.dropped_count = sum(t.removed for t in turns)
    marker = (
        f"Summary generation failed ({error.error_class}); {folded.dropped_count} messages were "
        "removed without an LLM summary. The notes below about them were extracted by rules, "
        "not written by a model, so details may be missing."
    )
    uses, prose = _read_in(turns, job)
    body = extractive_summary(
        [t.message for t in turns],
        previous=running,
        budget_tokens=rule_based_budget(job.budget_tokens, job.room_tokens),
        uses=uses,
        prose=prose,
        focus_topic=job.focus_topic,
    )
    red = redact_text(f"{marker}\n\n{body}")
    folded.redactions += red.count
    return red.text


def _request(
    job: Job,
    prompt: str,
    window: Sequence[Message],
    previous: str | None,
    *,
    index: int,
    count: int,
    uses: Sequence[ToolUse] | None = None,  # for a rule-based summarizer; an LLM reads the prompt
    prose: Prose | None = None,
) -> SummaryRequest:
    return SummaryRequest(
        prompt=prompt,
        window=window,
        previous_summary=previous,
        focus_topic=job.focus_topic,
        budget_tokens=job.budget_tokens,
        max_output_tokens=max_output_tokens(job.budget_tokens),
        today=job.today,
        chunk_index=index,
        chunk_count=count,
        room_tokens=job.room_tokens,
        uses=uses,
        prose=prose,
        bytes_per_token=job.bytes_per_token,
        said=job.said,
    )


def _read_in(turns: Sequence[Turn], job: Job) -> tuple[list[ToolUse], Prose]:
    """The tool uses whose calls are among ``turns``, and what was said in them."""
    indexes = {t.at for t in turns}
    return [u for u in job.uses if u.call_index in indexes], job.prose.within(indexes)
