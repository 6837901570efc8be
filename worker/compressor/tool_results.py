"""What a tool result says, without the envelope its agent wrapped it in.

Agents report a command's outcome in their own envelopes: mini-SWE-agent's
``<returncode>1</returncode><output>…</output>``, Hermes' JSON ``{"output", "exit_code",
"error"}``, Codex's ``{"output", "metadata": {"exit_code"}}`` or its ``Exit code: 1 / Wall time /
Output:`` header, OpenHands' ``[The command completed with exit code 1.]`` trailer, deepagents'
``[Command failed with exit code 1]``, Claude Code's ``Exit code 1`` first line. Each is read
here, once, into the body (JSON decoded, so an escaped ``\\n`` is a line break again), the exit
code, and whether the tool reported a failure. docs/tool-formats/ has the shapes and sources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from worker.compressor import jsonvalue
from worker.compressor.cuts import first_line

_ENDS_LINES = 4  # envelope lines sit among the first line or the last four lines of a result
_ENDS_CHARS = 1_200


class ResultFacts(NamedTuple):  # one per result: a tuple is cheaper to build
    body: str  # the output without its envelope
    exit_code: int | None = None
    failed: bool = False  # a non-zero exit, an error the tool reported, a timeout
    note: str | None = None  # what the envelope said besides the body ("timed out after 30 s")
    error: str | None = None  # an error message reported beside the output (an error field)


def read_result(text: str, *, shell: bool) -> ResultFacts:
    """The body, exit code and failure of a tool result. ``shell``: the call ran a command (an
    exit-code line is then trusted at either end of the output, not only in brackets)."""
    text, wrapper_error = _unwrapped(text)
    text, saved = _evicted(text)
    facts = _enveloped(text, shell=shell)
    if wrapper_error is not None:
        facts = facts._replace(failed=True, error=facts.error or wrapper_error)
    body = facts.body
    if not facts.failed and facts.exit_code is None and _FAILURE_START.match(body, _lead(body)):
        facts = facts._replace(failed=True, error=facts.error or first_line(body))
    if body[:1] in _NO_OUTPUT_STARTS and _NO_OUTPUT.fullmatch(body.strip()):
        facts = facts._replace(body="")  # a placeholder that says the output was empty
    if saved is not None:  # where the whole output is, above what the preview showed
        facts = facts._replace(body=f"{saved}\n{facts.body}" if facts.body else saved)
    return facts


def _enveloped(text: str, *, shell: bool) -> ResultFacts:
    # Results run to megabytes: look at the first characters without copying the rest.
    start = _lead(text)
    first = text[start : start + 1]
    if first == "<" and _TAGGED_CODE.search(text, start, start + 400):
        return _tagged(text, start)
    if first == "{":
        found = _json_result(text.strip(), shell=shell)
        if found is not None:
            return found
    if first in "CEW" and _HEADER_START.match(text, start):
        found = _header_result(text.strip())
        if found is not None:
            return found
    return _text_result(text, shell=shell)


_LEADING_SPACE = re.compile(r"\s*")


def _lead(text: str) -> int:
    """Where the text starts after white space."""
    m = _LEADING_SPACE.match(text)
    return m.end() if m else 0


# ---------------------------------------------------------------------------------------------
# Wrappers around the whole result

_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\n*", re.DOTALL)
_UNTRUSTED = re.compile(
    r"<untrusted_tool_result[^>]*>\n(?:[^\n]*\n\n)?(?P<inner>.*)\n</untrusted_tool_result>\s*\Z",
    re.DOTALL,
)
_PERSISTED = re.compile(r"<persisted-output>\n?(?P<inner>.*?)\n?</persisted-output>", re.DOTALL)
_WRAPPERS = re.compile(r"<(?:system-reminder|persisted-output)>")
_TOOL_USE_ERROR = re.compile(r"\s*<tool_use_error>(?P<inner>.*?)</tool_use_error>\s*\Z", re.DOTALL)
# SWE-agent's observation templates: "OBSERVATION:" above the output, or <observation> around
# it, or the editor's state lines and a prompt after it.
_OBSERVATION_HEAD = ("OBSERVATION:\n", "Observation: ")
_OBSERVATION_TAGS = re.compile(r"<observation>\n?(?P<inner>.*?)\n?</observation>\s*\Z", re.DOTALL)
_SHELL_STATE = re.compile(
    r"\n?\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)\n(?:bash-\$ ?)?\Z"
)
# OpenHands: an error observation's trailer, and the SDK's header block before an error.
_ERROR_TRAILER = "\n[Error occurred in processing last action]"
_ERROR_HEADER = "[An error occurred during execution.]"


def _unwrapped(text: str) -> tuple[str, str | None]:
    """The result without the blocks an agent wraps it in, and the error a wrapper reports."""
    wrapper = _WRAPPERS.search(text)  # one pass over the text for both blocks
    if wrapper is not None and "<system-reminder>" in text:
        text = _REMINDER.sub("\n", text)
    if text.startswith("<untrusted_tool_result"):
        m = _UNTRUSTED.match(text)
        text = m.group("inner") if m else text
    if wrapper is not None and "<persisted-output>" in text:
        text = _PERSISTED.sub(lambda m: m.group("inner"), text)
    text = _observed(text)
    if text.startswith("<tool_use_error>", _lead(text)):
        m = _TOOL_USE_ERROR.match(text)
        if m:
            inner = m.group("inner").strip()
            return inner, inner
    if text.endswith(_ERROR_TRAILER):
        text = text[: -len(_ERROR_TRAILER)]
        return text, first_line(text)
    if text.startswith(_ERROR_HEADER):
        text = text[len(_ERROR_HEADER) :].lstrip("\n")
        return text, first_line(text)
    return text, None


def _observed(text: str) -> str:
    """The output without SWE-agent's observation template around it."""
    head = next((h for h in _OBSERVATION_HEAD if text.startswith(h)), None)
    if head is not None:
        text = text[len(head) :]
    elif text.startswith("<observation>"):
        m = _OBSERVATION_TAGS.match(text)
        text = m.group("inner") if m else text
    if text.endswith(("bash-$", "bash-$ ", ")")) and "(Current directory: " in text[-600:]:
        m = _SHELL_STATE.search(text, max(0, len(text) - 600))
        text = text[: m.start()] if m else text
    return text


