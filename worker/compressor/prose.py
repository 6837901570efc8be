"""What the people in the window said: the user's messages and rules, the assistant's decisions
and blockers, read once for the ledger and the extractive summary.

Read from the turns the summarizer sees (redacted), never cut: a user's message is kept whole
here; the readers decide how much of it to quote.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from worker.compressor import cues
from worker.compressor.markers import summary_body
from worker.compressor.messages import Message

_READ_CHARS = 20_000  # of one message: a paste longer than this is quoted from its start
_MIN_DECISION_CHARS = 20  # "Let me look.": nothing decided in so few words
_MIN_CJK_DECISION_CHARS = 8  # a CJK character is about a word
_DECISION_WEIGHT = 2


class Said(NamedTuple):
    at: int  # the message's index in the transcript
    text: str
    weight: int = 0  # decisions: how surely it is one (``cues.decision_weight``)


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
    asks: list[Said] = []
    rules: list[Said] = []
    decisions: list[Said] = []
    blockers: list[Said] = []
    replies: list[Said] = []
    for pos, msg in enumerate(msgs):
        if msg.role not in ("user", "assistant") or summary_body(msg) is not None:
            continue
        text = msg.text()
        if not text or text.isspace():
            continue
        at = indexes[pos] if indexes is not None else pos
        head = text[:_READ_CHARS]
        if msg.role == "user":
            asks.append(Said(at, text))
            offsets = cues.RULE.offsets(head.lower())
            rules += [Said(at, s) for _, s in _sentences_at(head, offsets)]
            continue
        if not msg.tool_calls:
            replies.append(Said(at, text))
        elif _too_short(text):
            continue  # nothing decided or blocked in so few words
        found = cues.ASSISTANT.scan(head.lower())
        decided: set[str] = set()  # a decision that names an obstacle is still a decision
        for start, sentence in _sentences_at(head, sorted({*found["reason"], *found["weak"]})):
            if _too_short(sentence):
                continue
            end = start + len(sentence)
            weight = cues.decision_weight(
                sentence,
                reason=_within(found["reason"], start, end),
                weak=_within(found["weak"], start, end),
            )
            if weight >= _DECISION_WEIGHT:
                decisions.append(Said(at, _with_stated_reason(head, start, sentence), weight))
                decided.add(sentence)
        blockers += [
            Said(at, s) for _, s in _sentences_at(head, found["blocker"]) if s not in decided
        ]
    return Prose(tuple(asks), tuple(rules), tuple(decisions), tuple(blockers), tuple(replies))


# A reason given in a sentence of its own, after a label: "Plan: X. Why: Y."
_REASON_LABEL = re.compile(
    r"\s*(?:why|rationale|reason|motivo|raz[oó]n|raison|pourquoi|grund|warum|原因|理由)\s*[:\uff1a]",
    re.IGNORECASE,
)


def _with_stated_reason(text: str, start: int, sentence: str) -> str:
    """``sentence`` (at ``start`` in ``text``), and the next one too when it is the reason."""
    end = start + len(sentence)
    label = _REASON_LABEL.match(text, end)
    if label is None:
        return sentence
    after = cues.sentence_at(text, label.end())
    return text[start : after[0] + len(after[1])] if after is not None else sentence


def distinct(said: Sequence[Said]) -> list[tuple[Said, int]]:
    """Each distinct message once (white space aside), at its latest place, in order, with how
    often it was said."""
    latest: dict[str, tuple[Said, int]] = {}
    for item in said:
        key = " ".join(item.text.split())
        count = latest.pop(key, (item, 0))[1]
        latest[key] = (item, count + 1)
    return list(latest.values())


# Digits, an e-mail, two capitalised words in a row (a name): a fact worth keeping.
_FACT = re.compile(r"\d|@|\b[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+\s[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+")


def states_fact(sentence: str) -> bool:
    """``sentence`` names a number, an address or a person: a fact worth keeping."""
    return _FACT.search(sentence) is not None


def _too_short(text: str) -> bool:
    if len(text) >= _MIN_DECISION_CHARS:
        return False
    return len(text) < _MIN_CJK_DECISION_CHARS or not cues.is_cjk(text)


def _within(offsets: Sequence[int], start: int, end: int) -> bool:
    i = bisect_left(offsets, start)
    return i < len(offsets) and offsets[i] < end


def _sentences_at(text: str, offsets: Sequence[int]) -> list[tuple[int, str]]:
    """The sentences of ``text`` that hold the ``offsets`` (sorted), in order, each once."""
    found: list[tuple[int, str]] = []
    for offset in offsets:
        if found and offset < found[-1][0] + len(found[-1][1]):
            continue  # in the sentence found last
        hit = cues.sentence_at(text, offset)
        if hit is not None and (not found or found[-1][0] != hit[0]):
            found.append(hit)
    return found
