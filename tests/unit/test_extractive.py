from __future__ import annotations

import json
from datetime import date

from worker.compressor.extractive import (
    EXTRACTIVE_NOTE,
    USER_MESSAGES,
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
    assert list(parse_sections(text)) == [*SECTIONS, USER_MESSAGES]


def test_quotes_the_user_and_lists_actions_files_and_errors() -> None:
    sections = parse_sections(extractive_summary(session(), previous=None, budget_tokens=2000))
    assert sections["Active Task"] == 'User asked: "Now add a changelog entry."'
    assert "Don't touch the tests." in sections["Constraints & Preferences"]
    actions = sections["Completed Actions"].splitlines()
    assert actions[0] == (
        "1. RAN `python -m pytest tests/test_parser.py -x` - exit 1, 2 lines, "
        "error: \"KeyError: 'row_id'\" [tool: bash]"
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
        '2. RAN `pytest -q` - exit 1, 1 line, error: "1 failed" [tool: bash]',
    ]


def test_every_user_message_survives_in_any_language() -> None:
    asks = [
        "Respóndeme siempre en español, por favor.",
        "部署之前先跑一遍集成测试。不要用 moment.js。",
        "Mi nombre es Lucía Fernández; la entrega es el viernes 14 de marzo.",
        "ok",
    ]
    msgs: list[Message] = []
    for i, ask in enumerate(asks):
        msgs += [user(ask), assistant(f"Entendido {i}.")]
    sections = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))
    # the rules among them under Constraints & Preferences, the rest under User Messages
    said = sections["Constraints & Preferences"] + sections[USER_MESSAGES]
    for ask in asks:
        assert f'"{ask}"' in said


def test_a_long_user_message_is_quoted_exactly_within_a_bound() -> None:
    long_ask = (
        "Here is the whole context. "
        + "Some background that goes on. " * 80
        + "Never use moment.js in this project. "
        + "More background. " * 80
        + "Thanks!"
    )
    said = parse_sections(
        extractive_summary([user(long_ask), assistant("ok")], previous=None, budget_tokens=2000)
    )[USER_MESSAGES]
    assert "Here is the whole context." in said
    assert "Never use moment.js in this project." in said
    assert "Thanks!" in said
    assert len(said) < len(long_ask) // 2


def test_decisions_with_reasons_and_blockers_come_from_assistant_turns() -> None:
    msgs = [
        user("Store the sessions."),
        assistant(
            "Usaré SQLite en lugar de Postgres porque el despliegue es en un solo nodo. "
            "I cannot reach the staging database: the password was rotated."
        ),
    ]
    sections = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))
    assert "Usaré SQLite en lugar de Postgres porque" in sections["Key Decisions"]
    assert "I cannot reach the staging database" in sections["Blocked"]


def test_a_quoted_error_message_is_no_blocker_and_a_blocker_said_again_is_listed_once() -> None:
    msgs = [user("Fix the loader.")]
    for _ in range(3):
        msgs += [
            assistant('The error is "Unable to load file src/project/__init__.py".'),
            assistant("The log says `unable to connect to db` each time."),
            assistant("Hmm, I'm stuck here."),
        ]
    msgs += [assistant("I am unable to reproduce it on Linux, so I will read the code.")]
    blocked = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))["Blocked"]
    assert "Unable to load file" not in blocked
    assert "unable to connect" not in blocked
    assert blocked.count("I'm stuck here") == 1
    assert "I am unable to reproduce it on Linux" in blocked


def test_unresolved_failures_are_blocked_and_resolved_ones_are_not() -> None:
    msgs = [
        user("Make the build pass."),
        assistant(None, [bash("c1", "make build")]),
        tool_result("c1", "<returncode>2</returncode>\n<output>\nsrc/a.c:3:1: error: x\n</output>"),
        assistant(None, [bash("c2", "make build")]),
        tool_result("c2", "<returncode>0</returncode>\n<output>\nok\n</output>"),
        assistant(None, [bash("c3", "make test")]),
        tool_result("c3", "<returncode>1</returncode>\n<output>\nFAIL: test_x (t.T)\n</output>"),
    ]
    blocked = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))["Blocked"]
    assert "`make test` → exit 1: FAIL: test_x (t.T)" in blocked
    assert "make build" not in blocked


def test_the_focus_topic_moves_what_it_names_first() -> None:
    msgs: list[Message] = []
    for i in range(40):
        msgs += [
            assistant(None, [bash(f"c{i}", f"cat src/module_{i}.py")]),
            tool_result(f"c{i}", "<returncode>0</returncode>\n<output>\nx\n</output>"),
        ]
    msgs += [user("go on")]
    plain = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=500))
    focused = parse_sections(
        extractive_summary(msgs, previous=None, budget_tokens=500, focus_topic="module_3.py")
    )
    assert "module_3.py" not in plain["Completed Actions"]  # an old action, left out for length
    assert "module_3.py" in focused["Completed Actions"]
    files = focused["Relevant Files"].splitlines()
    assert files[0] == "- src/module_3.py"


