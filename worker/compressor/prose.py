"""What the people in the window said: the person's messages, the assistant's decisions and
blockers, read once for the ledger and the extractive summary (``salience`` ranks what the
person said).

Read from the turns the summarizer sees (redacted), never cut: a user's message is kept whole
here; the readers decide how much of it to quote.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from worker.compressor import cues, voice
from worker.compressor.markers import summary_body
from worker.compressor.messages import Message

_READ_CHARS = 20_000  # of one message: a paste longer than this is quoted from its start
_MIN_DECISION_CHARS = 20  # "Let me look.": nothing decided in so few words
_MIN_CJK_DECISION_CHARS = 8  # a CJK character is about a word
_DECISION_WEIGHT = 2


class Said(NamedTuple):
    at: int  # the message's index in the transcript
    text: str
    weight: int = 0  # a decision: how surely it is one (``cues.decision_weight``)


@dataclass(frozen=True, slots=True)
class Prose:
    asks: tuple[Said, ...] = ()  # what the person wrote (user messages, whole)
    decisions: tuple[Said, ...] = ()  # assistant sentences that give a reason or weigh options
    blockers: tuple[Said, ...] = ()  # assistant sentences about something in the way
    replies: tuple[Said, ...] = ()  # assistant messages without tool calls, whole

    def within(self, indexes: set[int]) -> Prose:
        """Only what was said in the messages at ``indexes``."""

        def keep(items: tuple[Said, ...]) -> tuple[Said, ...]:
            return tuple(s for s in items if s.at in indexes)

        return Prose(keep(self.asks), keep(self.decisions), keep(self.blockers), keep(self.replies))


def read_prose(msgs: Sequence[Message], indexes: Sequence[int] | None = None) -> Prose:
    """What ``msgs`` say; ``indexes``: each message's place in the transcript (default: its
    position in ``msgs``). A user-role message the agent wrote (``voice.agent_written``) is
    not the person's: it is left out of what they asked."""
    asks: list[Said] = []
    decisions: list[Said] = []
    blockers: list[Said] = []
    replies: list[Said] = []
    asked = False  # the last thing the user wrote was a short question
    tools, again = voice.tool_names(msgs), voice.refrains(msgs)
    before: Message | None = None  # the assistant message a user message answers
    for pos, msg in enumerate(msgs):
        if msg.role == "assistant":
            before = msg
        if msg.role not in ("user", "assistant") or summary_body(msg) is not None:
            continue
        text = msg.text()
        if not text or text.isspace():
            continue
        at = indexes[pos] if indexes is not None else pos
        head = text[:_READ_CHARS]
        if msg.role == "user":
            refrain = text.strip() in again
            if not voice.agent_written(msg, before=before, tools=tools, refrain=refrain):
                asks.append(Said(at, text))
                asked = _short_question(head)
            continue
        # The opening sentence of a reply to a short question answers it: a pick, however
        # worded.
        opening = _opening(head) if asked and not msg.tool_calls else -1
        asked = False
        if not msg.tool_calls:
            replies.append(Said(at, text))
        elif _too_short(text):
            continue  # nothing decided or blocked in so few words
        decided, blocked = _assistant_said(head, at, opening)
        decisions += decided
        blockers += blocked
    return Prose(tuple(asks), tuple(decisions), tuple(blockers), tuple(replies))


def _assistant_said(head: str, at: int, opening: int) -> tuple[list[Said], list[Said]]:
    """The decisions and the blockers an assistant message (``head``, at ``at``) states."""
    lowered = head.lower()
    found = cues.ASSISTANT.scan(lowered)
    decisions: list[Said] = []
    decided: set[str] = set()  # a decision that names an obstacle is still a decision
    marks = sorted({*found["reason"], *found["weak"], *found["contrast"], *found["cjk_comma"]})
    for start, sentence in _sentences_at(head, marks):
        if _too_short(sentence):
            continue
        start, text, weight = _weigh(head, found, marks, start, sentence, opening)
        if weight >= _DECISION_WEIGHT:
            decisions.append(Said(at, _with_stated_reason(head, start, text), weight))
            decided.add(sentence)
    blocked = found["blocker"] + cues.unable_at(lowered)
    in_the_way = [i for i in sorted(blocked) if not quoted(head, i)]
    blockers = [Said(at, s) for _, s in _sentences_at(head, in_the_way) if s not in decided]
    return decisions, blockers


