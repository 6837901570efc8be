"""The artifact ledger: what it collects from a window, how it ranks and fits its budget, and
how it completes a summary (only what is missing, exactly once)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from tests.data import real_transcripts
from tests.strategies import Transcript, transcripts
from worker.compressor.config import CompressConfig
from worker.compressor.ledger import (
    HEADING,
    Entry,
    Ledger,
    complete_summary,
    extract_ledger,
)
from worker.compressor.ledger_scan import may_hold_identifiers, texts_with_identifiers
from worker.compressor.messages import (
    Message,
    ToolCall,
    assistant,
    parse_messages,
    tool_result,
    user,
)
from worker.compressor.prose import read_prose
from worker.compressor.tooluse import Shown, fixed_later, later_successes, read_tool_uses
from worker.compressor.turns import Window, build_turns

SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
UUID = "123e4567-e89b-12d3-a456-426614174000"


def bash(call_id: str, command: str) -> Message:
    return assistant(None, [ToolCall(call_id, "bash", json.dumps({"command": command}))])


def ran(call_id: str, command: str, output: str, code: int | None = 0) -> list[Message]:
    """A bash call and its result in the format of our real transcripts."""
    tag = "" if code is None else f"<returncode>{code}</returncode>\n"
    return [bash(call_id, command), tool_result(call_id, f"{tag}<output>\n{output}\n</output>")]


def ledger_of(msgs: Sequence[Message], *, budget_bytes: int = 50_000) -> Ledger:
    """The ledger of ``msgs`` as a whole window, read the way ``compress`` reads one."""
    reading = read_tool_uses(msgs)
    built = build_turns(
        msgs,
        [10] * len(msgs),
        Window(0, len(msgs), summaries=(), lifted=None),
        reading=reading,
        shown=Shown(redacting=False),  # each turn is redacted whole
        config=CompressConfig(context_length=100_000),
    )
    prose = read_prose([t.message for t in built.turns], [t.at for t in built.turns])
    return extract_ledger(
        built.turns, reading.uses, prose, reading, Shown(), budget_bytes=budget_bytes
    )


def texts(ledger: Ledger, kind: str) -> list[str]:
    return [e.text for e in ledger.entries if e.kind == kind]


def window() -> list[Message]:
    return [
        user(
            f"Fix the crash from issue owner/repo#12 (see #4321), introduced in commit {SHA[:7]}. "
            "Never touch app/legacy.py."
        ),
        *ran(
            "c1",
            "cd /testbed && python -m pytest tests/test_app.py -q",
            "FAILED tests/test_app.py::test_load - KeyError: 'x'\n1 failed",
            1,
        ),
        *ran("c2", "cat > reproduce.py << 'EOF'\nimport app\nprint(1 > 0)\nEOF", ""),
        *ran(
            "c3",
            "python reproduce.py",
            'Traceback (most recent call last):\n  File "reproduce.py", line 1, in <module>\n'
            "    import app\nValueError: bad config in app/settings.py",
            1,
        ),
        assistant(
            "I'll patch the settings loader instead of the caller, because three callers share it.",
            [
                ToolCall(
                    "c4",
                    "str_replace_editor",
                    json.dumps(
                        {
                            "command": "str_replace",
                            "path": "app/settings.py",
                            "old_str": "a",
                            "new_str": "b",
                        }
                    ),
                )
            ],
        ),
        tool_result("c4", "The file app/settings.py has been edited."),
        *ran("c5", "sed -i 's/old/new/' app/loader.py app/util.py", "done"),
        *ran("c6", "python reproduce.py", "1", 0),
        *ran("c7", "git commit -am 'Fix loader'", f"[main {SHA[:7]}] Fix loader\n 2 files changed"),
        assistant(f"Done. Job {UUID} can be checked at https://ci.example.com/jobs/77."),
    ]


def test_a_failing_command_carries_its_exit_code_and_first_error_line() -> None:
    ledger = ledger_of(window())
    assert texts(ledger, "failing") == [
        "`cd /testbed && python -m pytest tests/test_app.py -q` → exit 1: "
        "FAILED tests/test_app.py::test_load - KeyError: 'x'"
    ]


def test_a_failure_later_fixed_is_kept_as_such() -> None:
    assert texts(ledger_of(window()), "failed") == [
        "`python reproduce.py` → exit 1: ValueError: bad config in app/settings.py"
    ]


PATCH = (
    "*** Begin Patch\n*** Update File: web/index.js\n@@ function render(state) {\n"
    "-  return html`<p>${count}</p>`;\n+  return html`<p>${state.count}</p>`;\n*** End Patch"
)


def patched(call_id: str, result: str) -> list[Message]:
    """Codex's freeform apply_patch call (the patch is the arguments) and its result."""
    return [
        assistant(None, [ToolCall(call_id, "apply_patch", PATCH)]),
        tool_result(call_id, result),
    ]


