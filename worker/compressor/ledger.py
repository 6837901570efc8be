"""The artifact ledger: exact strings from a summarized window that a summary must not lose.

Summaries paraphrase; agents then re-probe files, re-run commands and rediscover errors. The
ledger is collected deterministically from the window (each entry redacted before it is cut):
files touched, shell commands with their exit codes, error lines, URLs and identifiers. After the
summarizer has written its summary, ``complete_summary`` appends only the entries the summary
left out, so the trail survives whatever the model chose to keep.

Each category is deduplicated (the most recent occurrence wins), capped to its most recent
entries and kept in chronological order, so a 10,000-message window still yields a ledger of a
few hundred tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal, TypeAlias

from worker.compressor import ledger_scan as scan
from worker.compressor.messages import Message, ToolCall, result_texts
from worker.compressor.redact import redact_text

Kind: TypeAlias = Literal["file", "command", "error", "url", "id"]
KINDS: tuple[Kind, ...] = ("file", "command", "error", "url", "id")

HEADING = "## Artifact Ledger"
_INTRO = "Exact names from the summarized turns that the summary above does not mention:"
_ELLIPSIS = "…"
_SHELL_TOOL_WORDS = ("bash", "shell", "terminal", "exec", "command", "cmd", "powershell", "zsh")
_COMMAND_KEYS = ("command", "cmd", "script", "commands")


@dataclass(frozen=True, slots=True)
class LedgerLimits:
    """Caps per category (most recent entries win) and on the length of one entry."""

    files: int = 15
    commands: int = 10
    errors: int = 6
    urls: int = 5
    ids: int = 8
    command_chars: int = 100
    line_chars: int = 140
    total_chars: int = 2_000  # 500-650 tokens (hex ids cost most): the whole rendered ledger

    def cap(self, kind: Kind) -> int:
        return {
            "file": self.files,
            "command": self.commands,
            "error": self.errors,
            "url": self.urls,
            "id": self.ids,
        }[kind]


DEFAULT_LIMITS = LedgerLimits()


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Kind
    text: str  # the exact string to preserve (cut with "…" when it was too long)
    exit_code: int | None = None  # commands only: what the matching tool result reported

    @property
    def needle(self) -> str:
        """What must appear in a summary for this entry to count as kept."""
        return self.text.removesuffix(_ELLIPSIS).rstrip()

    def render(self) -> str:
        if self.kind != "command":
            return f"- {self.kind}: {self.text}"
        status = "" if self.exit_code is None else f" → exit {self.exit_code}"
        return f"- command: `{self.text}`{status}"


@dataclass(frozen=True, slots=True)
class Ledger:
    entries: tuple[Entry, ...] = ()  # grouped by kind in KINDS order, chronological within

    def items(self) -> tuple[str, ...]:
        """Every entry as the exact string to preserve."""
        return tuple(e.text for e in self.entries)

    @property
    def is_empty(self) -> bool:
        return not self.entries

    def of_kind(self, kind: Kind) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.kind == kind)

    def render(self) -> str:
        """The whole ledger as a Markdown section ("" when empty)."""
        return _section(self.entries) if self.entries else ""


def extract_ledger(messages: Sequence[Message], *, limits: LedgerLimits = DEFAULT_LIMITS) -> Ledger:
    """Collect the artifact trail of ``messages``, deterministically; entries come out redacted.

    The scan runs from the newest message back and stops looking for a kind once it holds that
    kind's cap of entries: an older one could not be kept.
    """
    found = _Collector(limits)
    found.rule_out(_absent_kinds(messages))
    scanner = _Scanner(messages)
    for msg in reversed(messages):
        wanted = found.wanted()
        if not wanted:
            break
        for kind, text, code in reversed(scanner.occurrences(msg, wanted)):
            found.add_older(kind, text, code)
    return found.ledger()


_Occurrence: TypeAlias = tuple[Kind, str, int | None]


def _absent_kinds(messages: Sequence[Message]) -> set[Kind]:
    """Kinds that no message can hold, each decided in one look at the whole window.

    Errors, URLs and identifiers are rare; asking every message about them costs more than
    asking the window once (a match in the joined text may span two messages: then every
    message is asked, as without this test).
    """
    texts = [msg.content if type(msg.content) is str else msg.text() for msg in messages]
    texts += [call.arguments for msg in messages if msg.tool_calls for call in msg.tool_calls]
    window = "\n".join(texts)
    tests: tuple[tuple[Kind, Callable[[str], bool]], ...] = (
        ("error", scan.may_hold_errors),
        ("url", scan.may_hold_urls),
        ("id", scan.may_hold_identifiers),
    )
    return {kind for kind, may_hold in tests if not may_hold(window)}


class _Scanner:
    """What each message holds; a tool call's arguments are read once however often they recur."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._results = result_texts(messages)
        # (tool, arguments) -> what they hold, for the kinds wanted when first read; the
        # wanted kinds only ever shrink, so a later reading needs a subset of that.
        self._arguments: dict[tuple[str, str], tuple[list[_Occurrence], str | None]] = {}

    def occurrences(self, msg: Message, wanted: Container[Kind]) -> list[_Occurrence]:
        """What ``msg`` holds of the wanted kinds, in the order it appears."""
        found: list[_Occurrence] = []
        text = msg.text()
        if "error" in wanted and msg.role in ("user", "tool"):
            found += [("error", line, None) for line in scan.error_lines(text)]
        if "file" in wanted and msg.role == "tool":
            found += [("file", path, None) for path in scan.diff_files(text)]
        if "url" in wanted:
            found += [("url", url, None) for url in scan.urls(text)]
        if "id" in wanted:
            found += [("id", ident, None) for ident in scan.identifiers(text)]
        for call in msg.tool_calls:
            found += self._call_occurrences(call, wanted)
        return found

    def _call_occurrences(self, call: ToolCall, wanted: Container[Kind]) -> list[_Occurrence]:
        key = (call.name, call.arguments)
        known = self._arguments.get(key)
        if known is None:
            known = self._arguments[key] = _argument_occurrences(call.name, call.arguments, wanted)
        held, command = known
        found = [item for item in held if item[0] in wanted]
        if command is not None and "command" in wanted:
            result = self._results.get(id(call))
            found.append(("command", command, None if result is None else scan.exit_code(result)))
        return found


