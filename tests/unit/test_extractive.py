from __future__ import annotations

import json
from datetime import date

from worker.compressor.extractive import (
    EXTRACTIVE_NOTE,
    ExtractiveSummarizer,
    extractive_summary,
    parse_sections,
)
from worker.compressor.messages import Message, ToolCall, assistant, tool_result, user
from worker.compressor.prompts import SECTIONS
from worker.compressor.summarizer import SummaryRequest


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))


def session() -> list[Message]:
    return [
        user("Please fix the KeyError in src/parser.py. Don't touch the tests."),
        assistant("Looking.", [bash("c1", "python -m pytest tests/test_parser.py -x")]),
        tool_result(
            "c1",
            "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
            "KeyError: 'row_id'\n</output>",
        ),
        assistant(
            None,
            [
                ToolCall(
                    id="c2",
                    name="write_file",
                    arguments='{"path": "src/parser.py", "content": "x"}',
                )
            ],
        ),
        tool_result("c2", "Wrote 1 bytes"),
        assistant("Fixed the lookup in src/parser.py."),
        user("Does it handle empty rows?"),
        assistant("Yes, empty rows are skipped."),
        user("Now add a changelog entry."),
    ]


def test_fills_every_section_and_says_it_is_extractive() -> None:
    text = extractive_summary(session(), previous=None, budget_tokens=2000)
    assert text.startswith(EXTRACTIVE_NOTE)
    assert list(parse_sections(text)) == list(SECTIONS)


def test_quotes_the_user_and_lists_actions_files_and_errors() -> None:
    sections = parse_sections(extractive_summary(session(), previous=None, budget_tokens=2000))
    assert sections["Active Task"] == 'User asked: "Now add a changelog entry."'
    assert "Don't touch the tests." in sections["Constraints & Preferences"]
    actions = sections["Completed Actions"].splitlines()
    assert actions[0] == (
        "1. RAN `python -m pytest tests/test_parser.py -x` - exit 1, 2 lines, "
        "last: \"KeyError: 'row_id'\" [tool: bash]"
    )
    assert actions[1] == "2. WROTE src/parser.py - Wrote 1 bytes [tool: write_file]"
    assert "src/parser.py" in sections["Relevant Files"]
    assert "KeyError: 'row_id'" in sections["Blocked"]
    assert "Does it handle empty rows?" in sections["Resolved Questions"]
    assert "Yes, empty rows are skipped." in sections["Resolved Questions"]
    assert "Now add a changelog entry." in sections["Pending User Asks"]
    assert "src/parser.py" in sections["Active State"]
    assert "[ASSISTANT] Yes, empty rows are skipped." in sections["Critical Context"]


def test_update_continues_the_numbering_and_keeps_earlier_facts() -> None:
    first = extractive_summary(session(), previous=None, budget_tokens=2000)
    later = [
        user("Also run the linter."),
        assistant(None, [bash("c9", "ruff check .")]),
        tool_result("c9", "<returncode>0</returncode>\n<output>\nAll checks passed!\n</output>"),
    ]
    sections = parse_sections(extractive_summary(later, previous=first, budget_tokens=2000))
    actions = sections["Completed Actions"].splitlines()
    assert actions[-1] == "3. RAN `ruff check .` - exit 0, 1 line [tool: bash]"
    assert actions[0].startswith("1. RAN `python -m pytest")
    assert sections["Active Task"] == 'User asked: "Also run the linter."'
    assert "src/parser.py" in sections["Relevant Files"]


def test_repeated_updates_stay_bounded() -> None:
    summary: str | None = None
    for round_ in range(60):
        turns = [
            user(f"step {round_}: edit src/mod_{round_}.py"),
            assistant(None, [bash(f"c{round_}", f"sed -i s/a/b/ src/mod_{round_}.py")]),
            tool_result(f"c{round_}", "<returncode>0</returncode>\n<output>\n</output>"),
        ]
        summary = extractive_summary(turns, previous=summary, budget_tokens=2000)
    assert summary is not None
    assert len(summary) <= 2000 * 4
    actions = parse_sections(summary)["Completed Actions"]
    assert "left out for length" in actions and "60. RAN" in actions


def test_a_previous_summary_without_headings_is_kept_in_gist() -> None:
    text = extractive_summary(
        [user("go on")], previous="We migrated the DB to v3.", budget_tokens=2000
    )
    assert "We migrated the DB to v3." in parse_sections(text)["Critical Context"]


def test_is_a_summarizer_that_reads_the_window() -> None:
    summarizer = ExtractiveSummarizer()
    assert (summarizer.name, summarizer.is_llm) == ("extractive", False)
    request = SummaryRequest(
        prompt="",
        window=session(),
        previous_summary=None,
        focus_topic=None,
        budget_tokens=2000,
        max_output_tokens=2600,
        today=date(2026, 1, 1),
    )
    response = summarizer.summarize(request)
    assert response.model == "extractive"
    assert "Now add a changelog entry." in response.text


def test_reused_call_ids_keep_each_action_with_its_own_outcome() -> None:
    msgs = [
        user("Build and test."),
        assistant(None, [bash("call_0", "make build")]),
        tool_result("call_0", "<returncode>0</returncode>\n<output>\nbuilt\n</output>"),
        assistant(None, [bash("call_0", "pytest -q")]),
        tool_result("call_0", "<returncode>1</returncode>\n<output>\n1 failed\n</output>"),
        assistant("One test fails."),
    ]
    sections = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))
    assert sections["Completed Actions"].splitlines() == [
        "1. RAN `make build` - exit 0, 1 line [tool: bash]",
        '2. RAN `pytest -q` - exit 1, 1 line, last: "1 failed" [tool: bash]',
    ]