# deepagents (and its ports to other languages) saves a large result to a file and answers with a
# stub: where the file is, how to read it, then the result's first and last lines, numbered
# (``f"{n:>{width}}  {line}"``; ``cat -n``'s ``"{n:6d}\t"`` before 0.7). Its status lines ("[Command
# failed with exit code 1]") are among the last lines: the preview, unnumbered, is the result.
_EVICTED = "Tool result too large, the result of this tool call "
_PREVIEW = "Here is a preview showing the head and tail of the result"
_NUMBERED = re.compile(r"^ *\d+(?:\.\d+)?(?:  |\t)", re.MULTILINE)


def _evicted(text: str) -> tuple[str, str | None]:
    """A stub's preview with its line numbers taken off, and the stub's line naming the file
    the whole result was saved to; the text itself and None for any other result."""
    if not text.startswith(_EVICTED):
        return text, None
    note = text.find(_PREVIEW)
    start = text.find(":\n", note) if note >= 0 else -1
    if start < 0:
        return text, None
    return _NUMBERED.sub("", text[start + 2 :].strip("\n")), text.partition("\n")[0].strip()


# What agents put in place of an empty output: Claude Code's "(Bash completed with no output)",
# deepagents' "<no output>", OpenHands' IPython note, SWE-agent's no-output templates.
_NO_OUTPUT = re.compile(
    r"\(\w+ completed with no output\)|<no output>|\[Code executed successfully with no output\]"
    r"|(?:<warning>\s*)?Your (?:last )?command ran successfully and did not produce any output\."
    r"(?:\s*</warning>)?"
)
_NO_OUTPUT_STARTS = frozenset("(<[Y")