def _weigh(
    text: str,
    found: dict[str, list[int]],
    marks: Sequence[int],
    start: int,
    sentence: str,
    opening: int,
) -> tuple[int, str, int]:
    """(start, text, weight) of the decision ``sentence`` (at ``start`` in ``text``) may
    state, by the cues ``found`` in ``text``; ``opening``: where a reply's answer starts."""
    end = start + len(sentence)
    first_reason = _first_reason(text, found["reason"], start, end)
    reason = first_reason < end
    first_contrast = _first_within(found["contrast"], start, end)
    contrast = first_contrast < end
    weak = _weak_within(text, found["weak"], start, end)
    weight = cues.decision_weight(
        sentence,
        reason=reason,
        reason_at=first_reason - start,
        # A colon that ends the sentence, or all but a word of it, leads into a list; it
        # gives no reason.
        weak=weak
        or (_within(found["cjk_comma"], start, end - 1) and cues.reason_after_comma(sentence)),
        contrast=contrast,
        contrast_at=first_contrast - start,
        explained=contrast and first_reason < first_contrast,
        answer=start == opening,
        concludes=weak and not _weak_within(text, found["weak"], start + 1, end),
    )
    if weight == 1 and not reason and _worded(text, found["weak"], start, end):
        # A reason word whose choice is the sentence before: "Not upgrading X. It drags in Y,
        # so it gets its own ticket." (After a colon, the choice is the words before it.)
        return _with_choice_before(text, start, sentence, marks)
    return start, sentence, weight


def _first_reason(text: str, reasons: Sequence[int], start: int, end: int) -> int:
    """Where the first reason word in [start, end) of ``text`` stands, or ``end``: not "so
    that" opening the sentence or before "'s" ("So that works", "so that's fine" conclude),
    nor "given" after "is" and its kin ("the VR is given as OL")."""
    i = bisect_left(reasons, start)
    for at in reasons[i:]:
        if at >= end:
            break
        if text.startswith(("so that", "So that"), at):
            if at == start or text.startswith(("'", "\u2019"), at + 7):
                continue
        elif text.startswith("given", at) and text[max(start, at - 6) : at].endswith(_COPULAS):
            continue
        return at
    return end


_COPULAS = ("is ", "was ", "are ", "were ", "be ", "been ")


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


def _weak_within(text: str, weak: Sequence[int], start: int, end: int) -> bool:
    """A weak reason stands in [start, end) of ``text``: not a colon that only leads into a
    list ("Try these in order: restart;" with the next item a sentence of its own)."""
    i = bisect_left(weak, start)
    for at in weak[i:]:
        if at >= end - 1:  # a mark that ends the sentence joins nothing to it
            break
        if text[at] not in ":\uff1a" or _says_enough(text[at + 1 : end].strip(_LIST_ENDS)):
            return True
    return False


_LIST_ENDS = " ;.\uff1b\u3002"


def _says_enough(rest: str) -> bool:
    """``rest`` (what follows a colon in its sentence) is more than a list item's word or two."""
    if cues.is_cjk(rest[:4]):
        return len(rest) >= 4
    return len(rest.split(maxsplit=3)) >= 3


def _worded(text: str, weak: Sequence[int], start: int, end: int) -> bool:
    """A weak reason in (start, end) of ``text`` is a word ("so", "therefore"), not a mark, and
    does not open the sentence ("So we ..." concludes from the one before; it gives no reason
    for it)."""
    i = bisect_right(weak, start)
    return any(text[at] not in _REASON_MARKS for at in weak[i:] if at < end)


_FULL_STOPS = ".!\u3002\uff01"
_REASON_MARKS = ": ;\u2014\u2013\uff1a\uff1b"  # and the space before a dash