def test_a_failed_edit_is_listed_as_a_failed_command_is_and_writes_nothing() -> None:
    failed = "Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to write file /p/web/index.js\n"
    ledger = ledger_of([user("fix the counter"), *patched("p1", failed)])
    assert texts(ledger, "failing") == [
        "apply_patch web/index.js → exit 1: Failed to write file /p/web/index.js"
    ]
    assert texts(ledger, "file") == [] and texts(ledger, "error") == []
    (entry,) = ledger.of_kind("failing")
    assert entry.present_in(entry.render())  # its needles are in what it renders
    assert not entry.present_in("apply_patch web/index.js failed: Failed to write file")


def test_a_failed_edit_of_a_file_written_later_failed_and_later_passed() -> None:
    failed = "Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to write file /p/web/index.js\n"
    done = "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"
    ledger = ledger_of(
        [user("fix it"), *patched("p1", failed), *patched("p2", done + "M web/index.js")]
    )
    assert texts(ledger, "failing") == []
    assert texts(ledger, "failed") == [
        "apply_patch web/index.js → exit 1: Failed to write file /p/web/index.js"
    ]
    assert texts(ledger, "file") == ["web/index.js"]


def test_a_swe_agent_session_keeps_its_created_files_and_its_failing_compose_command() -> None:
    # SWE-agent observations carry no exit code: a failure shows only in what was printed.
    def call(call_id: str, name: str, args: dict[str, str], out: str) -> list[Message]:
        return [
            assistant(None, [ToolCall(call_id, name, json.dumps(args))]),
            tool_result(call_id, f"OBSERVATION:\n{out}"),
        ]

    text = "import os\nprint(os.environ['DATABASE_URL'])\n"
    quoted = "'" + text.replace("'", "'\"'\"'") + "'"
    msgs = [
        user("<uploaded_files>\n/testbed\n</uploaded_files>\nFix the migration crash."),
        *call(
            "c1",
            "bash",
            {"command": f"str_replace_editor create /testbed/check_db.py --file_text {quoted}"},
            "File created successfully at: /testbed/check_db.py",
        ),
        *call(
            "c2",
            "create",
            {"filename": "notes.txt"},
            "[File: /testbed/notes.txt (1 lines total)]\n1:",
        ),
        *call(
            "c3",
            "bash",
            {"command": "docker-compose exec web python manage.py migrate"},
            'service "web" is not running',
        ),
    ]
    ledger = ledger_of(msgs)
    assert texts(ledger, "file") == ["/testbed/check_db.py", "notes.txt"]
    assert texts(ledger, "failing") == [
        '`docker-compose exec web python manage.py migrate`: service "web" is not running'
    ]


def test_a_rerun_in_the_verbatim_tail_that_failed_again_fixed_nothing() -> None:
    # SWE-agent gives no exit code: the tail's rerun fails by its error line, as the first did.
    def run(call_id: str) -> list[Message]:
        command = json.dumps({"command": "docker-compose exec web python manage.py migrate"})
        return [
            assistant(None, [ToolCall(call_id, "bash", command)]),
            tool_result(call_id, 'OBSERVATION:\nservice "web" is not running'),
        ]

    msgs = [user("run the migrations"), *run("c1"), *run("c2")]
    reading = read_tool_uses(msgs, errors_before=3)  # the second run is in the tail
    first, rerun = reading.uses
    assert rerun.failed
    assert not fixed_later(first, later_successes(reading.uses))


def test_files_written_come_from_file_tools_and_shell_writes() -> None:
    assert texts(ledger_of(window()), "file") == [
        "reproduce.py",
        "app/settings.py",
        "app/loader.py",
        "app/util.py",
    ]