# Words that open a failure report when a tool has no exit code to give (each from an agent's
# source: Codex's argument and approval errors, Claude Code's file and fetch errors, deepagents'
# "Error: ..." strings and human-in-the-loop rejections, OpenHands' "ERROR:", SWE-agent's editor
# refusals).
_FAILURE_START = re.compile(
    r"(?:Error\b|ERROR\b|error:|Failed\b|failed to |User rejected |exec command rejected"
    r"|patch rejected|File does not exist|Request failed with status|No replacement was"
    r"|Cannot write to |apply_patch verification failed|execution error:"
    r"|File already exists at: |The path \S+ (?:does not exist|is not an absolute path|is a dir)"
    r"|The parent directory \S+ does not exist|Parameter `\w+` is required)"
)


# ---------------------------------------------------------------------------------------------
# Tagged results: mini-SWE-agent's <returncode>N</returncode> then <output>…</output> (or for a
# long output <output_head>…</output_head><elided_chars>…</elided_chars><output_tail>…), and
# Claude Code's background-task answers (<status>, <exit_code>, <output>).

_TAGGED_CODE = re.compile(r"<(?:returncode|exit_code)>\s*(-?\d{1,5})\s*</(?:returncode|exit_code)>")
_BODY_TAGS = ("output", "output_head", "elided_chars", "output_tail", "stdout", "stderr")


def _tagged(text: str, start: int = 0) -> ResultFacts:
    """``text`` from ``start`` on (white space before it skipped): tags, then the body."""
    m = _TAGGED_CODE.search(text, start, start + 400)
    code = int(m.group(1)) if m else None
    at = m.end() if m else start
    output = text.find("<output>", at)
    if output >= 0 and "<output_head>" not in text[at:output]:
        # The common shape: one <output> block, taken without copying more than the body.
        body_start = output + len("<output>")
        end = text.rfind("</output>", body_start)
        body = text[body_start : end if end >= 0 else len(text)].strip("\n")
        return ResultFacts(body, code, bool(code))
    pieces: list[str] = []
    note = None
    for tag in _BODY_TAGS:
        found = text.find(f"<{tag}>", at)
        if found < 0:
            continue
        found += len(tag) + 2
        end = text.rfind(f"</{tag}>", found)
        value = text[found : end if end >= 0 else len(text)].strip("\n")
        if tag == "elided_chars":
            note = value.strip()
            pieces.append(f"…[{note}]…")
        else:
            pieces.append(value)
    if not pieces:
        pieces.append(text[at:].strip("\n"))
    return ResultFacts("\n".join(pieces), code, bool(code), note)


# ---------------------------------------------------------------------------------------------
# JSON results: Hermes, Codex's exec output, MCP's CallToolResult, and the generic shapes other
# tools return. Some agents add plain text after the object (Hermes' "[Hint: …]").

_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status", "exitStatus")
_BODY_KEYS = ("output", "stdout", "content", "result", "text", "markdown_content", "message")
_ERROR_KEYS = ("error", "errors", "stderr")


