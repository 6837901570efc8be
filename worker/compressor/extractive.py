"""A summarizer without a language model: the template filled by rules from the window.

It is the chosen summarizer when no LLM is configured and the stand-in when one fails. It quotes
rather than paraphrases (user asks verbatim, actions with their tools and outcomes, files, error
lines, the last few turns), says plainly that it is extractive, and merges into a previous
summary section by section so that repeated passes stay bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from worker.compressor.markers import summary_body
from worker.compressor.messages import Message, ToolCall, content_text, result_texts
from worker.compressor.prompts import SECTIONS
from worker.compressor.prune import describe_call, parse_json_object, safe_prefix, snippet
from worker.compressor.summarizer import SummaryRequest, SummaryResponse

EXTRACTIVE_NOTE = (
    "(Extractive summary: assembled by rules from the transcript, without a language model. "
    "Quotes are exact but selective.)"
)
_ERROR_LINE = re.compile(
    r"(?:Traceback \(most recent call last\)|\b\w*(?:Error|Exception)\b|\bFAILED\b|\bfatal:|"
    r"\berror:|\bpanic:|Segmentation fault|No such file or directory|command not found)"
)
_PATH_TOKEN = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.(?:py|pyi|js|mjs|ts|tsx|jsx|json|ya?ml|toml|"
    r"md|rst|txt|cfg|ini|sh|rs|go|java|kt|c|h|cc|cpp|hpp|rb|php|html|css|scss|sql|proto|lock)\b"
)
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file", "notebook_path")
_CONSTRAINT = re.compile(
    r"(?i)\b(?:don't|do not|never|always|must|mustn't|should not|shouldn't|prefer|avoid|"
    r"instead of|make sure|without)\b"
)
_NUMBERED = re.compile(r"^\s*(\d+)\.\s+(.*)$")
_NOT_EXTRACTED = "Not extracted (extractive summary)."


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
            budget_tokens=request.budget_tokens,
            recent_turns=self.recent_turns,
        )
        return SummaryResponse(text=text, model="extractive", latency_ms=0.0)


@dataclass(slots=True)
class _Facts:
    asks: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    last_assistant: str = ""
    recent: list[str] = field(default_factory=list)


def extractive_summary(
    window: Sequence[Message],
    *,
    previous: str | None,
    budget_tokens: int,
    recent_turns: int = 6,
) -> str:
    """The template's sections, filled from ``window`` and merged into ``previous``."""
    facts = _collect(window, recent_turns)
    old = parse_sections(previous or "")
    caps = _Caps.for_budget(budget_tokens)
    sections = {
        "Active Task": _active_task(facts, old),
        "Goal": old.get("Goal") or _goal(facts),
        "Constraints & Preferences": _merge_lines(
            old, "Constraints & Preferences", facts.constraints, caps.lines
        ),
        "Completed Actions": _numbered(
            old.get("Completed Actions", ""), facts.actions, caps.actions
        ),
        "Active State": _active_state(facts, old),
        "In Progress": snippet(facts.last_assistant, 600)
        if facts.last_assistant
        else old.get("In Progress", "Nothing recorded."),
        "Blocked": _merge_lines(old, "Blocked", facts.errors, caps.errors),
        "Key Decisions": old.get("Key Decisions") or _NOT_EXTRACTED,
        "Resolved Questions": _merge_lines(old, "Resolved Questions", facts.resolved, caps.lines),
        "Pending User Asks": _bullets(facts.pending[-caps.lines :]) or "None.",
        "Relevant Files": _merge_lines(old, "Relevant Files", facts.files, caps.files),
        "Remaining Work": old.get("Remaining Work")
        or "Not determined by rules; see Active Task and Pending User Asks.",
        "Critical Context": _critical(facts, old, previous),
    }
    body = "\n\n".join(f"## {name}\n{sections[name]}" for name in SECTIONS)
    text = f"{EXTRACTIVE_NOTE}\n\n{body}"
    return safe_prefix(text, caps.total_chars)


