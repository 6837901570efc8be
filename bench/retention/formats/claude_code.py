"""Claude Code (Anthropic's CLI agent, 2.1.x line) as a gateway stores it in OpenAI chat form.

Shapes re-implemented from the bundled ``cli.js`` of ``@anthropic-ai/claude-code@2.1.100``
(checked against the 2.1.332 native build; citations in docs/tool-formats/claude_code.md):
``Bash`` returns stdout+stderr merged, leading blank lines dropped and the end trimmed, or
``(Bash completed with no output)``; a failing command becomes ``Exit code N`` + output (capped
at 10 000 characters, head and tail kept), except exit 1 of grep/rg/find/diff/test, which is
not an error; outputs over 30 000 characters become a ``<persisted-output>`` block with a 2 KB
preview. ``Read`` numbers lines ``N<TAB>text`` (a trailing newline yields an empty last line);
``Write``/``Edit`` answer with one-line confirmations; ``Grep`` runs in content mode with ``-n``
and cwd-relative paths (250-line head limit, 20 000-character persistence); ``Glob`` lists at
most 100 paths; ``WebFetch`` returns the text given; ``TodoWrite`` a fixed acknowledgement.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shlex
from typing import Any

from bench.retention import events as ev
from bench.retention.events import Act, Event, Ids

CWD = "/workspace"  # project root: where the session started and Bash commands run
SESSION = "5b2f9c1e-7d4a-4c8e-9a61-3e0f8b7d2c54"  # a fixed session id for tool-results paths
BASH_MAX_OUTPUT = 30_000  # BASH_MAX_OUTPUT_LENGTH default (also Bash maxResultSizeChars)
GREP_MAX_RESULT = 20_000  # Grep maxResultSizeChars
ERROR_MAX = 10_000  # failed-tool text above this keeps 5 000 head + 5 000 tail characters
PREVIEW_CHARS = 2_000  # <persisted-output> preview size
GREP_HEAD_LIMIT = 250
GLOB_LIMIT = 100
NOT_ERROR_ON_EXIT_1 = {"grep", "rg", "find", "diff", "test", "["}
NO_OUTPUT = "(Bash completed with no output)"
EMPTY_FILE = (
    "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
)
GLOB_TRUNCATED = "(Results are truncated. Consider using a more specific path or pattern.)"
TODO_ACK = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)
FETCH_PROMPT = "Extract the information on this page that is relevant to the current task."
SYSTEM_PROMPT = (
    "You are Claude Code, Anthropic's command-line coding agent. You help the user with software "
    "engineering work inside their repository: fixing bugs, adding features, explaining code.\n"
    "Use the dedicated tools instead of shell equivalents: Read to view files, Edit and Write to "
    "change them, Grep and Glob to search, Bash only for real commands such as tests and git.\n"
    "Track multi-step work with TodoWrite and mark each item completed as soon as it is done.\n"
    "Always Read a file before editing it, and keep replies short: lead with the result.\n"
    f"Working directory: {CWD}"
)
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|\|")
_DOUBLED = {"run", "set", "get", "put", "stop", "plan", "ship", "split", "drop", "map", "tag"}


def _abs(path: str) -> str:
    return path if path.startswith("/") else posixpath.normpath(posixpath.join(CWD, path))


def _rel(path: str) -> str:
    """Grep and Glob show paths relative to the cwd unless they lie outside it."""
    if not path.startswith("/"):
        return path
    rel = posixpath.relpath(path, CWD)
    return path if rel.startswith("..") else rel


def _numbered(text: str, start: int) -> str:
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(text.split("\n"), start))


def _size(n: int) -> str:
    kb = n / 1024
    if kb < 1:
        return f"{n} bytes"
    value, unit = (kb, "KB") if kb < 1024 else (kb / 1024, "MB")
    text = f"{value:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + unit


def _token(seed: str, length: int = 8) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    raw = hashlib.sha256(seed.encode()).digest()
    return "".join(digits[b % 36] for b in raw[:length])


def _persisted(text: str, total_bytes: int, name: str) -> str:
    """The block that replaces an output too large to inline."""
    cut = text[:PREVIEW_CHARS].rfind("\n")
    preview = text[: cut if cut > PREVIEW_CHARS * 0.5 else PREVIEW_CHARS]
    more = "\n...\n" if len(text) > PREVIEW_CHARS else "\n"
    project = re.sub(r"[^a-zA-Z0-9]", "-", CWD)
    path = f"/root/.claude/projects/{project}/{SESSION}/tool-results/{name}.txt"
    return (
        f"<persisted-output>\nOutput too large ({_size(total_bytes)}). Full output saved to: {path}"
        f"\n\nPreview (first {_size(PREVIEW_CHARS)}):\n{preview}{more}</persisted-output>"
    )


def _capped_error(text: str) -> str:
    if len(text) <= ERROR_MAX:
        return text
    half = ERROR_MAX // 2
    return (
        f"{text[:half]}\n\n... [{len(text) - ERROR_MAX} characters truncated] ...\n\n{text[-half:]}"
    )


def _last_program(command: str) -> str:
    segments = [s for s in _SEGMENT_SPLIT.split(command) if s.strip()]
    words = (segments[-1] if segments else command).split()
    return words[0] if words else ""


def _description(command: str) -> str:
    words = command.split()
    if not words:
        return "Run command"
    head, sub = words[0], words[1] if len(words) > 1 else ""
    if head in {"pytest", "tox", "nox"} or "pytest" in words[:3] or sub == "test":
        return "Run tests"
    if head == "git" and sub:
        return f"Run git {sub}"
    if head in {"ls", "tree"}:
        return "List directory contents"
    if head in {"cat", "head", "tail", "sed"}:
        return "Show file contents"
    return f"Run {head}"


def _gerund(item: str) -> str:
    first, _, rest = item.partition(" ")
    word = first.lower()
    if not word.isalpha():
        return f"Working on: {item}"
    if word in _DOUBLED:
        ing = word + word[-1] + "ing"
    elif word.endswith("e") and not word.endswith(("ee", "ye", "oe")):
        ing = word[:-1] + "ing"
    else:
        ing = word + "ing"
    return " ".join(p for p in (ing.capitalize(), rest) if p)


class ClaudeCodeRenderer:
    name = "claude_code"

    def __init__(self) -> None:
        # Files each session (keyed by its Ids object) has already read or written, so a Write
        # to one of them reports an update instead of a creation.
        self._seen: dict[int, tuple[Ids, set[str]]] = {}

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        if ids.n == 0 and ids.prefix == "call_":
            ids.prefix = "toolu_01"
        entry = self._seen.get(id(ids))
        if entry is None or entry[0] is not ids:
            entry = (ids, set())
            self._seen[id(ids)] = entry
        seen = entry[1]
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for event in turn.events:
            call_id = ids.next()
            tool, args, content = self._one(event, call_id, seen)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(args, ensure_ascii=False)},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": content})
        return [{"role": "assistant", "content": turn.thought, "tool_calls": calls}, *results]

    def _one(self, event: Event, call_id: str, seen: set[str]) -> tuple[str, dict[str, Any], str]:
        if isinstance(event, ev.Shell):
            command = event.command
            if event.cwd.rstrip("/") != CWD:
                command = f"cd {shlex.quote(event.cwd)} && {command}"
            args = {"command": command, "description": _description(event.command)}
            return "Bash", args, self._bash(event, call_id)
        if isinstance(event, ev.Read):
            path = _abs(event.path)
            seen.add(path)
            if event.offset is None:
                body = _numbered(event.content, 1) if event.content else EMPTY_FILE
                return "Read", {"file_path": path}, body
            text = event.content[:-1] if event.content.endswith("\n") else event.content
            lines = len(text.split("\n"))
            read_args: dict[str, Any] = {"file_path": path, "offset": event.offset, "limit": lines}
            return "Read", read_args, _numbered(text, event.offset)
        if isinstance(event, ev.Write):
            path = _abs(event.path)
            existed = path in seen
            seen.add(path)
            body = (
                f"The file {path} has been updated successfully."
                if existed
                else f"File created successfully at: {path}"
            )
            return "Write", {"file_path": path, "content": event.content}, body
        if isinstance(event, ev.Edit):
            path = _abs(event.path)
            seen.add(path)
            args = {"file_path": path, "old_string": event.old, "new_string": event.new}
            return "Edit", args, f"The file {path} has been updated successfully."
        if isinstance(event, ev.Search):
            return self._grep(event, call_id)
        if isinstance(event, ev.FindFiles):
            files = [_rel(f) for f in event.files]
            if not files:
                body = "No files found"
            else:
                body = "\n".join(
                    files[:GLOB_LIMIT] + ([GLOB_TRUNCATED] if len(files) > GLOB_LIMIT else [])
                )
            return "Glob", {"pattern": event.pattern}, body
        if isinstance(event, ev.Fetch):
            return "WebFetch", {"url": event.url, "prompt": FETCH_PROMPT}, event.content
        if isinstance(event, ev.Plan):
            todos = [
                {"content": item, "status": status, "activeForm": _gerund(item)}
                for item, status in event.items
            ]
            return "TodoWrite", {"todos": todos}, TODO_ACK
        raise TypeError(f"unknown event {event!r}")

    def _bash(self, event: ev.Shell, call_id: str) -> str:
        code, output = event.exit_code, event.output
        tolerant = _last_program(event.command) in NOT_ERROR_ON_EXIT_1
        failed = code >= 2 if tolerant else code != 0
        if failed:  # thrown ShellError: "Exit code N", then the (first 30 000 chars of) output
            body = "\n".join(p for p in (f"Exit code {code}", output[:BASH_MAX_OUTPUT]) if p)
            return _capped_error(body.strip())
        text = re.sub(r"^(?:\s*\n)+", "", output).rstrip()
        if len(output) > BASH_MAX_OUTPUT:
            return _persisted(text, len(output.encode()), "b" + _token(call_id))
        return text or NO_OUTPUT

    def _grep(self, event: ev.Search, call_id: str) -> tuple[str, dict[str, Any], str]:
        args: dict[str, Any] = {"pattern": event.pattern}
        if event.path:
            args["path"] = event.path
        args.update({"output_mode": "content", "-n": True})
        lines = []
        for match in event.matches:
            path, sep, rest = match.partition(":")
            lines.append(_rel(path) + sep + rest if sep and path else match)
        if not lines:
            return "Grep", args, "No matches found"
        body = "\n".join(lines[:GREP_HEAD_LIMIT])
        if len(lines) > GREP_HEAD_LIMIT:
            body += f"\n\n[Showing results with pagination = limit: {GREP_HEAD_LIMIT}]"
        if len(body) > GREP_MAX_RESULT:
            body = _persisted(body, len(body.encode()), call_id)
        return "Grep", args, body


RENDERER = ClaudeCodeRenderer()
