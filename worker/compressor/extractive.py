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

from worker.compressor.cuts import bytes_for, quote, size, snippet
from worker.compressor.markers import summary_body
from worker.compressor.messages import Message
from worker.compressor.paths import text_paths
from worker.compressor.prompts import SECTIONS
from worker.compressor.prose import Prose, decision_tier, distinct, is_question, read_prose
from worker.compressor.salience import (
    SAID_SECTION,
    Ranked,
    addressed,
    idle,
    said_in,
    to_someone_else,
    user_statements,
)
from worker.compressor.summarizer import SummaryRequest, SummaryResponse
from worker.compressor.tool_calls import named_paths
from worker.compressor.tooluse import Shown, ToolUse, fixed_later, later_successes, read_tool_uses

EXTRACTIVE_NOTE = (
    "(Extractive summary: assembled by rules from the transcript, without a language model. "
    "Quotes are exact but selective.)"
)
BRIEF_EXTRACTIVE_NOTE = "(Extractive summary: exact quotes picked by rules, no language model.)"
USER_MESSAGES = SAID_SECTION  # a section of ours after the template's: what the user wrote
_NOT_EXTRACTED = "Not extracted (extractive summary)."
_NO_STATE = "Not tracked by rules; see Completed Actions."
_NO_PLAN = "Not determined by rules; see Active Task, Blocked and Pending User Asks."
_WRITTEN = "Files written in these turns:"  # Active State's label over its list
_FILLERS = frozenset(
    {
        "None.",
        "None recorded.",
        "Nothing recorded.",
        "Not stated.",
        "As in the Active Task.",
        _NOT_EXTRACTED,
        _NO_STATE,
        _NO_PLAN,
    }
)
_NUMBERED = re.compile(r"^\s*(\d+)\.\s+(.*)$")
_QUOTE_CHARS = 600  # a user's statement up to this long is quoted whole
_LEAST_QUOTE = 100  # the task, the goal and the last reply get this much however small the room


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
            bytes_per_token=request.bytes_per_token,
            said=request.said,
        )
        return SummaryResponse(text=text, model="extractive", latency_ms=0.0)


