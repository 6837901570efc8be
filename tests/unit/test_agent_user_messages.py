"""The transcripts of agent-written user-role messages are real-shaped and fully labelled.

tests/data/tool_formats/agent_user_messages.json holds, per agent, transcripts in which the
agent itself wrote user-role messages (tool-call errors, format errors, continue nudges,
warnings, interrupts) beside a person's asks; docs/tool-formats/agent_user_messages.md gives
their shapes and sources. These checks keep the data usable by tests of how user messages are
read: every user-role message is labelled once, and each transcript parses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from worker.compressor.messages import parse_messages

DATA = Path(__file__).parent.parent / "data" / "tool_formats" / "agent_user_messages.json"
DOC: dict[str, Any] = json.loads(DATA.read_text())
TRANSCRIPTS = DOC["transcripts"]


def test_every_agent_with_such_messages_has_transcripts() -> None:
    agents = {t["agent"] for t in TRANSCRIPTS}
    assert agents >= {"openhands", "swe_agent", "codex", "claude_code"}


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=[t["name"] for t in TRANSCRIPTS])
def test_every_user_message_says_who_wrote_it(transcript: dict[str, Any]) -> None:
    msgs = parse_messages(transcript["messages"])
    users = [i for i, m in enumerate(msgs) if m.role == "user"]
    labels = transcript["user_messages"]
    assert [label["at"] for label in labels] == users
    for label in labels:
        assert label["from"] in ("person", "agent")
        assert (label["from"] == "agent") == ("kind" in label)
        if "kind" in label:
            assert label["kind"] in DOC["kinds"]
    # a person's ask comes before the agent speaks in the user role (its context aside)
    first_person = next(label["at"] for label in labels if label["from"] == "person")
    injected = [label["at"] for label in labels if label.get("kind", "context") != "context"]
    assert injected and first_person < injected[0]
