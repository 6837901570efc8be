"""The tool-use reader on each agent's real call and result shapes.

The fixtures in tests/data/tool_formats/ were written from each agent's public source (tool
definitions and the strings its results are built from; each file lists its sources, and
docs/tool-formats/ describes the shapes). Where the reader follows a convention of ours rather
than a fact of the agent (a shell call stays "shell" whatever it runs, a failed write writes
nothing, a timeout note is the error), docs/tool-formats/README.md says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from worker.compressor.messages import parse_messages
from worker.compressor.tool_calls import named_paths
from worker.compressor.tooluse import Shown, ToolUse, read_tool_uses

FIXTURES = Path(__file__).parent.parent / "data" / "tool_formats"


def _docs() -> list[dict[str, Any]]:
    """Each agent's fixtures (agent_user_messages.json holds transcripts, not tool uses)."""
    docs = [json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))]
    return [doc for doc in docs if "cases" in doc]


def _cases(*, gaps_fail: bool) -> list[Any]:
    out = []
    for doc in _docs():
        for case in doc["cases"]:
            marks = []
            if gaps_fail and "known_gap" in case:
                marks.append(pytest.mark.xfail(reason=case["known_gap"], strict=True))
            out.append(pytest.param(case, id=f"{doc['agent']}: {case['name']}", marks=marks))
    return out


CASES = _cases(gaps_fail=True)


def read(case: dict[str, Any]) -> ToolUse:
    wire: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "tool_calls": [case["call"]]}
    ]
    if case["result"] is not None:
        wire.append({"role": "tool", "tool_call_id": case["call"]["id"], "content": case["result"]})
    (use,) = read_tool_uses(parse_messages(wire)).uses
    return use


def test_every_agent_has_fixtures() -> None:
    agents = {doc["agent"] for doc in _docs()}
    assert agents >= {
        "hermes",
        "openhands",
        "codex",
        "claude_code",
        "deepagents",
        "mini_swe_agent",
        "swe_agent",
        "generic",
    }
    assert len(CASES) >= 150


@pytest.mark.parametrize("case", CASES)
def test_reader_reads_what_the_agent_wrote(case: dict[str, Any]) -> None:
    use, want = read(case), case["expect"]
    got = {
        "kind": use.kind,
        "command": use.command,
        "paths": list(named_paths(use.facts)),
        "written": list(use.written),
        "query": use.facts.query,
        "url": use.facts.url,
        "exit_code": use.exit_code,
        "failed": use.failed,
        "first_error_line": use.first_error,
    }
    assert got == {key: want[key] for key in got}
    for text in want["body_contains"]:
        assert text in use.body
    for text in want["body_excludes"]:
        assert text not in use.body


@pytest.mark.parametrize("case", _cases(gaps_fail=False))
def test_the_one_line_account_names_the_exit_code_and_the_error(case: dict[str, Any]) -> None:
    use = read(case)
    line = Shown().one_liner(use)
    assert line.startswith(f"[{case['call']['function']['name']}] ")
    if use.kind in ("shell", "code") and use.exit_code is not None:
        assert f"exit {use.exit_code}" in line
    if use.first_error and (use.failed or use.kind in ("shell", "code")):
        assert Shown().error(use) in line
    for text in case["expect"].get("account_contains", []):
        assert text in line
    assert "\n" not in line
