"""The one tool-use reader: every call and its result, read once into a typed record.

Pruning, the LLM prompt, the ledger and the extractive summary all describe tool use; they all
read it from here, so they name the same command, the same files and the same exit code. What a
call asks for is read by ``tool_calls``, what its result says by ``tool_results``, its error
lines by ``errorlines``; this module pairs calls with results and puts the three together.

Records hold the agent's own strings (not redacted, not cut). Everything that leaves the core
goes through ``Shown``, which cuts whole words and redacts before anything is emitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias

from worker.compressor import jsonvalue
from worker.compressor.cuts import first_line, safe_prefix
from worker.compressor.errorlines import ErrorLine, error_lines, may_hold_errors
from worker.compressor.messages import Message, ToolCall, content_text, image_count
from worker.compressor.redact import redact_text
from worker.compressor.tool_calls import (
    CallFacts,
    Kind,
    only_views,
    programs,
    read_call,
    reply_of,
)
from worker.compressor.tool_results import ResultFacts, read_result

_RUNS: frozenset[Kind] = frozenset({"shell", "code"})
_WRITES: frozenset[Kind] = frozenset({"write", "edit"})
# How much of a command line and of an error line is shown, everywhere it is shown (so the
# one-liner, the ledger and the extractive summary quote the same words).
COMMAND_CHARS = 200
ERROR_CHARS = 400
PATH_CHARS = 100


class ToolUse(NamedTuple):  # two per call are built while reading: a tuple is cheaper
    """One tool call and what came back."""

    call: ToolCall
    facts: CallFacts
    args: Mapping[str, Any]  # the arguments parsed; {} when they are not a JSON object
    call_index: int  # the assistant message that made the call
    result_index: int | None  # the tool message that answered it (None: no result)
    result: ResultFacts | None
    errors: tuple[ErrorLine, ...]  # in the result's body, specific ones first
    output_chars: int
    images: int

    @property
    def kind(self) -> Kind:
        return self.facts.kind

    @property
    def command(self) -> str | None:
        return self.facts.command

    @property
    def exit_code(self) -> int | None:
        return self.result.exit_code if self.result else None

    @property
    def failed(self) -> bool:
        """The tool reported a failure (an exit code other than 0, an error, a timeout)."""
        return self.result is not None and self.result.failed

    @property
    def written(self) -> tuple[str, ...]:
        """Files this use wrote or edited: none when the tool reported a failure (a refused
        write, an edit whose old text was not found)."""
        return () if self.failed else self.facts.written

    @property
    def reply(self) -> str | None:
        """What a command's exit status answers when it is a reply, not a failure ("no
        matches": grep, rg and ``git grep`` exiting 1; "they differ": diff; "false": test)."""
        if self.facts.kind != "shell" or not self.facts.command or self.result is None:
            return None
        body = self.result.body
        return reply_of(
            self.facts.command, self.result.exit_code, silent=not body or body.isspace()
        )

    @property
    def first_error(self) -> str | None:
        return self.errors[0].text if self.errors else None

    @property
    def body(self) -> str:
        return self.result.body if self.result else ""


@dataclass(frozen=True, slots=True)
class Reading:
    """Every tool use of a transcript, in call order, and where each sits."""

    uses: tuple[ToolUse, ...]
    by_result: Mapping[int, ToolUse]  # tool message index -> its use
    by_call: Mapping[int, ToolUse]  # id() of the ToolCall object -> its use

    def use_of(self, call: ToolCall) -> ToolUse | None:
        return self.by_call.get(id(call))

    def calls_in(self, index: int, msg: Message) -> list[ToolUse]:
        """The uses of the calls that message ``index`` makes."""
        return [u for c in msg.tool_calls if (u := self.by_call.get(id(c))) is not None]


def read_tool_uses(msgs: Sequence[Message], *, errors_before: int | None = None) -> Reading:
    """Read every call and its result. ``errors_before``: scan outputs for error lines only
    in results before this index (the verbatim tail needs its exit codes, not its errors)."""
    limit = len(msgs) if errors_before is None else errors_before
    parse = _ArgumentCache()
    pending: dict[str, tuple[int, ToolCall]] = {}
    uses: dict[int, ToolUse] = {}  # id(call) -> use, in call order
    by_result: dict[int, ToolUse] = {}
    for i, msg in enumerate(msgs):
        if msg.tool_calls:
            for call in msg.tool_calls:
                pending[call.id] = (i, call)
                uses[id(call)] = _unanswered(call, i, parse, light=i >= limit)
        elif msg.role == "tool" and msg.tool_call_id in pending:
            # A result answers the newest call before it with its id: ids are only unique
            # within one turn for providers that number every turn's calls afresh.
            _, call = pending[msg.tool_call_id]
            use = _answered(uses[id(call)], i, msg, scan=i < limit)
            uses[id(call)] = by_result[i] = use
    ordered = tuple(uses.values())
    return Reading(ordered, by_result, uses)


