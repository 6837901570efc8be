"""What the people in the window said: the user's messages and rules, the assistant's decisions
and blockers, read once for the ledger and the extractive summary.

Read from the turns the summarizer sees (redacted), never cut: a user's message is kept whole
here; the readers decide how much of it to quote.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from worker.compressor import cues
from worker.compressor.markers import summary_body
from worker.compressor.messages import Message

_READ_CHARS = 20_000  # of one message: a paste longer than this is quoted from its start
_MIN_DECISION_CHARS = 20


@dataclass(frozen=True, slots=True)
class Said:
    at: int  # the message's index in the transcript
    text: str


@dataclass(frozen=True, slots=True)
class Prose:
    asks: tuple[Said, ...] = ()  # user messages, whole
    rules: tuple[Said, ...] = ()  # user sentences that state a rule or a preference
    decisions: tuple[Said, ...] = ()  # assistant sentences that give a reason or weigh options
    blockers: tuple[Said, ...] = ()  # assistant sentences about something in the way
    replies: tuple[Said, ...] = ()  # assistant messages without tool calls, whole

    def within(self, indexes: set[int]) -> Prose:
        """Only what was said in the messages at ``indexes``."""

        def keep(items: tuple[Said, ...]) -> tuple[Said, ...]:
            return tuple(s for s in items if s.at in indexes)

        return Prose(
            keep(self.asks),
            keep(self.rules),
            keep(self.decisions),
            keep(self.blockers),
            keep(self.replies),
        )


def read_prose(msgs: Sequence[Message], indexes: Sequence[int] | None = None) -> Prose:
    """What ``msgs`` say; ``indexes``: each message's place in the transcript (default: its
    position in ``msgs``)."""
    found: dict[str, list[Said]] = {"ask": [], "rule": [], "decision": [], "blocker": []}
    replies: list[Said] = []
    for pos, msg in enumerate(msgs):
        if msg.role not in ("user", "assistant") or summary_body(msg) is not None:
            continue
        text = msg.text()
        if not text.strip():
            continue
        at = indexes[pos] if indexes is not None else pos
        if msg.role == "user":
            found["ask"].append(Said(at, text))
        elif not msg.tool_calls:
            replies.append(Said(at, text))
        head = text[:_READ_CHARS]
        lowered = head.lower()
        hits = {name: cue.offsets(lowered) for name, cue in _CUES[msg.role]}
        if any(hits.values()):
            for name, sentence in _cued_sentences(head, hits):
                found[name].append(Said(at, sentence))
    return Prose(
        tuple(found["ask"]),
        tuple(found["rule"]),
        tuple(found["decision"]),
        tuple(found["blocker"]),
        tuple(replies),
    )


_CUES: dict[str, tuple[tuple[str, cues.Cue], ...]] = {
    "user": (("rule", cues.RULE),),
    "assistant": (("decision", cues.REASON), ("blocker", cues.BLOCKER)),
}


def _cued_sentences(text: str, hits: dict[str, list[int]]) -> Iterator[tuple[str, str]]:
    """(cue name, sentence) for each sentence of ``text`` holding one of that cue's offsets,
    in order, each once per cue."""
    found: list[tuple[int, str, str]] = []
    for name, offsets in hits.items():
        seen: set[int] = set()
        for offset in offsets:
            hit = cues.sentence_at(text, offset)
            if hit is None or hit[0] in seen:
                continue
            seen.add(hit[0])
            if name != "decision" or len(hit[1]) >= _MIN_DECISION_CHARS:
                found.append((hit[0], name, hit[1]))
    for _, name, sentence in sorted(found):
        yield name, sentence
