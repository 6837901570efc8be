"""OpenHands (classic CodeAct agent, openhands-ai 0.4x-0.62) as a gateway records it.

Shapes follow openhands-ai 0.62.0 (CodeAct tools, ``memory/conversation_memory.py``,
``events/observation/commands.py``, ``runtime/utils/bash.py``) and openhands-aci 0.3.2 (the
``str_replace_editor`` implementation); see ``docs/tool-formats/openhands.md``.

* shell -> ``execute_bash``; the result is the terminal text followed by the trailer
  ``[The command completed with exit code N.]`` / ``[Current working directory: ...]`` /
  ``[Python interpreter: ...]`` / ``[Command finished with exit code N]``.
* read / write / edit -> ``str_replace_editor`` view / create / str_replace.
* content search and file-name search -> ``grep`` / ``find`` through ``execute_bash``
  (CodeAct has no search tool).
* web fetch -> the default MCP ``fetch`` tool; the tool message is the JSON dump of the MCP
  ``CallToolResult``.
* plan -> ``task_tracker`` (command ``plan``).
"""

from __future__ import annotations

import json
import shlex
import zlib
from typing import Any

from bench.retention.events import (
    Act,
    Edit,
    Event,
    Fetch,
    FindFiles,
    Ids,
    Plan,
    Read,
    Search,
    Shell,
    Write,
)

# Interpreter path printed by the OpenHands docker runtime (seen in public trajectories).
PY_INTERPRETER = "/openhands/poetry/openhands-ai-5O4_aCHf-py3.12/bin/python"
MAX_CMD_OUTPUT_SIZE = 30_000  # CmdOutputObservation truncation (commands.py)
MAX_MESSAGE_CHARS = 30_000  # LLMConfig.max_message_chars default (truncate_content)
HISTORY_LIMIT = 10_000  # tmux scroll-back lines kept by BashSession
NO_CHANGE_TIMEOUT_SECONDS = 10  # NO_CHANGE_TIMEOUT_SECONDS default in the action server
EDITOR_MAX_CHARS = 16_000  # openhands_aci MAX_RESPONSE_LEN_CHAR
FETCH_MAX_LENGTH = 5_000  # mcp-server-fetch default max_length
TRUNCATION_NOTE = "\n[... Observation truncated due to length ...]\n"
TIMEOUT_MESSAGE = (
    "You may wait longer to see additional output by sending empty command '', "
    "send other commands to interact with the current process, "
    'send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending '
    "your new command, or use the timeout parameter in execute_bash for future commands."
)
FILE_CLIPPED_NOTICE = (
    "<response clipped><NOTE>Due to the max output limit, only part of this file has been "
    "shown to you. You should retry this tool after you have searched inside the file with "
    "`grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
)
EDIT_TRAILER = (
    "Review the changes and make sure they are as expected. Edit the file again if necessary."
)
SESSION_ID = "5d1e9b7c3a2f4e08b6c4d2a0f8e6b4c1"
TASK_STATUS = {"pending": "todo", "in_progress": "in_progress", "completed": "done"}