@dataclass(slots=True)
class _Facts:
    asks: list[str] = field(default_factory=list)  # user messages, in order
    tasks: list[str] = field(default_factory=list)  # those that ask for something (``_asks``)
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
    bytes_per_token: float | None = None,
    said: Sequence[Ranked] | None = None,
) -> str:
    """The template's sections, filled from ``window`` and merged into ``previous``.

    ``uses`` and ``prose``: the window's tool uses and what was said in it, as the core read
    them (from the messages before any cut); when None they are read from ``window`` itself.
    """
    shown = Shown()
    uses = read_tool_uses(window).uses if uses is None else uses
    prose = read_prose(window) if prose is None else prose
    facts = _collect(window, prose, recent_turns, tools=bool(uses))
    old = parse_sections(previous or "")
    least = max(budget_tokens, _LEAST_TOKENS)
    budget = bytes_for(least) if bytes_per_token is None else int(least * bytes_per_token)
    compact = budget_tokens < _COMPACT_BELOW_TOKENS
    skeleton = _COMPACT_SKELETON_BYTES if compact else _SKELETON_BYTES
    room = _Room(max(budget - skeleton, budget // 3), _focus_words(focus_topic))
    # Filled in order of importance: each takes at most its share of what is left; what is
    # left at the end goes to the lists that left items out (``_Room.top_up``).
    if said is None:
        said = user_statements(prose.asks, said_in(previous or ""))
    facts.tasks = _tasks(prose, said, tools=bool(uses))
    active = _active_task(facts, old, room.left // 4)
    room.take(active)
    # In a chat without tools, what the user said is most of it, beside the assistant's advice.
    statements = room.statements(said, 0.6 if uses else _chat_share(said, facts.decisions))
    blocked = room.lines(
        [*_failures(uses, shown, open_only=True), *facts.blockers], 0.3, old=old.get("Blocked")
    )
    decisions = room.lines(
        list(facts.decisions),
        0.3 if uses else 0.6,  # and what the assistant advised, the rest
        old=old.get("Key Decisions"),
        tier=lambda line: facts.decisions.get(line, 0),
    )
    written = _unique(p for u in uses for p in u.written)
    files_written = room.lines(written, 0.3)
    actions = room.actions(old.get("Completed Actions", ""), [_action(u, shown) for u in uses], 0.6)
    files = room.lines(_files(facts, uses), 0.3, old=old.get("Relevant Files"))
    sections: dict[str, str] = {"Active Task": active}
    sections["Goal"] = old.get("Goal") or _goal(facts, room.left // 6, compact=compact)
    room.take(sections["Goal"])
    sections["In Progress"] = (
        snippet(facts.last_assistant, min(600, max(_LEAST_QUOTE, room.left // 6)))
        if facts.last_assistant and not _stock(facts.last_assistant, prose)
        else old.get("In Progress", "Nothing recorded.")
    )
    room.take(sections["In Progress"])
    resolved = room.lines(facts.resolved, 0.3, old=old.get("Resolved Questions"))
    pending = room.lines(facts.pending, 0.3)
    # The last turns get a third of what is left, taken once the lists that left something
    # out have been topped up: what was said comes before how it was said last.
    # (In a small room the last turns, which the kept tail goes on from, are left out.)
    recent_share = 0 if compact else max(2 * room.floor, room.left // 3)
    room.top_up(
        [statements, blocked, files_written, actions, decisions, files, resolved, pending],
        keep=recent_share,
    )
    sections["Critical Context"] = _critical(facts, old, previous, room, most=recent_share)
    rules, others = statements.split()
    sections["Constraints & Preferences"] = rules
    sections[USER_MESSAGES] = others
    sections["Blocked"] = blocked.bullets()
    sections["Key Decisions"] = decisions.bullets()
    sections["Active State"] = (
        f"{_WRITTEN}\n" + files_written.bullets()
        if written
        else old.get("Active State") or _NO_STATE
    )
    sections["Completed Actions"] = actions.numbered()
    sections["Relevant Files"] = files.bullets()
    sections["Resolved Questions"] = resolved.bullets()
    sections["Pending User Asks"] = pending.bullets() or "None."
    sections["Remaining Work"] = old.get("Remaining Work") or _NO_PLAN
    # In a small room a heading over nothing costs what a quote would: such sections go.
    headed = [
        name
        for name in (*SECTIONS, USER_MESSAGES)
        if not compact or not _says_nothing(sections[name])
    ]
    body = "\n\n".join(f"## {name}\n{sections[name] or 'None.'}" for name in headed)
    return f"{BRIEF_EXTRACTIVE_NOTE if compact else EXTRACTIVE_NOTE}\n\n{body}"


_COMPACT_BELOW_TOKENS = 1_000
_LEAST_TOKENS = 40  # the note and a heading with one quote


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
# A small room's summary heads only the sections that say something: about half of them.
_COMPACT_SKELETON_BYTES = size(BRIEF_EXTRACTIVE_NOTE) + _SKELETON_BYTES // 4


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
    ) -> _Pick:
        """Bullets for ``old``'s items then ``items``, within ``share`` of what is left: items
        on the focus topic first, then by ``tier`` (lower first), the newest first within one;
        shown in their order."""
        merged = _unique([*_bullets_of(old), *items])
        limit = max(self.floor, int(self.left * share))
        ranks = [(not self._on_focus(m), float(tier(m) if tier else 0)) for m in merged]
        pick = _Pick(merged, [size(i) + 3 for i in merged], ranks)
        pick.fill(limit, strict=True)
        self.left -= pick.used + 4
        return pick

    def statements(self, ranked: Sequence[Ranked], share: float) -> _Statements:
        """What the user said, within ``share`` of what is left: on the focus topic first,
        then by salience, the newest first between equals."""
        texts = [r.render(_QUOTE_CHARS) for r in ranked]
        pick = _Statements(ranked, texts, [self._on_focus(t) for t in texts])
        pick.fill(max(self.floor, int(self.left * share)), strict=False)
        self.left -= pick.used + 8
        return pick

    def actions(self, old: str, new: Sequence[str], share: float) -> _Actions:
        """Numbered actions, continuing ``old``'s numbering; failures and writes are kept first,
        then the newest; what is left out is named by its numbers."""
        items = [(int(m[1]), m[2]) for line in old.splitlines() if (m := _NUMBERED.match(line))]
        start = items[-1][0] + 1 if items else 1
        items += [(start + i, text) for i, text in enumerate(new)]
        texts = [f"{n}. {text}" for n, text in items]
        ranks = [(not self._on_focus(t), 0.0 if _IMPORTANT.search(t) else 1.0) for t in texts]
        pick = _Actions([n for n, _ in items], texts, ranks)
        pick.fill(max(2 * self.floor, int(self.left * share)), strict=True)
        self.left -= pick.used + 4
        return pick

    def top_up(self, picks: Sequence[_Pick], *, keep: int = 0) -> None:
        """What is left of the room, but ``keep``, goes to the lists that left items out, in
        this order: the room under the target is used before anything is left out for
        length."""
        for pick in picks:
            spare = self.left - keep
            if spare <= 0:
                return
            self.left -= pick.fill(pick.used + spare, strict=False)

    def _on_focus(self, text: str) -> bool:
        if not self.focus:
            return False
        lowered = text.casefold()
        return any(word in lowered for word in self.focus)


class _Pick:
    """A list section's items (in their order), which of them are kept, and what they cost."""

    def __init__(
        self,
        items: Sequence[str],
        costs: Sequence[int],
        ranks: Sequence[tuple[bool, float]],  # (not on the focus topic, tier): lower first
    ) -> None:
        self.items = items
        self.costs = costs
        self.ranks = ranks
        self.order = sorted(range(len(items)), key=lambda i: (ranks[i], -i))
        self.keep: set[int] = set()
        self.used = 0

    def fill(self, limit: int, *, strict: bool) -> int:
        """Keep more items, most important first (the newest first within a rank), while they
        fit ``limit``; the bytes this added. ``strict``: a shorter item may take the place of
        one that did not fit, but not one of a lower rank: nothing less important is shown
        while something more is left out."""
        before = self.used
        missed: tuple[bool, float] | None = None
        for i in self.order:
            if i in self.keep:
                continue
            if strict and missed is not None and self.ranks[i] > missed:
                break
            if self.used + self.costs[i] > limit:
                missed = missed or self.ranks[i]
                continue
            self.keep.add(i)
            self.used += self.costs[i]
        return self.used - before

    @property
    def left_out(self) -> int:
        return len(self.items) - len(self.keep)

    def shown(self) -> list[int]:
        """The kept items in their order, those on the focus topic first."""
        return sorted(self.keep, key=lambda i: (self.ranks[i][0], i))

    def bullets(self) -> str:
        text = "\n".join(f"- {self.items[i]}" for i in self.shown())
        if self.left_out:
            text += f"\n- ({self.left_out} more left out for length)"
        return text.lstrip("\n")


class _Statements(_Pick):
    """What the user said, ranked by salience; shown as the rules (anything that instructs or
    restricts) and the rest."""

    def __init__(
        self, ranked: Sequence[Ranked], texts: Sequence[str], focus: Sequence[bool]
    ) -> None:
        ranks = [(not on, -r.score) for r, on in zip(ranked, focus, strict=True)]
        super().__init__(texts, [size(t) + 3 for t in texts], ranks)
        self.ranked = ranked

    def fill(self, limit: int, *, strict: bool) -> int:
        """As ``_Pick.fill``, but whatever ``strict`` says: once a statement did not fit, a
        shorter one takes its room only if it is nearly as salient (``_NEARLY``): the room is
        not spent on chatter while something that matters is left out."""
        before = self.used
        missed: float | None = None  # the score of the first statement that did not fit
        for i in self.order:
            score = self.ranked[i].score
            if i in self.keep or (missed is not None and score < _NEARLY * missed):
                continue
            if self.used + self.costs[i] > limit:
                missed = score if missed is None else missed
                continue
            self.keep.add(i)
            self.used += self.costs[i]
        return self.used - before

    def split(self) -> tuple[str, str]:
        """(rules, the rest) as bullets; what was left out is counted under the rest."""
        shown = self.shown()
        rules = [f"- {self.items[i]}" for i in shown if self._rule(i)]
        rest = [f"- {self.items[i]}" for i in shown if not self._rule(i)]
        if self.left_out:
            rest.append(f"- ({self.left_out} more left out for length)")
        return "\n".join(rules), "\n".join(rest)

    def _rule(self, i: int) -> bool:
        """A short statement that instructs or restricts (a long message is quoted in part,
        with the rest of what was said)."""
        r = self.ranked[i]
        return r.directive > 0 and not r.superseded and len(r.text) <= _QUOTE_CHARS


class _Actions(_Pick):
    """Numbered actions; what is left out is named by its numbers."""

    def __init__(
        self, numbers: Sequence[int], texts: Sequence[str], ranks: Sequence[tuple[bool, float]]
    ) -> None:
        super().__init__(texts, [size(t) + 1 for t in texts], ranks)
        self.numbers = numbers

    def numbered(self) -> str:
        if not self.items:
            return "None recorded."
        shown = [self.items[i] for i in sorted(self.keep)]
        if self.left_out:
            first, last = self.numbers[0], self.numbers[-1]
            shown.insert(
                0,
                f"({self.left_out} of actions {first}-{last} left out for length; "
                "failures and writes are kept first)",
            )
        return "\n".join(shown)


_STOCK_TIMES = 3
_NEARLY = 0.5

# A failed action or a file written: kept in Completed Actions before the others.
_IMPORTANT = re.compile(r"- (?:exit [1-9]|exit -|failed)|error: |^(?:WROTE|EDITED) ")


def _focus_words(topic: str | None) -> frozenset[str]:
    if not topic:
        return frozenset()
    words = re.findall(r"\w[\w./-]{2,}", topic.casefold())
    return frozenset(words) or frozenset({topic.casefold().strip()})


def decisions(prose: Prose) -> dict[str, int]:
    """The assistant's decisions as Key Decisions quotes them, each with its
    ``decision_tier``: each distinct one once, advice given again and again (a stock phrase)
    left out."""
    return {
        f'"{quote(s.text, 320)}"': decision_tier(s, times)
        for s, times in distinct(prose.decisions, template=True)
        if times < _STOCK_TIMES
    }


def sure(decisions: dict[str, int]) -> list[str]:
    """The quotes of ``decisions`` that surely are ones: a choice, or a strong reason."""
    return [quoted for quoted, tier in decisions.items() if tier <= _SURE_TIER]


_SURE_TIER = 1


def _chat_share(said: Sequence[Ranked], decisions: dict[str, int]) -> float:
    """What the user's statements take first of a chat's room: their share of what matters
    of both (``Ranked.matters``, ``sure``), between half and 0.8."""
    mine = sum(len(r.text) for r in said if r.matters)
    advised = sum(len(q) for q in sure(decisions))
    return min(0.8, max(0.5, mine / (mine + advised))) if mine + advised else 0.8


def _collect(window: Sequence[Message], prose: Prose, recent_turns: int, *, tools: bool) -> _Facts:
    facts = _Facts()
    facts.asks = [s.text for s in prose.asks]
    facts.decisions = decisions(prose)
    facts.blockers = [
        f'Assistant noted: "{quote(s.text, 300)}"'
        for s, _ in distinct(prose.blockers, template=True)  # "I'm stuck." once, at its latest
    ]
    # A reply (an assistant message without tool calls) answers the questions before it.
    events = sorted(
        [(s.at, 0, s.text) for s in prose.asks] + [(s.at, 1, s.text) for s in prose.replies]
    )
    for _, is_reply, text in events:
        if not (is_reply or tools or _asks(text)):
            continue  # in a chat, a remark in passing asks nothing
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


def _stock(reply: str, prose: Prose) -> bool:
    """The assistant's last reply says nothing of the work: an acknowledgement ("Nice!"), or a
    reply it gave again and again ("Acknowledged. Continuing with the plan.")."""
    if idle(reply):
        return True
    said = " ".join(reply.split())
    return sum(" ".join(r.text.split()) == said for r in prose.replies) >= _STOCK_TIMES


def _tasks(prose: Prose, said: Sequence[Ranked], *, tools: bool) -> list[str]:
    """The user messages that ask for something (what Active Task and Goal quote), in order:
    beside an agent at work, any but an acknowledgement; in a chat, those that say something
    (a remark said again and again is chatter, not an ask). Never one superseded by a later
    one: an ask said again in other words is asked as it was said last."""
    current = {
        r.at for r in said if not r.superseded and r.score > 0 and (tools or r.times < _STOCK_TIMES)
    }
    return [s.text for s in prose.asks if s.at in current and (tools or _asks(s.text))]


def _asks(text: str) -> bool:
    """In a chat, a message that asks: a question or a request to the assistant, or a long
    message (a rule is a rule, under Constraints & Preferences; a remark in passing, a bot's
    line, asks nothing)."""
    if to_someone_else(text):
        return False
    return len(text) > _QUOTE_CHARS or is_question(text) or addressed(text)


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


def _goal(facts: _Facts, most: int, *, compact: bool) -> str:
    if not facts.tasks:
        return "Not stated."
    if len(facts.tasks) == 1 or compact:  # in a small room, the first ask is quoted once
        return "As in the Active Task."
    return f'User asked: "{quote(facts.tasks[0], min(500, max(_LEAST_QUOTE, most)))}"'


def _active_task(facts: _Facts, old: dict[str, str], most: int) -> str:
    if facts.tasks:
        return f'User asked: "{quote(facts.tasks[-1], min(2000, max(_LEAST_QUOTE, most)))}"'
    return old.get("Active Task") or "None."


def _critical(
    facts: _Facts, old: dict[str, str], previous: str | None, room: _Room, *, most: int
) -> str:
    recent = _newest_within(facts.recent, most) if most > 0 else []
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