def _with_choice_before(
    text: str, start: int, sentence: str, marks: Sequence[int]
) -> tuple[int, str, int]:
    """``sentence`` (at ``start`` in ``text``, a weak reason without a choice) with the
    sentence before it on its line when that one opens with a choice and gives no reason of
    its own: (start, text, weight 2) of the two; else ``sentence`` as it was, weight 1."""
    end = start
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end == 0 or text[end - 1] not in _FULL_STOPS:  # a line, a list item, a heading before
        return start, sentence, 1
    found = cues.sentence_at(text, end - 1)
    if found is None or _within(marks, found[0], end) or not cues.opens_with_choice(found[1]):
        return start, sentence, 1
    return found[0], text[found[0] : start + len(sentence)], _DECISION_WEIGHT


# Marks that open and close a quote on one line: what stands between them is someone else's
# words (an error message, a string), not the speaker's own.
_PAIRED_QUOTES = (
    ("\u201c", "\u201d"),
    ("\u00ab", "\u00bb"),
    ("\u300c", "\u300d"),
    ("\u300e", "\u300f"),
)


def quoted(text: str, offset: int) -> bool:
    """The character at ``offset`` stands inside a quote: between straight double quotes or
    backticks on its line, after an opening curly or CJK quote mark not yet closed there, or in
    a fenced code block. "The error is \"Unable to load file\"" quotes a message; it does not
    say that the speaker is unable to do something."""
    if text.count("```", 0, offset) % 2:
        return True
    before = text[text.rfind("\n", 0, offset) + 1 : offset]
    if before.count('"') % 2 or before.count("`") % 2:
        return True
    return any(before.count(a) > before.count(b) for a, b in _PAIRED_QUOTES)


def _letters(upper: bool) -> str:
    """The Latin letters of one case (ASCII, Latin-1, Latin Extended-A and -B) as the inside
    of a character class: "Müller", "François", "Łukasz", "Ștefan" are words too."""
    extended = (chr(c) for c in range(0xC0, 0x250))
    of_case = str.isupper if upper else str.islower
    return ("A-Z" if upper else "a-z") + "".join(filter(of_case, extended))


_UPPER, _LOWER = _letters(upper=True), _letters(upper=False)


def distinct(said: Sequence[Said], *, template: bool = False) -> list[tuple[Said, int]]:
    """Each distinct message once (white space aside), at its latest place, in order, with how
    often it was said. ``template``: sentences alike but for their names and numbers ("A day
    in Porto: walk the centre …", "A day in Lyon: walk the centre …") are one, said again
    (the same advice for every ask)."""
    latest: dict[str, tuple[Said, int]] = {}
    for item in said:
        key = " ".join(item.text.split())
        if template:
            key = _SLOT.sub("_", key)
        count = latest.pop(key, (item, 0))[1]
        latest[key] = (item, count + 1)
    return list(latest.values())


# What a template fills in: a number, or capitalised words inside a sentence (a name).
_SLOT = re.compile(rf"\d+|[{_UPPER}](?<=[\w,] .)[\w-]*(?: [{_UPPER}][\w-]*)*")


def decision_tier(said: Said, times: int = 1) -> int:
    """How surely ``said`` (said ``times`` times) is a decision, lower first: 0 a choice with
    a strong reason, 1 a strong reason, 2 a weaker one; a decision given again and again (the
    same advice for every ask) is a stock phrase, two tiers lower."""
    return min(4 - said.weight, 2) + (2 if times > 1 else 0)


def is_question(text: str) -> bool:
    """``text`` asks something: a question mark (Latin or CJK) ends a clause that is more than
    a tag ("…, ok?" states, then checks)."""
    return bool(_questions(text))