def test_a_small_budget_shrinks_every_section_not_only_the_lists() -> None:
    # A 6,000-token window leaves the summary a few hundred tokens under its target: the
    # fixed parts (the last turns, the active task, lists' floors) must shrink with it.
    from worker.encodings import counter_for_model

    counter = counter_for_model("gpt-4")
    msgs: list[Message] = []
    for i in range(120):
        msgs += [
            user(f"Question {i}: how long should the bread proof on day {i}? " + "detail " * 30),
            assistant(f"Answer {i}: about {i % 5 + 1} hours at room temperature. " + "more " * 40),
        ]
    for budget in (300, 700):
        text = extractive_summary(msgs, previous=None, budget_tokens=budget)
        assert counter.count_text(text) <= budget * 1.1 + 150  # 150: headings and labels


def test_our_own_counts_do_not_make_a_message_a_fact() -> None:
    # "(said 2 times)" and "(1,234 chars in all)" are ours: a repeated "Thanks!" is no fact,
    # and is not kept before newer messages when the room is short; a real fact is.
    # (Fillers that differ in two words each: alike in one word, they would be quoted once.)
    fillers = [
        f"Tell me more about the {a} part and the {b} one"
        for a, b in zip(DISHES, reversed(DISHES), strict=True)
    ]
    msgs = [user("Thanks!"), assistant("ok"), user("Thanks!"), assistant("ok")]
    msgs += [user("The invoice number is 4471."), assistant("ok")]
    for text in fillers:
        msgs += [user(text), assistant("ok")]
    said = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=150))[USER_MESSAGES]
    assert "The invoice number is 4471." in said
    assert "Thanks!" not in said


def chat_with_early_facts() -> list[Message]:
    """A tool-free chat: what lasts is said early (a fact the assistant took note of, a pick it
    made when asked); then many newer requests, long answers and stock replies."""
    msgs = [
        user("By the way, I live in Leeds, so look for things nearby."),
        assistant("Noted!"),
        user("Which one?"),
        assistant("Take the morning train: the evening one is always full. Anything else?"),
    ]
    for dish in DISHES:
        msgs += [
            user(f"Give me a quick recipe for {dish}, something easy"),
            assistant(
                f"For {dish}: fry an onion slowly, add the rest, then let it simmer for twenty "
                "minutes and season at the end. Taste before serving and adjust the salt."
            ),
            user("Can you sum that up?"),
            assistant("In two lines: the important bit first, the rest is optional."),
        ]
    return msgs


_DISH_NAMES = (
    "lentil soup, fish tacos, ratatouille, shakshuka, risotto, paella, goulash, chili, dal, "
    "minestrone, gazpacho, couscous, pad thai, ramen, curry, stew, frittata, quiche, pilaf, "
    "gumbo, borscht, tagine, jambalaya, moussaka, lasagne, carbonara, pho, biryani"
)
DISHES = _DISH_NAMES.split(", ")


def test_in_a_small_budget_a_chat_keeps_what_lasts_before_what_is_newer() -> None:
    sections = parse_sections(
        extractive_summary(chat_with_early_facts(), previous=None, budget_tokens=500)
    )
    assert "I live in Leeds" in sections[USER_MESSAGES]
    assert "Take the morning train: the evening one is always full." in sections["Key Decisions"]
    # The stock reply given thirty times is not a decision worth the room.
    assert "In two lines" not in sections["Key Decisions"]


def test_a_small_room_drops_headings_over_nothing_a_large_one_keeps_the_template() -> None:
    small = parse_sections(
        extractive_summary(chat_with_early_facts(), previous=None, budget_tokens=400)
    )
    assert "Completed Actions" not in small and "Remaining Work" not in small
    assert USER_MESSAGES in small and "Active Task" in small
    large = parse_sections(
        extractive_summary(chat_with_early_facts(), previous=None, budget_tokens=4000)
    )
    assert list(large) == [*SECTIONS, USER_MESSAGES]


def test_a_small_room_drops_a_list_whose_every_item_was_left_out() -> None:
    msgs: list[Message] = [user("Write the fixtures.")]
    for i in range(50):
        command = f"cat > tests/fixtures/case_{i}.json << 'EOF'\n" + "{}" * 200 + "\nEOF"
        msgs += [
            assistant(None, [bash(f"c{i}", command)]),
            tool_result(f"c{i}", "<returncode>0</returncode>\n<output>\n</output>"),
        ]
    # (So small a room that no written file fits beside the task.)
    text = extractive_summary(msgs, previous=None, budget_tokens=60)
    sections = parse_sections(text)
    # "(50 of actions 1-50 left out for length; …)" and "Files written in these turns:" over
    # "- (50 more left out for length)" name nothing: no heading for them.
    assert "Completed Actions" not in sections
    assert "Active State" not in sections
    assert "Active Task" in sections


def test_a_failed_edit_is_blocked_with_its_exit_code_and_wrote_nothing() -> None:
    patch = "*** Begin Patch\n*** Update File: web/index.js\n@@\n-a\n+b\n*** End Patch"
    msgs = [
        user("Fix the counter in web/index.js."),
        assistant(None, [ToolCall(id="p1", name="apply_patch", arguments=json.dumps(patch))]),
        tool_result(
            "p1",
            "Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to write file /p/web/index.js",
        ),
        assistant("The sandbox refused the write."),
        user("Try again after fixing the permissions."),
    ]
    sections = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))
    assert sections["Completed Actions"] == (
        '1. TRIED to edit web/index.js - exit 1, failed: "Failed to write file /p/web/index.js" '
        "[tool: apply_patch]"
    )
    blocked = sections["Blocked"]
    assert "- apply_patch web/index.js → exit 1: Failed to write file /p/web/index.js" in blocked
    assert "web/index.js" not in sections["Active State"]
