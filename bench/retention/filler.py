"""Real tool traffic as filler: the 38 mini-SWE-agent sessions in ``tests/data``, as steps.

Each real session becomes a ``RealTask``: its issue text and its bash steps (command, output,
return code, the agent's thought). For agents with file tools, some steps are turned into the
file-tool events that agent would have used for the same thing: a plain ``cat``/``sed -n`` of a
file into a ``Read``, ``grep -rn`` into a ``Search``, ``find -name`` into ``FindFiles``, a
``cat > f << 'EOF'`` into a ``Write``. The text (paths, file contents, matches) is unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from random import Random

from bench.retention.events import Event, FindFiles, Read, Search, Shell, Write
from tests.data import real_transcripts


@dataclass(frozen=True, slots=True)
class RealStep:
    command: str
    output: str
    exit_code: int
    thought: str


@dataclass(frozen=True, slots=True)
class RealTask:
    name: str
    repo: str  # e.g. "django/django"
    issue: str  # the PR description the agent was given
    steps: tuple[RealStep, ...]


_RESULT = re.compile(r"\A<returncode>(-?\d+)</returncode>\n<output>\n(.*)</output>\Z", re.S)
_CD = r"(?:cd /testbed && )?"
_PATH = r"([\w./-]+)"
_CAT = re.compile(rf"\A{_CD}cat {_PATH}\Z")
_SED = re.compile(rf"\A{_CD}sed -n '?(\d+),(\d+)p'? {_PATH}\Z")
_GREP = re.compile(rf"\A{_CD}grep -(?:rn|nr|n|rnI|Irn) ([\"'])([^\"']+)\1 {_PATH}\Z")
_FIND = re.compile(rf"\A{_CD}find {_PATH} -name ([\"'])([^\"']+)\2(?: -type f)?\Z")
_WRITE = re.compile(rf"\A{_CD}cat > {_PATH} << ?'?EOF'?\n(.*)\nEOF\Z", re.S)
_MATCH_LINE = re.compile(r"\A[^:\s]+:\d+:")
_FINAL = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@cache
def real_tasks() -> tuple[RealTask, ...]:
    """Every real session as a task, in a fixed order."""
    out = []
    for name, msgs in real_transcripts():
        issue = _issue_text(str(msgs[1].get("content") or ""))
        steps = tuple(_steps(msgs))
        repo = name.split("__", 1)[-1].rsplit("-", 1)[0].replace("__", "/")
        out.append(RealTask(name, repo, issue, steps))
    return tuple(out)


def _issue_text(first_user: str) -> str:
    body = first_user.split("</pr_description>", 1)[0]
    body = body.replace("<pr_description>", "").replace(
        "Consider the following PR description:", ""
    )
    return body.replace("\r\n", "\n").strip()


def _steps(msgs: tuple[dict[str, object], ...]) -> list[RealStep]:
    results = {
        str(m.get("tool_call_id")): str(m.get("content") or "") for m in msgs if m["role"] == "tool"
    }
    steps = []
    for msg in msgs:
        calls = msg.get("tool_calls")
        if msg["role"] != "assistant" or not isinstance(calls, list):
            continue
        for call in calls:
            command = str(json.loads(call["function"]["arguments"]).get("command", ""))
            parsed = _RESULT.match(results.get(str(call["id"]), ""))
            if parsed is None or _FINAL in command or not command.strip():
                continue  # long outputs shown head/tail only, and the final submission
            steps.append(
                RealStep(command, parsed.group(2), int(parsed.group(1)), str(msg["content"] or ""))
            )
    return steps


def as_event(step: RealStep, rng: Random, *, file_tools: bool) -> Event:
    """The step as a shell command, or (with file tools, often) as the file tool for it."""
    shell = Shell(step.command, step.output, step.exit_code, cwd="/testbed")
    if not file_tools or step.exit_code != 0 or rng.random() < 0.25:
        return shell
    command = step.command
    if m := _CAT.match(command):
        return Read(_abs(m.group(1)), step.output)
    if m := _SED.match(command):
        return Read(_abs(m.group(3)), step.output, offset=int(m.group(1)))
    if m := _WRITE.match(command):
        return Write(_abs(m.group(1)), m.group(2) + "\n")
    if m := _GREP.match(command):
        lines = step.output.splitlines()
        target = m.group(3)
        if lines and not all(_MATCH_LINE.match(line) for line in lines):
            lines = [f"{target}:{line}" for line in lines]
        if lines and all(_MATCH_LINE.match(line) for line in lines):
            return Search(m.group(2), _abs(target), tuple(lines))
        return shell
    if m := _FIND.match(command):
        files = tuple(line.removeprefix("./") for line in step.output.splitlines() if line)
        return FindFiles(f"**/{m.group(3)}", files)
    return shell


def _abs(path: str) -> str:
    path = path.removeprefix("./")
    return path if path.startswith("/") else f"/testbed/{path}"