def _argument_occurrences(
    tool: str, arguments: str, wanted: Container[Kind]
) -> tuple[list[_Occurrence], str | None]:
    """The files, URLs and identifiers a call's arguments hold, and its shell command if any."""
    found: list[_Occurrence] = []
    value = scan.json_object(arguments) if "file" in wanted or "command" in wanted else None
    if "file" in wanted and value is not None:
        found += [("file", path, None) for path in scan.argument_files(value)]
    if "url" in wanted:
        found += [("url", url, None) for url in scan.urls(arguments)]
    if "id" in wanted:
        found += [("id", ident, None) for ident in scan.identifiers(arguments)]
    command = _shell_command(tool, value) if value is not None else None
    if command is not None and "file" in wanted:
        found += [("file", path, None) for path in scan.shell_written_files(command)]
    return found, command


def complete_summary(summary: str, ledger: Ledger) -> tuple[str, int]:
    """Append the ledger entries the summary does not already contain, and count them.

    Idempotent: every appended entry then appears in the summary, so a second call appends
    nothing. When the summary already ends with a ledger section (a previous pass), new entries
    join that section instead of starting another.
    """
    missing = [e for e in ledger.entries if e.needle not in summary]
    if not missing:
        return summary, 0
    body = summary.rstrip()
    if _ends_with_ledger(body):
        return body + "\n" + "\n".join(e.render() for e in missing), len(missing)
    return f"{body}\n\n{_section(missing)}", len(missing)


def _section(entries: Iterable[Entry]) -> str:
    return "\n".join([HEADING, _INTRO, *(e.render() for e in entries)])


def _ends_with_ledger(summary: str) -> bool:
    at = summary.rfind(HEADING)
    return (
        at >= 0
        and "\n## " not in summary[at + len(HEADING) :]
        and (at == 0 or summary[at - 1] == "\n")
    )


def _shell_command(tool: str, value: Mapping[str, object]) -> str | None:
    """The command string of a shell-like tool call (its arguments parsed), if this is one."""
    name = tool.lower()
    if not any(word in name for word in _SHELL_TOOL_WORDS):
        return None
    for key in _COMMAND_KEYS:
        command = value.get(key)
        if isinstance(command, list) and all(isinstance(c, str) for c in command):
            command = " && ".join(command)
        if isinstance(command, str) and command.strip():
            return command.strip()
    return None


class _Collector:
    """Entries per kind, met newest first: the first occurrence of a text is its latest one."""

    def __init__(self, limits: LedgerLimits) -> None:
        self._limits = limits
        self._caps = {kind: limits.cap(kind) for kind in KINDS}
        self._open = {kind for kind in KINDS if self._caps[kind] > 0}
        self._newest_first: dict[Kind, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self._clean: dict[str, str] = {}  # text -> redacted text: the same item recurs often

    def rule_out(self, kinds: Iterable[Kind]) -> None:
        """Stop looking for ``kinds``: the window holds none of them."""
        self._open.difference_update(kinds)

    def wanted(self) -> AbstractSet[Kind]:
        """The kinds that still have room for an older entry."""
        return self._open

    def add_older(self, kind: Kind, text: str, exit_code: int | None = None) -> None:
        """An occurrence older than every one added before it."""
        if kind not in self._open:
            return
        text = self._clip(kind, text)
        kept = self._newest_first[kind]
        if text and text not in kept:
            kept[text] = Entry(kind, text, exit_code)
            if len(kept) >= self._caps[kind]:
                self._open.discard(kind)

    def ledger(self) -> Ledger:
        kept = {kind: list(reversed(self._newest_first[kind].values())) for kind in KINDS}
        self._fit(kept)
        return Ledger(tuple(entry for kind in KINDS for entry in kept[kind]))

    def _fit(self, kept: dict[Kind, list[Entry]]) -> None:
        """Drop the oldest entry of the fullest category until the rendering fits the budget."""
        size = len(_section(())) + sum(len(e.render()) + 1 for es in kept.values() for e in es)
        while size > self._limits.total_chars:
            fullest = max(KINDS, key=lambda k: (len(kept[k]), -KINDS.index(k)))
            size -= len(kept[fullest].pop(0).render()) + 1

    def _clip(self, kind: Kind, text: str) -> str:
        """The entry as kept: redacted before it is cut, so a cut never splits a secret into
        halves the redactor could no longer recognize (whatever the caller passed in)."""
        if kind == "file":
            text = text.removeprefix("./")
        if kind == "command":
            first, _, rest = text.strip().partition("\n")
            first = " ".join(self._redacted(first).split())
            return _cut(
                first + (f" {_ELLIPSIS}" if rest.strip() else ""), self._limits.command_chars
            )
        return _cut(self._redacted(text.strip()), self._limits.line_chars)

    def _redacted(self, text: str) -> str:
        clean = self._clean.get(text)
        if clean is None:
            clean = self._clean[text] = redact_text(text).text
        return clean


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + _ELLIPSIS