# What a later success fixes: a command run again (the same text: a heredoc's command runs to
# kilobytes, and agents rerun by repeating it), or a file a failed write or edit set out to
# change and a later use wrote.
Attempt: TypeAlias = tuple[Literal["run", "file"], str]


def later_successes(uses: Sequence[ToolUse]) -> dict[Attempt, int]:
    """For each command and each file written, the last call index where it succeeded (the
    command ran without a failure or an error line; the file was written)."""
    passed: dict[Attempt, int] = {}
    for use in uses:
        if use.result is None or use.failed:
            continue
        if use.command and not use.errors:
            passed["run", use.command] = use.call_index
        for path in use.written:
            passed["file", path] = use.call_index
    return passed


def fixed_later(use: ToolUse, passed: Mapping[Attempt, int]) -> bool:
    """What ``use`` attempted succeeded after it (``passed``: from ``later_successes``): its
    command ran again without failing, or a file a failed write or edit was to change was
    written."""
    if use.command is not None:
        return passed.get(("run", use.command), -1) > use.call_index
    if use.kind in _WRITES:
        return any(passed.get(("file", p), -1) > use.call_index for p in use.facts.written)
    return False


def _unanswered(call: ToolCall, index: int, parse: _ArgumentCache, *, light: bool) -> ToolUse:
    args, facts = parse.facts(call.name, call.arguments, light=light)
    return ToolUse(call, facts, args, index, None, None, (), 0, 0)


def _answered(use: ToolUse, index: int, msg: Message, *, scan: bool) -> ToolUse:
    content = msg.content
    text = content if type(content) is str else content_text(content)
    result = read_result(text, shell=use.kind in _RUNS)
    if not result.failed and msg.extra.get("is_error") is True:
        # The provider's own flag (Anthropic's tool_result ``is_error``), beside the text.
        result = result._replace(failed=True, error=result.error or first_line(result.body))
    if result.failed and _answers(use.facts, result.exit_code):
        # grep and rg found nothing, diff found a difference, test said false: no failure
        result = ResultFacts(result.body, result.exit_code, False, result.note)
    # Past ``errors_before`` a result is read for whether it failed: by its exit code, or, for a
    # run that reports none, by its error lines (a rerun that failed again fixed nothing).
    scan = scan or (result.exit_code is None and use.kind in _RUNS)
    errors = tuple(_errors_of(use.facts, result)) if scan else ()
    # Code cells, and some agents' shells, report no exit code: an error is how they fail.
    if (
        result.exit_code is None
        and errors
        and use.kind in _RUNS
        and not result.failed
        and any(e.specific for e in errors)
        and not _views_only(use.facts)
    ):
        result = result._replace(failed=True)
    return ToolUse(
        use.call,
        use.facts,
        use.args,
        use.call_index,
        index,
        result,
        errors,
        len(text),
        0 if type(content) is str else image_count(content),
    )


def _errors_of(facts: CallFacts, result: ResultFacts) -> list[ErrorLine]:
    """A command's error lines; a file or web tool's only when it reported a failure (its
    output is a file's content, where "raise ValueError" is code, not an error)."""
    if facts.kind in _RUNS:
        # A command that succeeded is asked only the common signs of an error (a test run
        # piped through ``tail`` exits 0 however it went); one that failed, all of them. A
        # command that only shows something (cat, grep) prints data, not its own errors.
        thorough = result.failed or result.exit_code is None
        if not thorough and not may_hold_errors(result.body, quick=True):
            return []
        if not result.failed and _views_only(facts):
            return []
        ran = programs(facts.command) if result.failed and facts.command else ()
        found = error_lines(result.body, programs=ran)
        if found or not (result.error or result.note):
            return found  # a failed run without an error line: nothing to quote
    elif not result.failed:
        return []
    elif result.error is None:
        found = [e for e in error_lines(result.body) if e.specific]
        if found:
            return found
    line = _first_message_line(result.error or "") or _first_message_line(result.note or "")
    line = line or _first_message_line(result.body)
    return [ErrorLine(line, 0, True)] if line else []