@dataclass(frozen=True, slots=True)
class _Caps:
    actions: int
    files: int
    errors: int
    lines: int
    total_chars: int

    @classmethod
    def for_budget(cls, budget_tokens: int) -> _Caps:
        # A line costs ~40 tokens: the caps keep the whole under the budget even after merging.
        unit = max(budget_tokens, 500) // 100
        return cls(
            actions=max(8, unit * 2),
            files=max(8, unit),
            errors=max(4, unit // 2),
            lines=max(4, unit // 2),
            total_chars=max(budget_tokens, 500) * 4,
        )


def _collect(window: Sequence[Message], recent_turns: int) -> _Facts:
    facts = _Facts()
    results = result_texts(window)
    for msg in window:
        body = summary_body(msg)
        text = content_text(msg.content) if body is None else ""
        if msg.role == "user" and text.strip():
            _user_turn(facts, text)
        elif msg.role == "assistant":
            _assistant_turn(facts, msg, text, results)
        elif msg.role == "tool":
            facts.errors.extend(_error_lines(text))
        if msg.role in ("user", "assistant") and text.strip():
            facts.recent.append(f"[{msg.role.upper()}] {snippet(text, 300)}")
    facts.recent = facts.recent[-recent_turns:]
    facts.errors = _unique(facts.errors)
    facts.files = _unique(facts.files)
    return facts


def _user_turn(facts: _Facts, text: str) -> None:
    facts.asks.append(text)
    facts.pending.append(_quote(text, 300))
    facts.constraints.extend(
        snippet(line.strip().lstrip("-*• ").strip(), 200)
        for line in text.splitlines()
        if _CONSTRAINT.search(line)
    )
    facts.files.extend(_PATH_TOKEN.findall(text))


def _assistant_turn(facts: _Facts, msg: Message, text: str, results: dict[int, str]) -> None:
    if text.strip() and not msg.tool_calls:
        # A reply: the asks before it count as answered.
        answered = [f"{ask} -> {snippet(text, 200)}" for ask in facts.pending if "?" in ask]
        facts.resolved.extend(answered)
        facts.pending.clear()
    if text.strip():
        facts.last_assistant = text
    for call in msg.tool_calls:
        facts.actions.append(_action(call, results.get(id(call))))
        paths = _call_paths(call)
        facts.files.extend(paths)
        if any(w in call.name.lower() for w in ("write", "edit", "create", "patch", "replace")):
            facts.written.extend(paths)


def _action(call: ToolCall, result: str | None) -> str:
    """``VERB target - outcome [tool: name]`` from a call and its (possibly pruned) result."""
    output = result or ""
    prefix = f"[{call.name}] "
    described = (
        output[len(prefix) :].split(" (+", 1)[0]
        if output.startswith(prefix)
        else describe_call(call.name, call.arguments, output)
    )
    if result is None:
        described += " -> no result recorded"
    verb, _, rest = described.partition(" ")
    action, _, outcome = rest.partition(" -> ")
    line = f"{verb.upper()} {action}".strip()
    return f"{line} - {outcome} [tool: {call.name}]" if outcome else f"{line} [tool: {call.name}]"


def _call_paths(call: ToolCall) -> list[str]:
    args = parse_json_object(call.arguments)
    paths = [v for k in _PATH_KEYS if isinstance(v := args.get(k), str) and v.strip()]
    command = args.get("command") or args.get("cmd")
    if isinstance(command, str):
        paths.extend(_PATH_TOKEN.findall(command))
    return paths


def _error_lines(text: str) -> list[str]:
    return [snippet(line, 300) for line in text.splitlines() if _ERROR_LINE.search(line)][-4:]


def _quote(text: str, limit: int) -> str:
    quoted = text.strip()
    if len(quoted) > limit:
        quoted = safe_prefix(quoted, limit) + f"…[{len(quoted) - limit:,} chars not quoted]"
    return f'User asked: "{quoted}"'


def _goal(facts: _Facts) -> str:
    if not facts.asks:
        return "Not stated."
    if len(facts.asks) == 1:
        return "As in the Active Task."
    return _quote(facts.asks[0], 500)


def _active_task(facts: _Facts, old: dict[str, str]) -> str:
    if facts.asks:
        return _quote(facts.asks[-1], 2000)
    return old.get("Active Task") or "None."


def _active_state(facts: _Facts, old: dict[str, str]) -> str:
    if not facts.written:
        return old.get("Active State") or "Not tracked by rules; see Completed Actions."
    return "Files written in these turns:\n" + _bullets(_unique(facts.written)[-20:])


def _critical(facts: _Facts, old: dict[str, str], previous: str | None) -> str:
    lines = ["Last turns before this summary:", *facts.recent] if facts.recent else []
    if previous and not old:
        # An earlier summary without our headings: keep its gist rather than lose it.
        lines.append(f"Earlier summary: {snippet(previous, 1500)}")
    return "\n".join(lines) or old.get("Critical Context") or "None."


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


def _numbered(old: str, new: Sequence[str], cap: int) -> str:
    """Old numbered items, then the new ones numbered on; only the newest ``cap`` are shown."""
    items = [
        (int(m.group(1)), m.group(2)) for line in old.splitlines() if (m := _NUMBERED.match(line))
    ]
    start = items[-1][0] + 1 if items else 1
    items += [(start + i, text) for i, text in enumerate(new)]
    if not items:
        return "None recorded."
    shown = items[-cap:]
    lines = [f"{n}. {text}" for n, text in shown]
    if len(shown) < len(items):
        lines.insert(0, f"(actions 1-{shown[0][0] - 1} left out for length)")
    return "\n".join(lines)


def _merge_lines(old: dict[str, str], name: str, new: Iterable[str], cap: int) -> str:
    previous = [
        line.removeprefix("- ").strip()
        for line in old.get(name, "").splitlines()
        if line.strip() and line.strip() not in ("None.", _NOT_EXTRACTED)
    ]
    merged = _unique([*previous, *new])[-cap:]
    return _bullets(merged) or "None."


def _bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def _unique(items: Iterable[str]) -> list[str]:
    """Keep the last occurrence of each item, in order of last appearance."""
    last: dict[str, None] = {}
    for item in items:
        last.pop(item, None)
        last[item] = None
    return list(last)