def test_what_the_user_said_and_the_files_they_named_are_kept() -> None:
    ledger = ledger_of(window())
    (said,) = texts(ledger, "user")
    assert "Never touch app/legacy.py." in said
    assert "app/legacy.py" in texts(ledger, "user_file")


def test_decisions_keep_their_reason() -> None:
    assert texts(ledger_of(window()), "decision") == [
        '"I\'ll patch the settings loader instead of the caller, because three callers share it."'
    ]


def test_urls_and_identifiers_are_collected() -> None:
    ledger = ledger_of(window())
    assert "https://ci.example.com/jobs/77" in texts(ledger, "url")
    # each listed, or quoted by an entry that is (then not listed again)
    rendered = ledger.render()
    assert all(i in rendered for i in ("owner/repo#12", "#4321", SHA[:7], UUID))
    assert UUID in texts(ledger, "id")


def test_a_window_without_artifacts_gives_an_empty_ledger() -> None:
    ledger = ledger_of([assistant("hello"), assistant("ok")])
    assert ledger.is_empty and ledger.render() == ""


def test_a_short_budget_keeps_what_matters_most() -> None:
    msgs = window()
    full = ledger_of(msgs)
    small = ledger_of(msgs, budget_bytes=len(HEADING) + 300)
    assert 0 < len(small.entries) < len(full.entries)
    assert texts(small, "failing") == texts(full, "failing")  # ranked first
    assert len(small.render()) <= len(HEADING) + 300
    # What is left out is what ranks lower (the room left is then filled with what still fits).
    dropped = [e for e in full.entries if e not in small.entries]
    assert min(e.rank for e in dropped) > min(e.rank for e in small.entries)


def test_a_reasoned_decision_goes_before_the_premise_of_a_question() -> None:
    decision = "I'd take the morning train, because the evening one is always full on Fridays."
    msgs = [
        user("Going to Porto for 3 days with 2 kids, what should we see?"),
        assistant("The riverside, the tiles museum and a boat trip."),
        user("Train or bus?"),
        assistant(decision),
    ]
    full = ledger_of(msgs)
    room = len(HEADING) + 120 + len(next(e.render() for e in full.entries if e.kind == "decision"))
    assert texts(ledger_of(msgs, budget_bytes=room), "decision") == [f'"{decision}"']


def test_no_newest_wins_cap_on_a_long_window() -> None:
    msgs: list[Message] = [user("go")]
    for i in range(60):
        msgs += ran(f"w{i}", f"echo x > out/file_{i}.txt", "", 0)
        msgs += ran(f"f{i}", f"make target_{i}", f"src/t{i}.c:1:1: error: bad {i}", 2)
    ledger = ledger_of(msgs)
    assert len(texts(ledger, "file")) == 60
    assert len(texts(ledger, "failing")) == 60


def test_entries_are_redacted() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    msgs = [
        user(f"use this token: {token} and never log it"),
        *ran("c1", f"curl -H 'Authorization: token {token}' https://api.github.com/x", "boom", 7),
    ]
    rendered = ledger_of(msgs).render()
    assert token not in rendered and "REDACTED" in rendered


def test_reused_call_ids_pair_each_command_with_its_own_result() -> None:
    # Ids numbered afresh in every turn (call_0, call_0, ...) are unique only within a turn.
    msgs = [
        *ran("call_0", "make build", "built", 0),
        *ran("call_0", "pytest -q", "E   assert 1 == 2\n1 failed", 1),
        *ran("call_0", "ls", "a.py", 2),
    ]
    assert texts(ledger_of(msgs), "failing") == [
        "`pytest -q` → exit 1: E   assert 1 == 2",
        "`ls` → exit 2",
    ]


# ---------------------------------------------------------------------------------------------
# Completing a summary


def test_complete_summary_appends_only_what_the_summary_left_out() -> None:
    ledger = ledger_of(window())
    summary = "## Active Task\nFixed app/settings.py and reproduce.py."
    completed, appended = complete_summary(summary, ledger)
    assert completed.startswith(summary) and HEADING in completed
    assert appended == len(ledger.entries) - 2
    assert "- file written: app/settings.py" not in completed


