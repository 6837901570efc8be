"""A summarizer without a language model: the template filled by rules from the window.

It is the chosen summarizer when no LLM is configured and the stand-in when one fails, so it
must read as a handoff a person would accept. It quotes rather than paraphrases: every user
message (whole when short, exact quotes when long, in whatever language), the commands that
failed with their exit codes and error lines, the files written, decisions with their reasons
and what is still blocked, every action in one line. Sections share the summary budget in
order of importance; the focus topic moves what it names to the front of every section. It
says plainly that it is extractive, and merges into a previous summary section by section so
repeated passes stay bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from worker.compressor import cues
from worker.compressor.cuts import bytes_for, quote, size, snippet
from worker.compressor.markers import summary_body
from worker.compressor.messages import Message
from worker.compressor.paths import text_paths
from worker.compressor.prompts import SECTIONS
from worker.compressor.prose import (
    Prose,
    decision_tier,
    distinct,
    read_prose,
    rule_or_fact,
    user_tier,
)
from worker.compressor.summarizer import SummaryRequest, SummaryResponse
from worker.compressor.tool_calls import named_paths
from worker.compressor.tooluse import Shown, ToolUse, fixed_later, later_successes, read_tool_uses

EXTRACTIVE_NOTE = (
    "(Extractive summary: assembled by rules from the transcript, without a language model. "
    "Quotes are exact but selective.)"
)
USER_MESSAGES = "User Messages"  # a section of ours after the template's: what the user wrote
_NOT_EXTRACTED = "Not extracted (extractive summary)."
_NO_STATE = "Not tracked by rules; see Completed Actions."
_NO_PLAN = "Not determined by rules; see Active Task, Blocked and Pending User Asks."
_WRITTEN = "Files written in these turns:"  # Active State's label over its list
_FILLERS = frozenset(
    {"None.", "None recorded.", "Nothing recorded.", _NOT_EXTRACTED, _NO_STATE, _NO_PLAN}
)
_NUMBERED = re.compile(r"^\s*(\d+)\.\s+(.*)$")
_SHORT_MESSAGE = 600  # a user message up to this long is quoted whole
_LEAST_QUOTE = 100  # the task, the goal and the last reply get this much however small the room
_LONG_MESSAGE_CHARS = 900  # what a long one gets: its rules and facts, first and last words


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """Implements the ``Summarizer`` protocol deterministically."""

    recent_turns: int = 6  # how many of the last user/assistant turns to quote

    @property
    def name(self) -> str:
        return "extractive"

    @property
    def is_llm(self) -> bool:
        return False

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        text = extractive_summary(
            request.window,
            previous=request.previous_summary,
            budget_tokens=request.rule_based_tokens,
            uses=request.uses,
            prose=request.prose,
            focus_topic=request.focus_topic,
            recent_turns=self.recent_turns,
        )
        return SummaryResponse(text=text, model="extractive", latency_ms=0.0)


@dataclass(slots=True)
class _Facts:
    asks: list[str] = field(default_factory=list)  # user messages, in order
    rules: list[str] = field(default_factory=list)  # user sentences that state a rule
    decisions: dict[str, int] = field(default_factory=dict)  # quoted, by ``decision_tier``
    blockers: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    last_assistant: str = ""
    recent: list[str] = field(default_factory=list)


def extractive_summary(
    window: Sequence[Message],
    *,
    previous: str | None,
    budget_tokens: int,
    uses: Sequence[ToolUse] | None = None,
    prose: Prose | None = None,
    focus_topic: str | None = None,
    recent_turns: int = 6,
) -> str:
    """The template's sections, filled from ``window`` and merged into ``previous``.

    ``uses`` and ``prose``: the window's tool uses and what was said in it, as the core read
    them (from the messages before any cut); when None they are read from ``window`` itself.
    """
    shown = Shown()
    uses = read_tool_uses(window).uses if uses is None else uses
    prose = read_prose(window) if prose is None else prose
    facts = _collect(window, prose, recent_turns)
    old = parse_sections(previous or "")
    budget = bytes_for(max(budget_tokens, 150))
    room = _Room(max(budget - _SKELETON_BYTES, budget // 3), _focus_words(focus_topic))
    sections: dict[str, str] = {}
    # Filled in order of importance: each takes at most its share of what is left.
    sections["Active Task"] = _active_task(facts, old, room.left // 4)
    room.take(sections["Active Task"])
    said = {
        _said(s.text, n): user_tier(s.text, times=n, noted=s.weight > 0)
        for s, n in distinct(prose.asks)
    }
    sections[USER_MESSAGES] = room.lines(
        [*_old_lines(old, USER_MESSAGES), *said],
        0.45 if uses else 0.6,  # in a chat without tools, what the user said is most of it
        tier=lambda line: said.get(line, 2),
    )
    sections["Blocked"] = room.lines(
        [*_failures(uses, shown, open_only=True), *facts.blockers], 0.3, old=old.get("Blocked")
    )
    sections["Constraints & Preferences"] = room.lines(
        facts.rules, 0.3, old=old.get("Constraints & Preferences")
    )
    sections["Key Decisions"] = room.lines(
        list(facts.decisions),
        0.3 if uses else 0.6,  # and what the assistant advised, the rest
        old=old.get("Key Decisions"),
        tier=lambda line: facts.decisions.get(line, 0),
    )
    written = _unique(p for u in uses for p in u.written)
    sections["Active State"] = (
        f"{_WRITTEN}\n" + room.lines(written, 0.3)
        if written
        else old.get("Active State") or _NO_STATE
    )
    sections["Completed Actions"] = room.actions(
        old.get("Completed Actions", ""), [_action(u, shown) for u in uses], 0.6
    )
    sections["Relevant Files"] = room.lines(_files(facts, uses), 0.3, old=old.get("Relevant Files"))
    sections["Goal"] = old.get("Goal") or _goal(facts, room.left // 6)
    sections["In Progress"] = (
        snippet(facts.last_assistant, min(600, max(_LEAST_QUOTE, room.left // 6)))
        if facts.last_assistant
        else old.get("In Progress", "Nothing recorded.")
    )
    sections["Resolved Questions"] = room.lines(
        facts.resolved, 0.3, old=old.get("Resolved Questions")
    )
    sections["Pending User Asks"] = room.lines(facts.pending, 0.3) or "None."
    sections["Remaining Work"] = old.get("Remaining Work") or _NO_PLAN
    sections["Critical Context"] = _critical(facts, old, previous, room)
    # In a small room a heading over nothing costs what a quote would: such sections go.
    headed = [
        name
        for name in (*SECTIONS, USER_MESSAGES)
        if budget_tokens >= _COMPACT_BELOW_TOKENS or not _says_nothing(sections[name])
    ]
    body = "\n\n".join(f"## {name}\n{sections[name] or 'None.'}" for name in headed)
    return f"{EXTRACTIVE_NOTE}\n\n{body}"


_COMPACT_BELOW_TOKENS = 1_000


def _says_nothing(text: str) -> bool:
    """A section's text names nothing: a filler, or a list whose every item was left out."""
    lines = [line for line in text.splitlines() if line.strip()]
    return all(line in _FILLERS or line == _WRITTEN or _left_out(line) for line in lines)