def _middle_truncate(text: str, limit: int) -> str:
    """Keep the head and the tail, as CmdOutputObservation and truncate_content do."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + TRUNCATION_NOTE + text[-half:]


def _number(snippet: str, start: int) -> str:
    """openhands-aci ``_make_output`` numbering: width-6 line number, a tab, the line."""
    if len(snippet) > EDITOR_MAX_CHARS:  # clipped before numbering, so the notice ends a line
        snippet = snippet[:EDITOR_MAX_CHARS] + FILE_CLIPPED_NOTICE
    return "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(snippet.split("\n")))


def _shell_result(output: str, exit_code: int, cwd: str) -> str:
    """The tool message of one execute_bash call (CmdOutputObservation.to_agent_observation)."""
    content = output.rstrip()  # BashSession strips trailing whitespace
    if exit_code == -1:  # soft timeout: no PS1 metadata, so no cwd / exit-code lines
        content = _middle_truncate(content, MAX_CMD_OUTPUT_SIZE)
        suffix = (
            f"\n[The command has no new output after {NO_CHANGE_TIMEOUT_SECONDS} seconds. "
            f"{TIMEOUT_MESSAGE}]"
        )
        return _middle_truncate(content + suffix, MAX_MESSAGE_CHARS)
    prefix = ""
    lines = content.split("\n")
    if len(lines) > HISTORY_LIMIT:  # the first prompt scrolled out of the tmux history
        lines = lines[-HISTORY_LIMIT:]
        content = "\n".join(lines)
        prefix = (
            "[Previous command outputs are truncated. "
            f"Showing the last {len(lines)} lines of the output below.]\n"
        )
    content = _middle_truncate(content, MAX_CMD_OUTPUT_SIZE)
    text = (
        f"{prefix}{content}\n[The command completed with exit code {exit_code}.]"
        f"\n[Current working directory: {cwd}]"
        f"\n[Python interpreter: {PY_INTERPRETER}]"
        f"\n[Command finished with exit code {exit_code}]"
    )
    return _middle_truncate(text, MAX_MESSAGE_CHARS)


def _bash(command: str, risk: str = "MEDIUM") -> tuple[str, dict[str, Any]]:
    return "execute_bash", {"command": command, "security_risk": risk}


def _find_command(pattern: str) -> str:
    bare = pattern[3:] if pattern.startswith("**/") else pattern
    if "/" not in bare:
        return f"find . -type f -name {shlex.quote(bare)}"
    return f"find . -type f -path {shlex.quote('./' + pattern.replace('**/', '*/'))}"


def _read_result(event: Read) -> tuple[dict[str, Any], str]:
    args: dict[str, Any] = {"command": "view", "path": event.path}
    lines = event.content.splitlines()
    if event.offset is None or not lines:
        body = _number(event.content, 1)
    else:
        args["view_range"] = [event.offset, event.offset + len(lines) - 1]
        body = _number("\n".join(lines), event.offset)
    args["security_risk"] = "LOW"
    return args, f"Here's the result of running `cat -n` on {event.path}:\n{body}\n"


def _edit_result(event: Edit) -> str:
    # The real snippet shows 4 lines of context around the edit; the event does not carry
    # the file, so the new text is shown alone, numbered from a stable pseudo line number.
    start = 1 + zlib.crc32(f"{event.path}\0{event.old}".encode()) % 150
    snippet = _number(event.new + "\n", start)  # a trailing newline yields an empty numbered line
    return (
        f"The file {event.path} has been edited. Here's the result of running `cat -n` on a "
        f"snippet of {event.path}:\n{snippet}\n{EDIT_TRAILER}"
    )


def _fetch_result(event: Fetch) -> str:
    content = event.content[:FETCH_MAX_LENGTH]
    if len(event.content) > FETCH_MAX_LENGTH:
        content += (
            "\n\n<error>Content truncated. Call the fetch tool with a start_index of "
            f"{FETCH_MAX_LENGTH} to get more content.</error>"
        )
    result = {
        "meta": None,
        "content": [
            {
                "type": "text",
                "text": f"Contents of {event.url}:\n{content}",
                "annotations": None,
                "meta": None,
            }
        ],
        "structuredContent": None,
        "isError": False,
    }
    return _middle_truncate(json.dumps(result), MAX_MESSAGE_CHARS)


def _call(event: Event) -> tuple[str, dict[str, Any], str]:
    """(tool name, arguments, tool message content) for one event."""
    if isinstance(event, Shell):
        name, args = _bash(event.command)
        return name, args, _shell_result(event.output, event.exit_code, event.cwd)
    if isinstance(event, Read):
        args, result = _read_result(event)
        return "str_replace_editor", args, result
    if isinstance(event, Write):
        args = {
            "command": "create",
            "path": event.path,
            "file_text": event.content,
            "security_risk": "MEDIUM",
        }
        return "str_replace_editor", args, f"File created successfully at: {event.path}"
    if isinstance(event, Edit):
        args = {
            "command": "str_replace",
            "path": event.path,
            "old_str": event.old,
            "new_str": event.new,
            "security_risk": "MEDIUM",
        }
        return "str_replace_editor", args, _edit_result(event)
    if isinstance(event, Search):
        command = f"grep -rn {shlex.quote(event.pattern)} {shlex.quote(event.path or '.')}"
        name, args = _bash(command, "LOW")
        code = 0 if event.matches else 1  # grep exits 1 when nothing matched
        return name, args, _shell_result("\n".join(event.matches), code, "/workspace")
    if isinstance(event, FindFiles):
        name, args = _bash(_find_command(event.pattern), "LOW")
        return name, args, _shell_result("\n".join(event.files), 0, "/workspace")
    if isinstance(event, Fetch):
        return "fetch", {"url": event.url}, _fetch_result(event)
    if isinstance(event, Plan):
        tasks = [
            {"id": str(i), "title": title, "status": TASK_STATUS.get(status, "todo")}
            for i, (title, status) in enumerate(event.items, 1)
        ]
        result = (
            f"Task list has been updated with {len(tasks)} items. "
            f"Stored in session directory: sessions/{SESSION_ID}/TASKS.md"
        )
        return "task_tracker", {"command": "plan", "task_list": tasks}, result
    raise TypeError(f"unknown event {event!r}")


class OpenHandsRenderer:
    """Classic CodeAct tool names (execute_bash / str_replace_editor), Anthropic-style ids."""

    name = "openhands"

    def system_prompt(self) -> str:
        return (
            "You are OpenHands, an AI agent that works on a computer to complete the user's "
            "software tasks.\n"
            "Work inside /workspace. Prefer small, careful steps: explore the code, reproduce "
            "the problem, fix it, then verify the fix by running tests.\n"
            "Use execute_bash for shell commands (one command per call; chain with && if "
            "needed) and str_replace_editor to view, create and edit files with absolute "
            "paths.\n"
            "Keep long-running processes in the background and redirect their output to a "
            "log file.\n"
            "When the task is done, summarise what you changed and call finish."
        )

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        if not ids.taken and ids.prefix == "call_":
            ids.prefix = "toolu_01"  # OpenHands mostly runs Claude through LiteLLM
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for event in turn.events:
            name, args, content = _call(event)
            call_id = ids.next()
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": content})
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": turn.thought,
            "tool_calls": calls,
        }
        return [assistant, *results]


RENDERER = OpenHandsRenderer()
