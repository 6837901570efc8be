"""Codex CLI (openai/codex, ``codex-rs``) as a gateway stores its sessions in chat format.

Two session styles, both taken from the Rust sources (see docs/tool-formats/codex.md):

* ``RENDERER`` (default): the argv ``shell`` tool (``{"command": ["bash", "-lc", ...],
  "workdir": ...}``) whose result is the JSON envelope
  ``{"output": ..., "metadata": {"exit_code": N, "duration_seconds": F}}``, with the older
  head/tail truncation (10 KiB / 256 lines, ``[... omitted N of M lines ...]``); edits go
  through the JSON-function ``apply_patch`` (``{"input": "*** Begin Patch ..."}``).
* ``RENDERER_TEXT``: the ``shell_command`` tool (string command) whose result is the text form
  ``Exit code: N\\nWall time: F seconds\\nOutput:\\n...``, truncated in the middle at the
  10 000-token policy (``…N tokens truncated…`` plus a ``Total output lines:`` header); edits go
  through the freeform ``apply_patch`` whose raw patch text is the call's ``arguments``.

Codex has no file-read, grep, glob or fetch tool in its default set: the model reads with
``sed -n``/``cat``, searches with ``rg``, lists with ``rg --files`` and fetches with ``curl``
through the shell tool, so those events are rendered as shell calls.
"""

from __future__ import annotations

import json
import shlex
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

# Old (JSON-envelope era) model formatting limits: 10 KiB and 256 lines, head/tail halves.
_MAX_BYTES = 10 * 1024
_MAX_LINES = 256
_HEAD_LINES = _MAX_LINES // 2
_TAIL_LINES = _MAX_LINES - _HEAD_LINES
_HEAD_BYTES = _MAX_BYTES // 2
# Newer models: TruncationPolicy::Tokens(10_000), about 4 bytes per token.
_TOKEN_LIMIT = 10_000
_BYTES_PER_TOKEN = 4
_WORKDIR = "/workspace"


def _wall_time(output: str) -> float:
    """A deterministic stand-in for the measured duration, rounded to 0.1 s like Codex."""
    return round(0.1 + len(output) / 400_000, 1)


def _rust_f32(value: float) -> str:
    """How Rust's Display prints the rounded f32 (``0``, ``0.3``, ``12``)."""
    return str(int(value)) if value == int(value) else repr(value)


def _take_prefix(text: str, budget: int) -> str:
    data = text.encode()[:budget]
    return data.decode("utf-8", errors="ignore")


def _take_suffix(text: str, budget: int) -> str:
    data = text.encode()
    data = data[len(data) - budget :] if budget < len(data) else data
    return data.decode("utf-8", errors="ignore")


def _truncate_head_tail(content: str) -> str:
    """Head+tail truncation of the JSON-envelope era (``format_output_for_model_body``)."""
    total_lines = len(content.splitlines())
    if len(content.encode()) <= _MAX_BYTES and total_lines <= _MAX_LINES:
        return content
    if len(content.encode()) > _MAX_BYTES:
        # Too many bytes: byte-based head and tail around a fixed marker.
        marker = f"\n[... output truncated to fit {_MAX_BYTES} bytes ...]\n\n"
        head, tail = content, content
    else:
        # Too many lines: keep 128 lines at each end.
        segments = content.splitlines(keepends=True)
        head_take = min(_HEAD_LINES, len(segments))
        tail_take = min(_TAIL_LINES, len(segments) - head_take)
        omitted = len(segments) - head_take - tail_take
        head = "".join(segments[:head_take])
        tail = "".join(segments[len(segments) - tail_take :]) if tail_take else ""
        marker = f"\n[... omitted {omitted} of {total_lines} lines ...]\n\n" if omitted else ""
    result = _take_prefix(head, min(_HEAD_BYTES, _MAX_BYTES - len(marker))) + marker
    remaining = _MAX_BYTES - len(result.encode())
    if remaining > 0:
        result += _take_suffix(tail, remaining)
    return f"Total output lines: {total_lines}\n\n{result}"