def _left_out(line: str) -> bool:
    """An omission note: "- (3 more left out for length)", "(5 of actions 1-5 left out for
    length; …)"."""
    return line.lstrip("- ").startswith("(") and "left out for length" in line


# What every extractive summary holds whatever it says: the note and the headings.
_SKELETON_BYTES = size(EXTRACTIVE_NOTE) + sum(size(f"## {n}\n\n\n") for n in SECTIONS) + 20


class _Room:
    """The summary's budget in UTF-8 bytes (``cuts.size``), handed out section by section."""

    def __init__(self, chars: int, focus: frozenset[str]) -> None:
        self.left = chars
        self.focus = focus
        # The least a list may take: a few items, less in a small budget (a 6,000-token
        # window leaves the summary a few hundred tokens under its target).
        self.floor = min(200, chars // 16)

    def take(self, text: str) -> None:
        self.left -= size(text) + 4

    def lines(
        self,
        items: Sequence[str],
        share: float,
        *,
        old: str | None = None,
        tier: Callable[[str], int] | None = None,
    ) -> str:
        """Bullets for ``old``'s items then ``items``, within ``share`` of what is left: items
        on the focus topic first, then by ``tier`` (lower first), the newest first within one;
        shown in their order."""
        merged = _unique([*_bullets_of(old), *items])
        limit = max(self.floor, int(self.left * share))
        tiers = [tier(item) for item in merged] if tier else [0] * len(merged)
        keep = self._pick(merged, limit, lambda i: size(i) + 3, tiers)
        ordered = sorted(keep, key=lambda i: (not self._on_focus(merged[i]), i))
        text = "\n".join(f"- {merged[i]}" for i in ordered)
        if len(keep) < len(merged):
            text += f"\n- ({len(merged) - len(keep)} more left out for length)"
        self.take(text)
        return text

    def actions(self, old: str, new: Sequence[str], share: float) -> str:
        """Numbered actions, continuing ``old``'s numbering; failures and writes are kept first,
        then the newest; what is left out is named by its numbers."""
        items = [(int(m[1]), m[2]) for line in old.splitlines() if (m := _NUMBERED.match(line))]
        start = items[-1][0] + 1 if items else 1
        items += [(start + i, text) for i, text in enumerate(new)]
        if not items:
            return "None recorded."
        limit = max(2 * self.floor, int(self.left * share))
        texts = [f"{n}. {text}" for n, text in items]
        tiers = [0 if _IMPORTANT.search(t) else 1 for _, t in items]
        keep = self._pick(texts, limit, lambda i: size(i) + 1, tiers)
        shown = [texts[i] for i in sorted(keep)]
        if len(keep) < len(items):
            first, last = items[0][0], items[-1][0]
            shown.insert(
                0,
                f"({len(items) - len(keep)} of actions {first}-{last} left out for length; "
                "failures and writes are kept first)",
            )
        text = "\n".join(shown)
        self.take(text)
        return text

    def _pick(
        self,
        texts: Sequence[str],
        limit: int,
        cost: Callable[[str], int],
        tiers: Sequence[int],
    ) -> set[int]:
        """Which of ``texts`` fit ``limit``: on the focus topic first, then by tier, the newest
        first within one. A shorter item may take the place of one that did not fit, but not
        one of a lower rank: nothing less important is shown while something more is left out."""
        rank = [(not self._on_focus(text), tier) for text, tier in zip(texts, tiers, strict=True)]
        order = sorted(range(len(texts)), key=lambda i: (rank[i], -i))
        keep: set[int] = set()
        used = 0
        missed: tuple[bool, int] | None = None  # the rank of the first item that did not fit
        for i in order:
            if missed is not None and rank[i] > missed:
                break
            if used + cost(texts[i]) > limit:
                missed = missed or rank[i]
                continue
            keep.add(i)
            used += cost(texts[i])
        return keep

    def _on_focus(self, text: str) -> bool:
        if not self.focus:
            return False
        lowered = text.casefold()
        return any(word in lowered for word in self.focus)


# A failed action or a file written: kept in Completed Actions before the others.
_IMPORTANT = re.compile(r"- (?:exit [1-9]|exit -|failed)|error: |^(?:WROTE|EDITED) ")


def _focus_words(topic: str | None) -> frozenset[str]:
    if not topic:
        return frozenset()
    words = re.findall(r"\w[\w./-]{2,}", topic.casefold())
    return frozenset(words) or frozenset({topic.casefold().strip()})


def _collect(window: Sequence[Message], prose: Prose, recent_turns: int) -> _Facts:
    facts = _Facts()
    facts.asks = [s.text for s in prose.asks]
    facts.rules = [quote(s.text, 300) for s in prose.rules]
    for s, times in distinct(prose.decisions, template=True):
        facts.decisions[f'"{quote(s.text, 320)}"'] = decision_tier(s, times)
    facts.blockers = [
        f'Assistant noted: "{quote(s.text, 300)}"'
        for s, _ in distinct(prose.blockers, template=True)  # "I'm stuck." once, at its latest
    ]
    # A reply (an assistant message without tool calls) answers the questions before it.
    events = sorted(
        [(s.at, 0, s.text) for s in prose.asks] + [(s.at, 1, s.text) for s in prose.replies]
    )
    for _, is_reply, text in events:
        if is_reply:
            answered = [f"{ask} -> {snippet(text, 200)}" for ask in facts.pending if "?" in ask]
            facts.resolved.extend(answered)
            facts.pending.clear()
        else:
            facts.pending.append(f'User asked: "{quote(text, 300)}"')
    for msg in window:
        text = msg.text() if summary_body(msg) is None else ""
        if msg.role in ("user", "assistant") and text.strip():
            facts.recent.append(f"[{msg.role.upper()}] {snippet(text, 300)}")
            if msg.role == "assistant":
                facts.last_assistant = text
    facts.recent = facts.recent[-recent_turns:]
    return facts


def _said(text: str, times: int = 1) -> str:
    """A user message as an exact quote: whole when short; else its first words, the sentences
    that state rules or facts, and its last words, in order, within a bound."""
    stripped = " ".join(text.split())
    again = f" (said {times} times)" if times > 1 else ""
    if len(stripped) <= _SHORT_MESSAGE:
        return f'"{stripped}"{again}'
    parts = list(cues.sentences(text[:20_000]))
    chosen = {0, len(parts) - 1} | {i for i, (_, s) in enumerate(parts) if rule_or_fact(s)}
    quoted: list[str] = []
    used = 0
    for i, (_, sentence) in enumerate(parts):
        if i not in chosen:
            continue
        piece = quote(sentence, 300)
        if used + len(piece) > _LONG_MESSAGE_CHARS and quoted:
            break
        quoted.append(piece)
        used += len(piece)
    return '"' + " … ".join(quoted) + f'" ({len(stripped):,} chars in all){again}'


def _failures(uses: Sequence[ToolUse], shown: Shown, *, open_only: bool) -> list[str]:
    """Commands that failed and never passed later: `command` → exit N: first error line."""
    passed = later_successes(uses)
    out = []
    for use in uses:
        if not (use.failed or (use.errors and use.kind in ("shell", "code"))):
            continue
        if open_only and fixed_later(use, passed):
            continue
        out.append(shown.failure(use))
    return out


def _action(use: ToolUse, shown: Shown) -> str:
    """``VERB target - outcome [tool: name]`` from the one-line account of a tool use."""
    verb, _, rest = shown.action(use).partition(" ")
    if verb == "ran" and rest.startswith("code "):
        verb, rest = "ran code", rest[5:]
    action, _, outcome = rest.partition(" -> ")
    line = f"{verb.upper()} {action}".strip()
    name = use.call.name
    return f"{line} - {outcome} [tool: {name}]" if outcome else f"{line} [tool: {name}]"


def _files(facts: _Facts, uses: Sequence[ToolUse]) -> list[str]:
    named = [p for ask in facts.asks for p in text_paths(ask[:20_000])]
    touched = [p for use in uses for p in named_paths(use.facts)]
    return _unique(p.removeprefix("./") for p in [*named, *touched])


def _goal(facts: _Facts, most: int) -> str:
    if not facts.asks:
        return "Not stated."
    if len(facts.asks) == 1:
        return "As in the Active Task."
    return f'User asked: "{quote(facts.asks[0], min(500, max(_LEAST_QUOTE, most)))}"'


def _active_task(facts: _Facts, old: dict[str, str], most: int) -> str:
    if facts.asks:
        return f'User asked: "{quote(facts.asks[-1], min(2000, max(_LEAST_QUOTE, most)))}"'
    return old.get("Active Task") or "None."


def _critical(facts: _Facts, old: dict[str, str], previous: str | None, room: _Room) -> str:
    recent = _newest_within(facts.recent, max(2 * room.floor, room.left // 3))
    lines = ["Last turns before this summary:", *recent] if recent else []
    if previous and not old:
        # An earlier summary without our headings: keep its gist rather than lose it.
        lines.append(f"Earlier summary: {snippet(previous, 1500)}")
    text = "\n".join(lines) or old.get("Critical Context") or "None."
    room.take(text)
    return text


def _newest_within(lines: Sequence[str], most: int) -> list[str]:
    """The newest of ``lines`` whose sizes add up to at most ``most`` (at least the last)."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += size(line) + 1
        if kept and used > most:
            break
        kept.append(line)
    return kept[::-1]


def parse_sections(text: str) -> dict[str, str]:
    """``## Heading`` blocks of a summary, by heading (text before the first heading dropped)."""
    sections: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("## "):
            if name is not None:
                sections[name] = "\n".join(lines).strip()
            name, lines = line[3:].strip(), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        sections[name] = "\n".join(lines).strip()
    return {k: v for k, v in sections.items() if v}


def _old_lines(old: dict[str, str], name: str) -> list[str]:
    return _bullets_of(old.get(name))


def _bullets_of(text: str | None) -> list[str]:
    if not text:
        return []
    return [
        line.removeprefix("- ").strip()
        for line in text.splitlines()
        if line.strip()
        and line.strip() not in ("None.", _NOT_EXTRACTED)
        and not _left_out(line.strip())
    ]


def _unique(items: Iterable[str]) -> list[str]:
    """Keep the last occurrence of each item, in order of last appearance."""
    last: dict[str, None] = {}
    for item in items:
        last.pop(item, None)
        last[item] = None
    return list(last)
