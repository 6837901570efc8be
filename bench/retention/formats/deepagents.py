"""LangChain deepagents (SDK 0.7.14+, as run by ``deepagents-code``) as a gateway stores it.

Shapes from the SDK's ``FilesystemMiddleware`` and ``LocalShellBackend`` (citations in
docs/tool-formats/deepagents.md): ``execute`` output with ``[stderr] `` tags, ``<no output>``,
the 100 000-byte cap, an ``Exit code: N`` paragraph when non-zero and the final
``[Command succeeded|failed with exit code N]`` line; ``read_file`` (0-based ``offset``, default
``limit`` 100) as an ``@@ lines A-B of T @@`` header over verbatim lines; ``Updated file P``;
``Successfully replaced 1 instance(s) of the string in 'P'``; literal ``grep`` in content mode;
``glob`` as a Python list repr; ``fetch_url`` as JSON; ``write_todos`` as a Python repr; results
over 80 000 characters (not file tools) become the "Tool result too large" stub. Regex searches
go through ``execute`` with ``rg``, as the grep tool tells the model; an event's output cannot
be split into stdout and stderr, so all of it is rendered as stdout.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import Any

from bench.retention import events as ev
from bench.retention.events import Act, Event, Ids

ROOT = "/workspace"  # LocalShellBackend root_dir: where commands run
MAX_OUTPUT_BYTES = 100_000  # LocalShellBackend(max_output_bytes=100_000)
EVICT_CHARS = 4 * 20_000  # NUM_CHARS_PER_TOKEN * tool_token_limit_before_evict
PREVIEW_LINE_CHARS = 1000  # PREVIEW_LINE_CHAR_LIMIT
READ_DEFAULT_LIMIT = 100
EVICTION_EXCLUDED = {"ls", "glob", "grep", "read_file", "edit_file", "write_file", "delete"}
TRUNCATION_GUIDANCE = "... [results truncated, try being more specific with your parameters]"
EMPTY_FILE = "System reminder: File exists but has empty contents"
READ_TRUNCATION = (
    "[Output was truncated due to size limits. The file content is very large. Consider "
    "reformatting the file to make it easier to navigate. For example, if this is JSON, use "
    "execute(command='jq . {path}') to pretty-print it with line breaks. For other formats, "
    "you can use appropriate formatting tools to split long lines.]"
)
TOO_LARGE = (
    "Tool result too large, the result of this tool call {call_id} was saved in the filesystem "
    "at this path: {path}\n\nYou can read the result from the filesystem by using the read_file "
    "tool, but make sure to only read part of the result at a time.\n\nYou can do this by "
    "specifying an offset and limit in the read_file tool call. For example, to read the first "
    "100 lines, you can use the read_file tool with offset=0 and limit=100.\n\n{note}\n\n"
    "{sample}\n"
)
OMITTED_CAVEAT = (
    "lines of the form `... [N lines truncated] ...` indicate omitted lines in the middle of the "
    "content"
)
CLIPPED_CAVEAT = (
    f"the output contains lines longer than {PREVIEW_LINE_CHARS} characters; this preview shows "
    f"only their first {PREVIEW_LINE_CHARS} characters"
)
_REGEX_SIGNAL = re.compile(r"\||\.\*|\.\+|\\[.wWdDsSbB(){}\[\]|+*?^$]")
_MATCH = re.compile(r"^(.+?):(\d+):(.*)$", re.DOTALL)


def _abs(path: str) -> str:
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(ROOT, path))


def _numbered(lines: list[str], start: int) -> str:
    """``format_content_with_line_numbers``: right-aligned marker, two spaces, the line."""
    width = len(str(start + len(lines) - 1)) if lines else 1
    return "\n".join(f"{start + i:>{width}}  {line}" for i, line in enumerate(lines))


def _evict(content: str, call_id: str) -> str:
    """The large-result stub (``_TOO_LARGE_TOOL_MSG``) with its head/tail preview."""
    lines = content.splitlines()
    clip = [line[:PREVIEW_LINE_CHARS] for line in lines]
    omitted = len(lines) > 10
    shown = lines[:5] + lines[-5:] if omitted else lines
    sample = _numbered(clip, 1)
    if omitted:
        marker = f"... [{len(lines) - 10} lines truncated] ..."
        sample = f"{_numbered(clip[:5], 1)}\n{marker}\n{_numbered(clip[-5:], len(lines) - 4)}"
    note = (
        "Here is a preview " + ("showing the head and tail of" if omitted else "of") + " the result"
    )
    caveats = [OMITTED_CAVEAT] if omitted else []
    if any(len(line) > PREVIEW_LINE_CHARS for line in shown):
        caveats.append(CLIPPED_CAVEAT)
    if caveats:
        note += f" ({'; '.join(caveats)})"
    safe_id = call_id.replace(".", "_").replace("/", "_").replace("\\", "_")
    visible = f"{call_id[:32]}..." if len(call_id) > 32 else call_id
    return TOO_LARGE.format(
        call_id=visible, path=f"/large_tool_results/{safe_id}", note=f"{note}:", sample=sample
    )


def _execute_result(output: str, exit_code: int) -> str:
    """LocalShellBackend.execute output, then FilesystemMiddleware._format_execute_output."""
    text = output or "<no output>"
    truncated = False
    data = text.encode()
    if len(data) > MAX_OUTPUT_BYTES:
        text = data[:MAX_OUTPUT_BYTES].decode("utf-8", errors="ignore")
        text += f"\n\n... Output truncated at {MAX_OUTPUT_BYTES} bytes."
        truncated = True
    if exit_code != 0:
        text = f"{text.rstrip()}\n\nExit code: {exit_code}"
    status = "succeeded" if exit_code == 0 else "failed"
    text += f"\n[Command {status} with exit code {exit_code}]"
    if truncated:
        text += "\n[Output was truncated due to size limits]"
    return text


def _read_result(path: str, content: str, offset: int | None) -> str:
    """``read_file`` since 0.7.14: ``@@ lines A-B of T @@`` header above the verbatim window."""
    start = offset if offset and offset > 0 else 1
    if not content.strip():
        return f"@@ lines {start}-{start} @@\n{EMPTY_FILE}"
    window = "".join(content.splitlines(keepends=True)).replace("\r\n", "\n").replace("\r", "\n")
    rows = window.split("\n")
    if rows[-1] == "":
        rows.pop()
    end = start + len(rows) - 1
    fields = f"lines {start}-{end} of {end}"
    result = f"@@ {fields} @@\n" + "\n".join(rows)
    if len(result) < EVICT_CHARS:
        return result
    notice = READ_TRUNCATION.format(path=path)
    best = ""
    size = len(notice) + 2  # notice, header and body joined by newlines
    for k, row in enumerate(rows, start=1):  # the most whole source lines that fit
        size += len(row) + (1 if k > 1 else 0)
        header = f"@@ lines {start}-{start + k - 1} of {end} | next offset {start + k - 1} | "
        header += "truncated due to size @@"
        if size + len(header) > EVICT_CHARS:
            break
        best = f"{notice}\n{header}\n" + "\n".join(rows[:k])
    if best:
        return best
    first = rows[0]  # not even one line fits: cut it, report how much is shown

    def header_for(shown: int) -> str:
        mid = f"truncated mid-line | {shown} of {len(first)} chars"
        return f"@@ lines {start}-{start} of {end} | {mid} @@"

    shown = max(0, min(len(first), EVICT_CHARS - len(f"{notice}\n{header_for(len(first))}\n")))
    return f"{notice}\n{header_for(shown)}\n{first[:shown]}"


def _cap(text: str) -> str:
    """``truncate_if_too_long`` for a string result (grep)."""
    if len(text) > EVICT_CHARS:
        return text[: EVICT_CHARS - len(TRUNCATION_GUIDANCE) - 1] + "\n" + TRUNCATION_GUIDANCE
    return text


def _path_list(paths: list[str]) -> str:
    """``_format_file_paths``: ``str()`` of the (possibly capped) list, or ``No files found``."""
    if not paths:
        return "No files found"
    budget, used = EVICT_CHARS - len(repr(TRUNCATION_GUIDANCE)) - 2, 0
    for kept, item in enumerate(paths):
        used += len(repr(item)) + 2
        if used > budget:
            return str([*paths[:kept], TRUNCATION_GUIDANCE])
    return str(paths)


def _grep_result(matches: tuple[str, ...]) -> str:
    if not matches:
        return "No matches found"
    parsed = [_MATCH.match(m) for m in matches]
    if all(parsed):
        grouped: dict[str, list[str]] = {}
        for m in filter(None, parsed):
            grouped.setdefault(m.group(1), []).append(f"  {m.group(2)}: {m.group(3)}")
        out: list[str] = []
        for path in sorted(grouped):
            out += [f"{path}:", *grouped[path]]
        return _cap("\n".join(out))
    files = sorted({m.split(":", 1)[0] for m in matches})
    return _cap("\n".join(files))


Call = tuple[str, dict[str, Any], str]  # tool name, arguments, result before eviction


def _read_call(event: ev.Read) -> Call:
    path = _abs(event.path)
    args: dict[str, Any] = {"file_path": path}
    if event.offset is not None and event.offset > 1:
        args["offset"] = event.offset - 1  # read_file's offset is 0-based
    count = len(event.content.splitlines())
    if count > READ_DEFAULT_LIMIT:
        args["limit"] = count
    return "read_file", args, _read_result(path, event.content, event.offset)


def _search_call(event: ev.Search) -> Call:
    if _REGEX_SIGNAL.search(event.pattern):  # grep is literal-only: a regex goes to rg
        command = f"rg -n {shlex.quote(event.pattern)}"
        if event.path:
            command += f" {shlex.quote(event.path)}"
        output = "".join(f"{m}\n" for m in event.matches)
        code = 0 if event.matches else 1
        return "execute", {"command": command}, _execute_result(output, code)
    args: dict[str, Any] = {"pattern": event.pattern}
    if event.path:
        args["path"] = _abs(event.path)
    args["output_mode"] = "content"
    return "grep", args, _grep_result(event.matches)


class DeepAgentsRenderer:
    """Renders Acts the way deepagents (SDK 0.7.14+, local shell backend) records them."""

    name: str = "deepagents"

    def system_prompt(self) -> str:
        return (
            "You are a Deep Agent, a coding assistant working in the user's project at "
            f"{ROOT}.\n"
            "Use the filesystem tools (ls, read_file, write_file, edit_file, glob, grep) with "
            "absolute paths; read a file before you edit it.\n"
            "Run tests, builds and other commands with the execute tool; prefer absolute paths "
            "over cd.\n"
            "grep matches literal text; for regular expressions run rg through execute.\n"
            "Delegate large independent pieces of work to a subagent with the task tool.\n"
            "Keep answers short and say what you verified."
        )

    def _event(self, event: Event) -> Call:
        """(tool name, arguments, tool message content before eviction) for one event."""
        if isinstance(event, ev.Shell):
            command = event.command
            if event.cwd.rstrip("/") != ROOT:
                command = f"cd {shlex.quote(event.cwd)} && {command}"
            return "execute", {"command": command}, _execute_result(event.output, event.exit_code)
        if isinstance(event, ev.Read):
            return _read_call(event)
        if isinstance(event, ev.Write):
            path = _abs(event.path)
            return (
                "write_file",
                {"file_path": path, "content": event.content},
                f"Updated file {path}",
            )
        if isinstance(event, ev.Edit):
            path = _abs(event.path)
            args = {"file_path": path, "old_string": event.old, "new_string": event.new}
            done = f"Successfully replaced 1 instance(s) of the string in '{path}'"
            return "edit_file", args, done
        if isinstance(event, ev.Search):
            return _search_call(event)
        if isinstance(event, ev.FindFiles):
            return "glob", {"pattern": event.pattern}, _path_list(list(event.files))
        if isinstance(event, ev.Fetch):
            payload = {
                "url": event.url,
                "markdown_content": event.content,
                "status_code": 200,
                "content_length": len(event.content),
            }
            return "fetch_url", {"url": event.url}, json.dumps(payload, ensure_ascii=False)
        if isinstance(event, ev.Plan):
            todos = [{"content": item, "status": status} for item, status in event.items]
            return "write_todos", {"todos": todos}, f"Updated todo list to {todos}"
        raise TypeError(f"unsupported event: {event!r}")

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        if ids.n == 0 and ids.prefix == "call_":
            ids.prefix = "toolu_01"  # Anthropic tool_use ids (the default model is Claude)
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for event in turn.events:
            name, args, content = self._event(event)
            call_id = ids.next()
            if name not in EVICTION_EXCLUDED and len(content) > EVICT_CHARS:
                content = _evict(content, call_id)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                }
            )
            results.append(
                {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
            )
        return [{"role": "assistant", "content": turn.thought, "tool_calls": calls}, *results]


RENDERER = DeepAgentsRenderer()