def _truncate_middle_tokens(content: str) -> str:
    """``truncate_middle_with_token_budget``: keep both ends, mark the removed middle inline."""
    data = content.encode()
    max_bytes = _TOKEN_LIMIT * _BYTES_PER_TOKEN
    if len(data) <= max_bytes:
        return content
    left = max_bytes // 2
    right = max_bytes - left
    removed_tokens = -(-(len(data) - max_bytes) // _BYTES_PER_TOKEN)
    marker = f"…{removed_tokens} tokens truncated…"
    return _take_prefix(content, left) + marker + _take_suffix(content, right)


class CodexRenderer:
    """Renders Acts the way Codex CLI records them; ``text=True`` selects the newer tool set."""

    name: str = "codex"

    def __init__(self, text: bool = False) -> None:
        self.text = text

    def system_prompt(self) -> str:
        return (
            "You are Codex, a coding agent running in the Codex CLI on the user's computer.\n"
            "Work in the shared workspace: inspect files with the shell, prefer `rg` and "
            "`rg --files` for searching.\n"
            "Edit files with the apply_patch tool; keep changes small and focused.\n"
            "Always set `workdir` on shell calls instead of using `cd`.\n"
            "Use update_plan for multi-step work and keep exactly one step in_progress.\n"
            "Finish with a concise summary of what changed and how you verified it."
        )

    # -- envelopes -------------------------------------------------------------------------

    def _exec_result(self, output: str, exit_code: int) -> str:
        seconds = _wall_time(output)
        if self.text:
            body = _truncate_middle_tokens(output)
            sections = [f"Exit code: {exit_code}", f"Wall time: {_rust_f32(seconds)} seconds"]
            total_lines = len(output.splitlines())
            if total_lines != len(body.splitlines()):
                sections.append(f"Total output lines: {total_lines}")
            sections += ["Output:", body]
            return "\n".join(sections)
        payload = {
            "output": _truncate_head_tail(output),
            "metadata": {"exit_code": exit_code, "duration_seconds": seconds},
        }
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))

    def _shell_call(self, script: str, cwd: str = _WORKDIR) -> tuple[str, str]:
        if self.text:
            return "shell_command", json.dumps({"command": script, "workdir": cwd})
        argv = ["bash", "-lc", script]
        return "shell", json.dumps({"command": argv, "workdir": cwd})

    # -- apply_patch -------------------------------------------------------------------------

    @staticmethod
    def _rel(path: str) -> str:
        prefix = _WORKDIR.rstrip("/") + "/"
        return path[len(prefix) :] if path.startswith(prefix) else path

    def _patch_call(self, patch: str) -> tuple[str, str]:
        if self.text:
            return "apply_patch", patch  # freeform tool: the raw patch is the whole input
        return "apply_patch", json.dumps({"input": patch})

    def _patch_result(self, marker: str, path: str) -> str:
        summary = f"Success. Updated the following files:\n{marker} {self._rel(path)}\n"
        if self.text:
            return f"Exit code: 0\nWall time: 0 seconds\nOutput:\n{summary}"
        payload = {"output": summary, "metadata": {"exit_code": 0, "duration_seconds": 0.0}}
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))

    def _write(self, event: Write) -> tuple[str, str, str]:
        lines = [f"+{line}" for line in event.content.splitlines()]
        patch = "\n".join(
            ["*** Begin Patch", f"*** Add File: {self._rel(event.path)}", *lines, "*** End Patch"]
        )
        name, args = self._patch_call(patch)
        return name, args, self._patch_result("A", event.path)

    def _edit(self, event: Edit) -> tuple[str, str, str]:
        old = [f"-{line}" for line in event.old.splitlines()]
        new = [f"+{line}" for line in event.new.splitlines()]
        patch = "\n".join(
            [
                "*** Begin Patch",
                f"*** Update File: {self._rel(event.path)}",
                "@@",
                *old,
                *new,
                "*** End Patch",
            ]
        )
        name, args = self._patch_call(patch)
        return name, args, self._patch_result("M", event.path)

    # -- events ----------------------------------------------------------------------------

    def _event(self, event: Event) -> tuple[str, str, str]:
        """(tool name, arguments string, tool message content) for one event."""
        if isinstance(event, Shell):
            name, args = self._shell_call(event.command, event.cwd)
            return name, args, self._exec_result(event.output, event.exit_code)
        if isinstance(event, Read):
            quoted = shlex.quote(event.path)
            if event.offset is None:
                script = f"cat {quoted}"
            else:
                last = event.offset + max(len(event.content.splitlines()), 1) - 1
                script = f"sed -n '{event.offset},{last}p' {quoted}"
            name, args = self._shell_call(script)
            return name, args, self._exec_result(event.content, 0)
        if isinstance(event, Write):
            return self._write(event)
        if isinstance(event, Edit):
            return self._edit(event)
        if isinstance(event, Search):
            script = f"rg -n {shlex.quote(event.pattern)}"
            if event.path:
                script += f" {shlex.quote(event.path)}"
            output = "".join(f"{match}\n" for match in event.matches)
            name, args = self._shell_call(script)
            return name, args, self._exec_result(output, 0 if event.matches else 1)
        if isinstance(event, FindFiles):
            script = f"rg --files -g {shlex.quote(event.pattern)}"
            output = "".join(f"{path}\n" for path in event.files)
            name, args = self._shell_call(script)
            return name, args, self._exec_result(output, 0 if event.files else 1)
        if isinstance(event, Fetch):
            name, args = self._shell_call(f"curl -sL {shlex.quote(event.url)}")
            return name, args, self._exec_result(event.content, 0)
        if isinstance(event, Plan):
            plan = [{"step": step, "status": status} for step, status in event.items]
            return "update_plan", json.dumps({"plan": plan}), "Plan updated"
        raise TypeError(f"unsupported event: {event!r}")

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        if ids.n == 0:
            ids.prefix = "call_"  # Responses API call_id style
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for event in turn.events:
            name, arguments, content = self._event(event)
            call_id = ids.next()
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": content})
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": turn.thought,
            "tool_calls": calls,
        }
        return [assistant, *results]


RENDERER = CodexRenderer()
RENDERER_TEXT = CodexRenderer(text=True)