def test_a_command_counts_as_present_only_with_its_exit_code() -> None:
    ledger = ledger_of(window())
    (failing,) = ledger.of_kind("failing")
    bare = "We ran `cd /testbed && python -m pytest tests/test_app.py -q` and saw "
    error = "FAILED tests/test_app.py::test_load - KeyError: 'x'"
    assert not failing.present_in(bare + error)
    assert failing.present_in(bare.replace("saw", "exit 1:") + error)


def test_new_entries_join_an_existing_ledger_section_at_the_end() -> None:
    ledger = ledger_of(window())
    first = f"Summary.\n\n{HEADING}\n- url: https://old.example.com"
    completed, _ = complete_summary(first, ledger)
    assert completed.count(HEADING) == 1 and completed.startswith(first)


entries = st.builds(
    Entry,
    kind=st.sampled_from(["file", "user", "error", "url"]),
    text=st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), min_size=1, max_size=40),
    needles=st.just(()),
    rank=st.integers(0, 9),
    order=st.integers(0, 99),
).map(lambda e: Entry(e.kind, e.text, (e.text.strip(),) if e.text.strip() else (), e.rank, e.order))


@given(st.text(st.characters(codec="utf-8"), max_size=300), st.lists(entries, max_size=12))
def test_completed_summary_keeps_the_summary_holds_every_entry_and_is_stable(
    summary: str, items: list[Entry]
) -> None:
    ledger = Ledger(tuple(items))
    completed, appended = complete_summary(summary, ledger)
    assert completed.startswith(summary.rstrip())
    assert all(e.present_in(completed) for e in items)
    assert appended == sum(1 for e in items if not e.present_in(summary))
    assert complete_summary(completed, ledger) == (completed, 0)
    if appended == 0:
        assert completed == summary


@given(transcripts(max_turns=8), st.text(max_size=200))
def test_ledger_of_any_transcript_is_deterministic_secret_free_and_completes_idempotently(
    transcript: Transcript, summary: str
) -> None:
    ledger = ledger_of(transcript.messages)
    assert ledger_of(transcript.messages) == ledger
    completed, _ = complete_summary(summary, ledger)
    for secret in transcript.secrets:
        assert secret not in ledger.render()
        assert secret not in completed[len(summary) :]
    assert complete_summary(completed, ledger) == (completed, 0)


# ---------------------------------------------------------------------------------------------
# Real transcripts


def test_real_transcripts_give_a_ledger_of_exact_strings_within_its_budget() -> None:
    for name, wire in real_transcripts()[:12]:
        msgs = parse_messages(list(wire))
        ledger = ledger_of(msgs, budget_bytes=6_000)
        assert ledger.of_kind("file"), name
        assert len(ledger.render()) <= 6_000, name
        source = "\n".join(
            [m.text() for m in msgs]
            + [v for m in msgs for c in m.tool_calls for v in json.loads(c.arguments).values()]
        )
        flat = " ".join(source.split())
        for entry in ledger.entries:
            for needle in entry.needles:
                kept = needle.removesuffix("…").removesuffix(" …").rstrip()
                assert kept in source or " ".join(kept.split()) in flat, (name, entry)


def test_a_ledger_fitted_again_to_a_larger_budget_keeps_more_and_counts_what_it_left_out() -> None:
    msgs = window()
    small = ledger_of(msgs, budget_bytes=len(HEADING) + 300)
    assert small.left_out > 0
    again = small.refit(50_000)
    assert again == ledger_of(msgs) and again.left_out == 0


# Texts of hex runs just under and at seven, "#" before digits and not, non-ASCII (byte offsets
# differ from character offsets), and identifiers at the very start and end of a text.
_ID_TEXT = st.lists(
    st.sampled_from(
        ["abc123d", "abc12d", "#7", "# 7", "#x", "é", "€", "deadbeef", "-", "\n", " ", "zz"]
    )
).map("".join)


@given(st.lists(_ID_TEXT, min_size=1, max_size=8))
def test_texts_with_identifiers_answers_what_asking_each_text_answers(texts: list[str]) -> None:
    expected = {i for i, text in enumerate(texts) if may_hold_identifiers(text)}
    assert texts_with_identifiers(texts) == expected