def _questions(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each clause of ``text`` that asks something."""
    found = []
    for mark in _QUESTION_MARK.finditer(text):
        head = text[: mark.start()]
        start = max(head.rfind(c) for c in _CLAUSE_MARKS) + 1
        if head[start:].strip(" ¿¡").lower() not in _TAGS:
            found.append((start, mark.end()))
    unmarked = _unmarked_question(text)
    return [*found, unmarked] if unmarked is not None else found


def _unmarked_question(text: str) -> tuple[int, int] | None:
    """The last clause of ``text`` when it asks without a question mark, as chats often do,
    in a language whose words show it: opened by an accented Spanish interrogative ("qué
    hago"), or closed by a Chinese question word or particle ("怎么办", "吗")."""
    end = len(text)
    while end and text[end - 1].isspace():
        end -= 1
    if end == 0 or text[end - 1] in "?\uff1f":
        return None  # marked: found already
    tail = max(0, end - _UNMARKED_CHARS)  # such a question is a few words
    if not text.endswith(_CJK_ASKS, tail, end):
        chunk = text[tail:end]
        if "é" not in chunk and "ó" not in chunk and "á" not in chunk:
            return None  # every Spanish interrogative has one
    start = max(max(text.rfind(c, tail, end) for c in _CLAUSE_MARKS) + 1, tail)
    clause = text[start:end].strip(" ¿¡").lower()
    first = clause.split(maxsplit=1)[:1]
    if clause.endswith(_CJK_ASKS) or (first and first[0] in _SPANISH_ASKS):
        return start, end
    return None


_UNMARKED_CHARS = 200
_CJK_ASKS = ("吗", "呢", "怎么办", "怎么样", "什么", "为什么", "多少", "哪个", "哪里", "如何")
# Spanish accents an interrogative only when it asks (or exclaims): "qué hago", not "que".
_SPANISH_ASK_WORDS = "qué cómo cuál cuáles cuánto cuánta cuántos cuántas dónde cuándo quién"
_SPANISH_ASKS = frozenset(_SPANISH_ASK_WORDS.split())


# What ends a statement to check it was heard, not to ask: "…, ok?", "¿vale?" (and CJK's).
_TAG_WORDS = "ok okay right yes no eh huh vale sí si verdad oui non hein né não sim ja nein oder"
_TAGS = frozenset([*_TAG_WORDS.split(), "好吗", "对吧", "行吗", "是吧", "可以吗", "好不好", "ね"])


def _short_question(text: str) -> bool:
    """The last thing ``text`` asks is a few words ("So which one?", "¿Tú qué harías?"): it
    asks about what was just said, so the reply's opening is a pick, not a lecture."""
    asked = _questions(text)
    if not asked:
        return False
    start, end = asked[-1]
    clause = text[start:end].strip()
    return len(clause) <= 12 if cues.is_cjk(clause) else len(clause.split()) <= 6


_QUESTION_MARK = re.compile(r"[?\uff1f]")
_CLAUSE_MARKS = ",;:.!\n\uff0c\u3001\u3002\uff01\uff1b"  # and their CJK forms


def thanks(text: str) -> bool:
    """A user's short thank-you with a few words more ("¡Gracias, eso me sirve!", "Merci, ça
    marche !"): an acknowledgement in any language, where word counts differ."""
    if len(text) > _THANKS_MOST_CHARS:
        return False
    stripped = text.strip()
    short = len(stripped) <= (12 if cues.is_cjk(stripped) else 48)
    return short and stripped.lower().lstrip("¡!¿?. ").startswith(_THANKS)


_THANKS_MOST_CHARS = 200  # (with white space around the 48 it may have)


# A thank-you, in the languages the cue lists cover.
_THANKS = (
    "thanks", "thank you", "thx", "gracias", "obrigad", "merci", "danke", "grazie", "спасибо",
    "ありがとう", "谢谢", "多谢", "感谢",
)  # fmt: skip


def _opening(text: str) -> int:
    """Where the first sentence of ``text`` starts."""
    first = next(cues.sentences(text), None)
    return first[0] if first is not None else -1


def _too_short(text: str) -> bool:
    if len(text) >= _MIN_DECISION_CHARS:
        return False
    return len(text) < _MIN_CJK_DECISION_CHARS or not cues.is_cjk(text)


def _within(offsets: Sequence[int], start: int, end: int) -> bool:
    i = bisect_left(offsets, start)
    return i < len(offsets) and offsets[i] < end


def _first_within(offsets: Sequence[int], start: int, end: int) -> int:
    """The first of the ``offsets`` (sorted) in [start, end), or ``end``."""
    i = bisect_left(offsets, start)
    return offsets[i] if i < len(offsets) and offsets[i] < end else end


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