def _json_result(text: str, *, shell: bool) -> ResultFacts | None:
    try:
        value, end = jsonvalue.loads_prefix(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    after = text[end:].strip()
    if after[:1] == "{":
        return None  # one object per line: a JSON Lines output, not an envelope
    code = _exit_of(value)
    meta = value.get("metadata")
    if code is None and isinstance(meta, Mapping):
        code = _exit_of(meta)
    body = _body_text(value)
    error = _error_text(value)
    pieces = [p for p in (body, error, after) if p]
    failed = bool(code) or error is not None or value.get("success") is False
    failed = failed or value.get("isError") is True or value.get("status") == "error"
    # A note the tool appended to the output itself ("[Command timed out after 5s]").
    inner = _text_result(body, shell=shell) if body else None
    note = inner.note if inner is not None else None
    return ResultFacts(
        "\n".join(pieces) if inner is None else "\n".join([inner.body, *pieces[1:]]),
        code if code is not None or inner is None else inner.exit_code,
        failed or (inner is not None and inner.failed),
        note,
        error.strip() if error else None,
    )


def _exit_of(value: Mapping[str, Any]) -> int | None:
    for key in _EXIT_KEYS:
        code = value.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def _body_text(value: Mapping[str, Any]) -> str:
    """The output a JSON result carries: its output field, MCP's text blocks, or else every
    string in it (keys and structure are envelope, the strings are what was said)."""
    for key in _BODY_KEYS:
        item = value.get(key)
        if isinstance(item, str):
            return item
        if key == "content" and isinstance(item, list):
            texts = [
                b["text"] for b in item if isinstance(b, Mapping) and isinstance(b.get("text"), str)
            ]
            if texts:
                return "\n".join(texts)
    return "\n".join(s for key, s in _strings(value) if key not in _ERROR_KEYS)


def _strings(value: Any, key: str = "") -> list[tuple[str, str]]:
    """(key, string) for every string leaf, in order (depth is bounded by ``jsonvalue``)."""
    if isinstance(value, str):
        return [(key, value)] if value.strip() else []
    if isinstance(value, Mapping):
        return [pair for k, v in value.items() for pair in _strings(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in _strings(v, key)]
    return []


def _error_text(value: Mapping[str, Any]) -> str | None:
    for key in _ERROR_KEYS:
        item = value.get(key)
        if isinstance(item, str) and item.strip():
            return item
        if isinstance(item, list) and item and all(isinstance(i, str) for i in item):
            return "\n".join(item)
    return None


# ---------------------------------------------------------------------------------------------
# Header results: Codex's "Exit code: N / Wall time: … / Output:" and its unified-exec form
# "Chunk ID / Wall time / Process exited with code N / Original token count / Output:".

_HEADER_START = re.compile(r"(?:Exit code: |Chunk ID: |Wall time: )")
_HEADER_LINE = re.compile(
    r"(?:Exit code: (?P<code>-?\d{1,5})|Process exited with code (?P<exited>-?\d{1,5})"
    r"|Wall time: .*|Total output lines: \d+|Chunk ID: .*|Original token count: \d+"
    r"|Process running with session ID \d+|Output:)"
)


def _header_result(text: str) -> ResultFacts | None:
    code: int | None = None
    lines = text.split("\n", 7)
    for i, line in enumerate(lines[:7]):
        m = _HEADER_LINE.fullmatch(line.strip())
        if m is None:
            return None
        found = m.group("code") or m.group("exited")
        if found is not None:
            code = int(found)
        if line.strip() == "Output:":
            body = "\n".join(lines[i + 1 :]).strip("\n") if i + 1 < len(lines) else ""
            inner = _text_result(body, shell=True)  # "command timed out after 10011 ms"
            return ResultFacts(inner.body, code, bool(code) or inner.failed, inner.note)
    return None


# ---------------------------------------------------------------------------------------------
# Text envelopes: an exit-code line first (Claude Code's "Exit code 1"), or bracketed lines at
# the end (OpenHands, deepagents, Hermes' timeout note), or a plain "exit code N" line.

_EXIT_PHRASE = re.compile(
    r"""(?ix)
    ^\W{0,3}
    (?:(?:the\ )?(?:command|process|program|script)\ (?:\w+\ ){0,2}?)?
    (?:exit(?:ed)?(?:\ with)?[\ _]?(?:code|status)|return\ ?code|returncode)
    \s*[:=]?\s*\(?(?P<code>-?\d{1,5})\)?
    [.\])]*\s*$
    """
)
_BRACKETED = re.compile(r"^\[(?P<inner>[^\n]{1,800})\]$")
# Inside an envelope's brackets the phrase may sit mid-sentence: "[Command failed with exit
# code 2]", "[The command completed with exit code 1.]".
_INNER_EXIT = re.compile(r"(?i)\bexit (?:code|status):? (?P<code>-?\d{1,5})\b")
_TIMED_OUT = re.compile(
    r"(?i)\btimed out\b|\bno new output after\b|\binterrupted\b|\btimeout\b.*\bexceeded\b"
)
# Bracketed lines an agent adds about the environment, not the output.
_METADATA = re.compile(
    r"(?i)(?:current working directory|python interpreter|jupyter |output (?:was )?truncated|"
    r"command (?:finished|completed|succeeded|failed)|process \d+|note: |hint: )"
)


def _text_result(text: str, *, shell: bool) -> ResultFacts:
    """Exit-code and metadata lines at the ends of a plain-text result, taken off the body."""
    head, middle, tail = _ends(text)
    code: int | None = None
    notes: list[str] = []
    trimmed = False
    while tail:
        found = _envelope_line(tail[-1], shell=shell)
        if found is None:
            break
        tail.pop()
        trimmed = True
        exit_code, note = found
        code = exit_code if code is None else code
        notes.extend([note] if note else [])
    if head:
        found = _envelope_line(head[0], shell=shell, first=True)
        if found is not None and (found[0] is not None or found[1] is not None):
            code = found[0] if code is None else code
            notes.extend([found[1]] if found[1] else [])
            head, trimmed = [], True
    if not trimmed:
        return ResultFacts(text.strip("\n"))
    body = "\n".join(part for part in ("\n".join(head), middle, "\n".join(tail)) if part)
    if not head and shell:  # an exit-code line first, then perhaps a timeout notice
        line, _, rest = body.lstrip("\n").partition("\n")
        if _FIRST_LINE_TIMEOUT.match(line.strip()):
            notes.append(line.strip())
            body = rest
    note = "; ".join(notes) or None
    timed_out = note is not None and _TIMED_OUT.search(note) is not None
    return ResultFacts(body.strip("\n"), code, bool(code) or timed_out, note)


def _ends(text: str) -> tuple[list[str], str, list[str]]:
    """The first line, the middle, and the last few lines."""
    stripped = text.strip("\n")
    first_end = stripped.find("\n")
    if first_end < 0:
        return [], "", [stripped]
    head = [stripped[:first_end]]
    cut = len(stripped)
    tail: list[str] = []
    for _ in range(_ENDS_LINES):
        at = stripped.rfind("\n", first_end, cut)
        if at < 0 or len(stripped) - at > _ENDS_CHARS:
            break
        tail.insert(0, stripped[at + 1 : cut])
        cut = at
    return head, stripped[first_end + 1 : cut], tail


def _envelope_line(
    line: str, *, shell: bool, first: bool = False
) -> tuple[int | None, str | None] | None:
    """(exit code, note) when ``line`` is envelope, not output; None for a line of output."""
    stripped = line.strip()
    if not stripped:
        return None if first else (None, None)
    m = _EXIT_PHRASE.match(stripped)
    if m is not None and (shell or stripped.startswith("[")):
        return int(m.group("code")), None
    if first and shell and _FIRST_LINE_TIMEOUT.match(stripped):
        return None, stripped  # Claude Code 1.0: "Command timed out after 2m 0s", then output
    bracket = _BRACKETED.match(stripped)
    if bracket is None:
        return None
    inner = bracket.group("inner")
    m = _EXIT_PHRASE.search(inner) or _INNER_EXIT.search(inner)
    if m is not None:
        note = inner if _TIMED_OUT.search(inner) else None
        return int(m.group("code")), note
    if _TIMED_OUT.search(inner):
        return None, inner.split(". ", 1)[0].rstrip(".")
    if _METADATA.match(inner):
        return None, None
    return None


_FIRST_LINE_TIMEOUT = re.compile(r"(?i)command timed out after \S+(?: \S+)?$")