_LABELS = frozenset({"ERROR:", "Error:", "error:", "FAILED", "Failed"})


def _first_message_line(text: str) -> str:
    """The first line of ``text`` that says something (not a bare "ERROR:" label)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and stripped not in _LABELS:
            return stripped
    return ""


def _answers(facts: CallFacts, exit_code: int | None) -> bool:
    """A shell command's exit status is an answer: the deciding program's reply (``pip list |
    grep x`` exiting 1), or 1 from a command that only shows something."""
    if facts.kind != "shell" or not facts.command:
        return False
    if reply_of(facts.command, exit_code) is not None:
        return True
    return exit_code == 1 and _views_only(facts)


def _views_only(facts: CallFacts) -> bool:
    """A shell command that only shows something (``cd x && cat y | grep z``)."""
    return facts.kind == "shell" and not facts.written and only_views(facts.command or "")


class _ArgumentCache:
    """Tool-call arguments parsed once each; the values are shared, so nobody may change them."""

    def __init__(self) -> None:
        self._values: dict[str, Mapping[str, Any]] = {}
        self._facts: dict[tuple[str, str], tuple[Mapping[str, Any], CallFacts]] = {}

    def facts(
        self, name: str, arguments: str, *, light: bool = False
    ) -> tuple[Mapping[str, Any], CallFacts]:
        """A call's parsed arguments and what it asks for (agents repeat calls verbatim).
        ``light``: its kind and command only (a call in the verbatim tail)."""
        key = (name, arguments)
        known = self._facts.get(key)
        if known is None:
            args = self.mapping(arguments)
            facts = read_call(name, arguments, args, light=light)
            if light:
                return args, facts
            known = self._facts[key] = (args, facts)
        return known

    def mapping(self, arguments: str) -> Mapping[str, Any]:
        """The arguments as a mapping; {} when they are not a JSON object."""
        if not arguments or arguments.lstrip()[:1] != "{":
            return {}
        known = self._values.get(arguments)
        if known is not None:
            return known
        try:
            value = jsonvalue.loads(arguments)
        except ValueError:
            value = {}
        value = value if isinstance(value, dict) else {}
        self._values[arguments] = value
        return value


# ---------------------------------------------------------------------------------------------
# How tool use is shown: the same words in one-liners, the prompt, the ledger and the summary


class Shown:
    """Cut renderings of tool use, redacted piece by piece; one per compaction (it caches
    redactions). ``redacting=False`` leaves redaction to a caller that redacts what it builds
    as a whole (fewer, larger passes); every cut here keeps whole words, so that stays safe."""

    __slots__ = ("_memo", "redacting", "redactions")

    def __init__(self, *, redacting: bool = True) -> None:
        self._memo: dict[str, str] = {}
        self.redactions = 0  # secrets replaced in what was shown
        self.redacting = redacting

    def redact(self, text: str) -> str:
        if not self.redacting:
            return text
        clean = self._memo.get(text)
        if clean is None:
            red = redact_text(text)
            clean = self._memo[text] = red.text
            self.redactions += red.count
        return clean

    def text(self, value: str, limit: int) -> str:
        """The first line of ``value`` as written (its spacing kept), redacted before it is cut
        to ``limit`` characters; "…" marks a cut or a line that follows."""
        start = len(value) - len(value.lstrip()) if value[:1].isspace() else 0
        end = value.find("\n", start)
        more = end >= 0 and not value[end:].isspace()
        line = value[start : end if end >= 0 else start + limit * 4][: limit * 4].rstrip()
        line = self.redact(line)
        if len(line) > limit:
            return safe_prefix(line, limit - 1).rstrip() + "…"
        return f"{line} …" if more else line

    def command(self, use: ToolUse, limit: int = COMMAND_CHARS) -> str | None:
        return self.text(use.command, limit) if use.command else None

    def error(self, use: ToolUse, limit: int = ERROR_CHARS) -> str | None:
        return self.text(use.first_error, limit) if use.first_error else None

    def attempt(self, use: ToolUse) -> str | None:
        """What a call set out to do, as a failure names it: its command in backticks, or a
        write's or an edit's tool and files (``apply_patch web/index.js``); None otherwise."""
        command = self.command(use)
        if command:
            return f"`{command}`"
        if use.kind in _WRITES and use.facts.paths:
            return f"{use.call.name} {self._paths(use.facts.paths)}"
        return None

    def failure(self, use: ToolUse) -> str:
        """A failure in one line, as the ledger and the summary give it: the attempt, its exit
        code, its first error line (``apply_patch web/index.js → exit 1: Failed to find ...``)."""
        error = self.error(use)
        attempt = self.attempt(use)
        if attempt is None:
            return f"{use.call.name}: {error or 'failed'}"
        code = f" → exit {use.exit_code}" if use.exit_code is not None else ""
        return f"{attempt}{code}" + (f": {error}" if error else "")

    def outcome(self, use: ToolUse) -> str:
        """``exit 1, 212 lines, error: "E   assert 1 == 2"`` (what came back)."""
        if use.result is None:
            return "no result recorded"
        lines = _line_count(use.body)
        size = f"{lines} line{'s' * (lines != 1)}"
        parts = [f"exit {use.exit_code}"] if use.exit_code is not None else []
        reply = use.reply
        if reply is not None:
            parts.append(reply)  # what the exit status answered: it came back empty-handed
        if reply != "no matches" or lines > 1:
            parts.append(size)
        if use.result.note and use.exit_code is None:
            parts.append(self.text(use.result.note, 80))
        error = self.error(use)
        if error and (use.failed or use.kind in _RUNS):
            parts.append(f'error: "{error}"')
        return ", ".join(parts)

    def action(self, use: ToolUse) -> str:
        """What the call did and how it ended, e.g. ``ran `pytest -x` -> exit 1, 212 lines``."""
        facts = use.facts
        if facts.kind in _RUNS and use.command:
            verb = "ran" if facts.kind == "shell" else "ran code"
            verb = "searched" if use.reply == "no matches" else verb
            return f"{verb} `{self.command(use)}` -> {self.outcome(use)}"
        if facts.kind in _WRITES and facts.paths:
            verb = "wrote" if facts.kind == "write" else "edited"
            verb = f"tried to {facts.kind}" if use.failed else verb  # it changed nothing
            return f"{verb} {self._paths(facts.paths)} -> {self._answer(use)}"
        if facts.kind == "read" and facts.paths:
            return f"read {self._paths(facts.paths)}{_from_line(use.args)} -> {self._answer(use)}"
        if facts.kind == "search" and (facts.query or facts.paths):
            what = f"'{self.text(facts.query, 60)}'" if facts.query else "files"
            where = f" in {self._paths(facts.paths)}" if facts.paths else ""
            return f"searched for {what}{where} -> {self._answer(use)}"
        if facts.url:
            return f"fetched {self.text(facts.url, 100)} -> {self._answer(use)}"
        shown = [
            f"{k}={self.text(str(v), 40)}" for k, v in list(use.args.items())[:2] if _scalar(v)
        ]
        called = f"called with {', '.join(shown)}" if shown else "called"
        answer = self.outcome(use) if facts.kind in _RUNS else self._answer(use)
        return f"{called} -> {answer}"

    def one_liner(self, use: ToolUse) -> str:
        """``[bash] ran `pytest -x` -> exit 1, 212 lines, error: "E   assert 1 == 2"``."""
        line = f"[{use.call.name}] {self.action(use)}"
        return f"{line} (+{use.images} image{'s' * (use.images != 1)})" if use.images else line

    def _paths(self, paths: Sequence[str]) -> str:
        shown = ", ".join(self.text(p, PATH_CHARS) for p in paths[:3])
        return shown + (f" (+{len(paths) - 3} more)" if len(paths) > 3 else "")

    def _answer(self, use: ToolUse) -> str:
        """A file or web tool's answer: its error when it failed, else its size."""
        if use.result is None:
            return "no result recorded"
        if use.failed:
            error = self.error(use) or "failed"
            code = f"exit {use.exit_code}, " if use.exit_code is not None else ""
            return f'{code}failed: "{error}"'
        if use.kind in _WRITES:
            return self.text(first_line(use.body) or "(no output)", 80)
        lines = _line_count(use.body)
        return f"{lines} line{'s' * (lines != 1)}, {use.output_chars:,} chars"


def _line_count(text: str) -> int:
    """Lines of ``text`` without its leading and trailing line breaks (read without a copy)."""
    start, end = 0, len(text)
    while start < end and text[start] == "\n":
        start += 1
    while end > start and text[end - 1] == "\n":
        end -= 1
    return text.count("\n", start, end) + 1 if end > start else 0


def _from_line(args: Mapping[str, Any]) -> str:
    for key in ("offset", "start_line", "line", "view_range", "start"):
        value = args.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return f" from line {value}"
        if isinstance(value, list) and value and isinstance(value[0], int):
            return f" from line {value[0]}"
    return ""


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)
