"""mini-SWE-agent: every action is one ``bash`` call, every result a ``<returncode>`` envelope.

The shape follows the real sessions in ``tests/data/real-transcripts``: the tool is ``bash``
with arguments ``{"command": ...}``; the result is ``<returncode>N</returncode>`` then the
output between ``<output>`` tags, or, for an output of 10,000 characters or more, a warning and
only its first and last 5,000 characters with the count of those elided in between. Assistant
text is the agent's thought, an empty string when it wrote none. Ids look like DeepSeek's
(``call_00_`` and 24 letters and digits).

File tools do not exist for this agent, so the other events become the shell commands it
would type: ``cat``/``sed -n`` for reads, a heredoc for writes, a small Python script for
exact replacements, ``grep -rn``, ``find``, ``curl``.
"""

from __future__ import annotations

import hashlib
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

SYSTEM_PROMPT = (
    "You are a helpful assistant that can interact with a computer shell to solve "
    "programming tasks."
)
# mini-swe-agent's default: outputs this long or longer are shown head and tail only.
MAX_OUTPUT_CHARS = 10_000
HEAD_CHARS = TAIL_CHARS = 5_000
TOO_LONG_WARNING = (
    "<warning>\n"
    "The output of your last command was too long.\n"
    "Please try a different command that produces less output.\n"
    "If you're looking at a file you can try use head, tail or sed to view a smaller number "
    "of lines selectively.\n"
    "If you're using grep or find and it produced too much output, you can use a more "
    "selective search pattern.\n"
    "If you really need to see something from the full command's output, you can redirect "
    "output to a file and then search in that file.\n"
    "</warning>"
)
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def format_result(returncode: int, output: str) -> str:
    """The observation mini-swe-agent hands back for one command."""
    if len(output) < MAX_OUTPUT_CHARS:
        return f"<returncode>{returncode}</returncode>\n<output>\n{output}</output>"
    elided = len(output) - MAX_OUTPUT_CHARS
    return (
        f"<returncode>{returncode}</returncode>\n{TOO_LONG_WARNING}<output_head>\n"
        f"{output[:HEAD_CHARS]}\n</output_head>\n<elided_chars>\n{elided} characters elided\n"
        f"</elided_chars>\n<output_tail>\n{output[-TAIL_CHARS:]}\n</output_tail>"
    )


def call_id(ids: Ids) -> str:
    """A provider-style id, derived from the session's counter (so it is deterministic)."""
    digest = int.from_bytes(hashlib.sha256(ids.next().encode()).digest()[:18], "big")
    chars = []
    for _ in range(24):
        digest, rem = divmod(digest, len(_ALPHABET))
        chars.append(_ALPHABET[rem])
    return "call_00_" + "".join(chars)


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _heredoc(body: str, tag: str = "EOF") -> str:
    return f"<< '{tag}'\n{body.rstrip(chr(10))}\n{tag}"


def as_shell(event: Event) -> tuple[str, str, int]:
    """(command, output, returncode) for any event, as this agent would have run it."""
    if isinstance(event, Shell):
        return event.command, event.output, event.exit_code
    if isinstance(event, Read):
        path = shlex.quote(event.path)
        if event.offset is None:
            return f"cat {path}", _with_newline(event.content), 0
        last = event.offset + max(event.content.count("\n"), 1) - 1
        return f"sed -n '{event.offset},{last}p' {path}", _with_newline(event.content), 0
    if isinstance(event, Write):
        return f"cat > {shlex.quote(event.path)} {_heredoc(event.content)}", "", 0
    if isinstance(event, Edit):
        script = (
            "from pathlib import Path\n"
            f"p = Path({event.path!r})\n"
            "s = p.read_text()\n"
            f"old = {event.old!r}\n"
            f"new = {event.new!r}\n"
            "assert s.count(old) == 1, s.count(old)\n"
            "p.write_text(s.replace(old, new))\n"
            "print('ok')"
        )
        return f"python3 - {_heredoc(script, 'PY')}", "ok\n", 0
    if isinstance(event, Search):
        where = shlex.quote(event.path or ".")
        output = "".join(f"{m}\n" for m in event.matches)
        return f"grep -rn {shlex.quote(event.pattern)} {where}", output, 0 if event.matches else 1
    if isinstance(event, FindFiles):
        name = event.pattern.rsplit("/", 1)[-1]
        output = "".join(f"./{f.removeprefix('./')}\n" for f in event.files)
        return f"find . -name {shlex.quote(name)} -not -path '*/node_modules/*'", output, 0
    if isinstance(event, Fetch):
        return f"curl -sL {shlex.quote(event.url)}", _with_newline(event.content), 0
    if isinstance(event, Plan):
        marks = {"completed": "x", "in_progress": "~", "pending": " "}
        body = "\n".join(f"- [{marks.get(status, ' ')}] {item}" for item, status in event.items)
        return f"cat > /tmp/plan.md {_heredoc(body)}", "", 0
    raise TypeError(f"unknown event {type(event).__name__}")


class MiniSweAgentRenderer:
    name = "mini_swe_agent"

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for event in turn.events:
            command, output, returncode = as_shell(event)
            cid = call_id(ids)
            arguments = json.dumps({"command": command})
            calls.append(
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": "bash", "arguments": arguments},
                }
            )
            results.append(
                {"role": "tool", "content": format_result(returncode, output), "tool_call_id": cid}
            )
        assistant = {"role": "assistant", "content": turn.thought or "", "tool_calls": calls}
        return [assistant, *results]


RENDERER = MiniSweAgentRenderer()
