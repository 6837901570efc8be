"""One reader, one story: for any tool use, in any agent's envelope, the one-line account, the
ledger and the extractive summary name the same command and the same exit code."""

from __future__ import annotations

import json
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_ledger import ledger_of
from worker.compressor.extractive import extractive_summary, parse_sections
from worker.compressor.messages import Message, ToolCall, assistant, tool_result, user
from worker.compressor.tool_calls import only_views
from worker.compressor.tooluse import Shown, read_tool_uses


def _mini_swe(output: str, code: int) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}\n</output>"


def _hermes(output: str, code: int) -> str:
    return json.dumps({"output": output, "exit_code": code, "error": None})


def _codex_json(output: str, code: int) -> str:
    return json.dumps({"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.4}})


def _codex_text(output: str, code: int) -> str:
    return f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{output}"


def _openhands(output: str, code: int) -> str:
    return (
        f"{output}\n[The command completed with exit code {code}.]\n"
        f"[Current working directory: /workspace]\n[Python interpreter: /usr/bin/python]\n"
        f"[Command finished with exit code {code}]"
    )


def _deepagents(output: str, code: int) -> str:
    verdict = "succeeded" if code == 0 else "failed"
    return f"{output}\n[Command {verdict} with exit code {code}]"


def _claude_code(output: str, code: int) -> str:
    return f"Exit code {code}\n{output}"


ENVELOPES: dict[str, tuple[str, Callable[[str, int], str]]] = {
    "mini_swe_agent": ("bash", _mini_swe),
    "hermes": ("terminal", _hermes),
    "codex": ("shell", _codex_json),
    "codex_text": ("shell_command", _codex_text),
    "openhands": ("execute_bash", _openhands),
    "deepagents": ("execute", _deepagents),
    "claude_code": ("Bash", _claude_code),
}

words = st.text(
    st.characters(codec="utf-8", categories=("L", "N"), exclude_characters="\n"),
    min_size=1,
    max_size=8,
)
commands = st.lists(words, min_size=1, max_size=6).map(" ".join)
errors = st.sampled_from(
    [
        None,
        "ValueError: bad input",
        "src/app.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "E   assert 1 == 2",
        "error[E0308]: mismatched types",
        "fatal: not a git repository (or any of the parent directories): .git",
    ]
)


@given(
    st.sampled_from(sorted(ENVELOPES)),
    commands,
    st.integers(0, 255),
    errors,
    st.integers(0, 60),
)
def test_account_ledger_and_summary_name_the_same_command_and_exit_code(
    agent: str, command: str, code: int, error: str | None, filler: int
) -> None:
    tool, envelope = ENVELOPES[agent]
    lines = [f"step {i}" for i in range(filler)]
    if error:
        lines.insert(filler // 2, error)
    result = envelope("\n".join(lines) or "done", code)
    call = ToolCall("c1", tool, json.dumps({"command": command}))
    msgs: list[Message] = [user("run it"), assistant(None, [call]), tool_result("c1", result)]

    (use,) = read_tool_uses(msgs).uses
    shown = Shown()
    cmd = shown.command(use)
    assert use.command == command.strip() and use.exit_code == code
    assert cmd is not None

    account = shown.one_liner(use)
    assert f"`{cmd}` -> exit {code}" in account

    actions = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))[
        "Completed Actions"
    ]
    verb = "SEARCHED" if use.reply == "no matches" else "RAN"  # rg, grep: exit 1 found nothing
    assert f"{verb} `{cmd}` - exit {code}" in actions

    entries = [e for e in ledger_of(msgs).entries if e.kind in ("failing", "failed")]
    # A non-zero exit is a failure unless it is an answer (grep's 1: no matches; 1 from a
    # command that only shows something).
    answered = use.reply is not None or (code == 1 and only_views(command))
    assert use.failed == (code != 0 and not answered)
    if use.failed or (error and use.errors):
        (entry,) = entries
        assert entry.text.startswith(f"`{cmd}` → exit {code}")
        if use.first_error:
            assert shown.error(use) in account and shown.error(use) in entry.text
    else:
        assert entries == []
