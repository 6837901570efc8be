"""The artifact ledger: what it collects from a window, how it caps, and how it completes a
summary (only what is missing, exactly once)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.data import real_transcripts
from tests.strategies import Transcript, transcripts
from worker.compressor import ledger_scan as scan
from worker.compressor.ledger import (
    HEADING,
    KINDS,
    Entry,
    Ledger,
    LedgerLimits,
    complete_summary,
    extract_ledger,
)
from worker.compressor.ledger_scan import error_lines, exit_code, identifiers, shell_written_files
from worker.compressor.messages import (
    Message,
    ToolCall,
    assistant,
    parse_messages,
    tool_result,
    user,
)
from worker.compressor.redact import redact_message
from worker.compressor.tokens import TokenCounter

SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
UUID = "123e4567-e89b-12d3-a456-426614174000"


def bash(call_id: str, command: str) -> Message:
    return assistant(None, [ToolCall(call_id, "bash", json.dumps({"command": command}))])


def ran(call_id: str, command: str, output: str, code: int | None = 0) -> list[Message]:
    """A bash call and its result in the format of our real transcripts."""
    tag = "" if code is None else f"<returncode>{code}</returncode>\n"
    return [bash(call_id, command), tool_result(call_id, f"{tag}<output>\n{output}\n</output>")]


def window() -> list[Message]:
    return [
        user(
            f"Fix the crash from issue owner/repo#12 (see #4321), introduced in commit {SHA[:7]}."
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
            None,
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
        *ran(
            "c5",
            "sed -i 's/old/new/' app/loader.py app/util.py && echo done >> notes.txt 2>/dev/null",
            "done",
        ),
        *ran(
            "c6",
            "git diff",
            "diff --git a/app/loader.py b/app/loader.py\n--- a/app/loader.py\n+++ b/app/loader.py\n@@ -1 +1 @@",
        ),
        *ran("c7", "git commit -am 'Fix loader'", f"[main {SHA[:7]}] Fix loader\n 2 files changed"),
        *ran(
            "c8",
            "curl -s https://docs.example.com/api/v2/config?lang=en.",
            "fatal: unable to access",
            None,
        ),
        assistant(f"Done. Job {UUID} can be checked at https://ci.example.com/jobs/77."),
    ]


def test_files_touched_come_from_arguments_shell_writes_and_diffs() -> None:
    files = [e.text for e in extract_ledger(window()).of_kind("file")]
    assert files == ["reproduce.py", "app/settings.py", "app/util.py", "notes.txt", "app/loader.py"]


def test_commands_are_paired_with_the_exit_code_of_their_result() -> None:
    commands = extract_ledger(window()).of_kind("command")
    assert [(c.text, c.exit_code) for c in commands] == [
        ("cd /testbed && python -m pytest tests/test_app.py -q", 1),
        ("cat > reproduce.py << 'EOF' …", 0),
        ("python reproduce.py", 1),
        ("sed -i 's/old/new/' app/loader.py app/util.py && echo done >> notes.txt 2>/dev/null", 0),
        ("git diff", 0),
        ("git commit -am 'Fix loader'", 0),
        ("curl -s https://docs.example.com/api/v2/config?lang=en.", None),
    ]


def test_error_lines_are_kept_exactly() -> None:
    errors = [e.text for e in extract_ledger(window()).of_kind("error")]
    assert errors == [
        "FAILED tests/test_app.py::test_load - KeyError: 'x'",
        "ValueError: bad config in app/settings.py",
        "fatal: unable to access",
    ]


def test_urls_and_identifiers_are_collected_in_order() -> None:
    ledger = extract_ledger(window())
    assert [e.text for e in ledger.of_kind("url")] == [
        "https://docs.example.com/api/v2/config?lang=en",
        "https://ci.example.com/jobs/77",
    ]
    assert [e.text for e in ledger.of_kind("id")] == ["owner/repo#12", "#4321", SHA[:7], UUID]


def test_items_are_the_exact_strings_grouped_by_kind() -> None:
    ledger = extract_ledger(window())
    assert ledger.items() == tuple(e.text for e in ledger.entries)
    kinds = [e.kind for e in ledger.entries]
    assert kinds == sorted(kinds, key=["file", "command", "error", "url", "id"].index)
    assert not ledger.is_empty


def test_a_window_without_artifacts_gives_an_empty_ledger() -> None:
    ledger = extract_ledger([user("hello"), assistant("Hi! How can I help?")])
    assert ledger.is_empty and ledger.items() == () and ledger.render() == ""
    assert complete_summary("## Goal\nGreet.", ledger) == ("## Goal\nGreet.", 0)


def test_repeated_command_is_kept_once_at_its_latest_run_with_its_latest_exit_code() -> None:
    msgs = [
        *ran("a", "pytest -q", "1 failed", 1),
        *ran("b", "ls", "x"),
        *ran("c", "pytest -q", "ok", 0),
    ]
    commands = extract_ledger(msgs).of_kind("command")
    assert [(c.text, c.exit_code) for c in commands] == [("ls", 0), ("pytest -q", 0)]


def test_each_category_keeps_only_its_most_recent_entries() -> None:
    msgs = [m for i in range(50) for m in ran(f"c{i}", f"echo {i} > out{i}.txt", "", 0)]
    ledger = extract_ledger(msgs, limits=LedgerLimits(files=3, commands=2))
    assert [e.text for e in ledger.of_kind("file")] == ["out47.txt", "out48.txt", "out49.txt"]
    assert [e.text for e in ledger.of_kind("command")] == [
        "echo 48 > out48.txt",
        "echo 49 > out49.txt",
    ]


def test_long_and_multiline_commands_are_cut() -> None:
    long_command = "python -c 'print(1)' " + "--flag " * 100
    msgs = [*ran("a", long_command, ""), *ran("b", "cat > a.py << EOF\nx = 1\nEOF", "")]
    first, second = extract_ledger(msgs, limits=LedgerLimits(command_chars=40)).of_kind("command")
    assert len(first.text) == 40 and first.text.endswith("…")
    assert long_command.startswith(first.needle)
    assert second.text == "cat > a.py << EOF …"


def test_the_whole_ledger_fits_its_character_budget() -> None:
    msgs = [
        m
        for i in range(300)
        for m in ran(
            f"c{i}",
            f"cat > pkg/module_{i}/file_{i}.py << EOF\nEOF",
            f"https://example.com/build/{i}\nValueError: case {i}",
        )
    ]
    ledger = extract_ledger(msgs, limits=LedgerLimits(total_chars=1000))
    assert len(ledger.render()) <= 1000
    assert {e.kind for e in ledger.entries} == {"file", "command", "error", "url"}


def test_tool_without_result_or_shell_has_no_exit_code_and_no_command() -> None:
    msgs = [
        assistant(None, [ToolCall("r", "read_file", json.dumps({"file_path": "src/a.py"}))]),
        tool_result("r", "exit code 3 is mentioned in this file"),
        bash("b", "make test"),
    ]
    ledger = extract_ledger(msgs)
    assert [e.text for e in ledger.of_kind("file")] == ["src/a.py"]
    assert [(c.text, c.exit_code) for c in ledger.of_kind("command")] == [("make test", None)]
    assert ledger.of_kind("command")[0].render() == "- command: `make test`"


def test_entries_are_redacted_before_they_are_cut() -> None:
    key = "sk-proj-Q9x7LmN2pR4tV6wY8zA1bC3dE5fG7hJ9"
    command = "curl -s -H 'Authorization: Bearer " + key + "' https://api.example.com/v1/models"
    msgs = [
        *ran("a", command, f"https://api.example.com/cb?access_token={key[8:]}&x=1"),
        user(f"ValueError: bad key {key}"),
    ]
    # Cut inside the key: a cut before redacting would leave a prefix no pattern recognizes.
    ledger = extract_ledger(msgs, limits=LedgerLimits(command_chars=48))
    assert "Q9x7LmN2" not in ledger.render()
    assert [e.text for e in ledger.of_kind("url")] == [
        "https://api.example.com/v1/models",
        "https://api.example.com/cb?access_token=[REDACTED]&x=1",
    ]
    assert [e.text for e in ledger.of_kind("error")] == ["ValueError: bad key sk-proj-[REDACTED]"]


# ---------------------------------------------------------------------------------------------
# complete_summary


def test_complete_summary_appends_only_what_the_summary_left_out() -> None:
    ledger = Ledger(
        (
            Entry("file", "app/loader.py"),
            Entry("file", "app/util.py"),
            Entry("command", "pytest -q", 1),
            Entry("error", "ValueError: bad config"),
        )
    )
    summary = "## Completed Actions\n1. Edited app/loader.py; `pytest -q` still fails."
    completed, appended = complete_summary(summary, ledger)
    assert appended == 2
    assert completed.startswith(summary + "\n\n" + HEADING + "\n")
    tail = completed[len(summary) :]
    assert "- file: app/util.py" in tail and "- error: ValueError: bad config" in tail
    assert "app/loader.py" not in tail and "pytest -q" not in tail


def test_complete_summary_is_unchanged_when_everything_is_present() -> None:
    ledger = Ledger((Entry("file", "a.py"), Entry("id", "#12")))
    assert complete_summary("Fixed #12 in a.py.", ledger) == ("Fixed #12 in a.py.", 0)


def test_complete_summary_is_idempotent() -> None:
    ledger = extract_ledger(window())
    once, appended = complete_summary("## Goal\nFix the loader.", ledger)
    assert appended == len(ledger.entries)
    assert complete_summary(once, ledger) == (once, 0)


def test_new_entries_join_an_existing_ledger_section_at_the_end() -> None:
    first, _ = complete_summary("## Goal\nx", Ledger((Entry("file", "a.py"),)))
    second, appended = complete_summary(
        first, Ledger((Entry("file", "a.py"), Entry("file", "b.py")))
    )
    assert appended == 1
    assert second.count(HEADING) == 1
    assert second == first + "\n- file: b.py"


def test_a_ledger_section_followed_by_other_sections_is_not_extended() -> None:
    summary = f"## Goal\nx\n\n{HEADING}\n- file: a.py\n\n## Remaining Work\nNone."
    out, appended = complete_summary(summary, Ledger((Entry("file", "b.py"),)))
    assert appended == 1 and out.count(HEADING) == 2 and out.endswith("- file: b.py")


def test_cut_entries_count_as_present_when_their_kept_part_is() -> None:
    entry = Entry("command", "cat > a.py << EOF …", 0)
    assert complete_summary("Ran `cat > a.py << EOF` to write it.", Ledger((entry,))) == (
        "Ran `cat > a.py << EOF` to write it.",
        0,
    )


entries = st.builds(
    Entry,
    st.sampled_from(["file", "command", "error", "url", "id"]),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=40).map(str.strip).filter(bool),
    st.one_of(st.none(), st.integers(-1, 255)),
)


@given(st.text(st.characters(codec="utf-8"), max_size=300), st.lists(entries, max_size=12))
def test_completed_summary_keeps_the_summary_holds_every_entry_and_is_stable(
    summary: str, items: list[Entry]
) -> None:
    ledger = Ledger(tuple(items))
    completed, appended = complete_summary(summary, ledger)
    assert completed.startswith(summary.rstrip())
    assert all(e.needle in completed for e in items)
    assert appended == sum(1 for e in items if e.needle not in summary)
    assert complete_summary(completed, ledger) == (completed, 0)
    if appended == 0:
        assert completed == summary


@given(transcripts(max_turns=8), st.text(max_size=200))
def test_ledger_of_any_transcript_is_deterministic_secret_free_and_completes_idempotently(
    transcript: Transcript, summary: str
) -> None:
    ledger = extract_ledger(transcript.messages)
    assert extract_ledger(transcript.messages) == ledger
    completed, _ = complete_summary(summary, ledger)
    for secret in transcript.secrets:
        assert secret not in ledger.render()
        assert secret not in completed[len(summary) :]
    assert complete_summary(completed, ledger) == (completed, 0)


DEFAULT_CAPS = LedgerLimits()
UNCAPPED = LedgerLimits(
    files=10**6, commands=10**6, errors=10**6, urls=10**6, ids=10**6, total_chars=10**6
)
CAPS = st.builds(
    LedgerLimits,
    files=st.integers(1, 4),
    commands=st.integers(1, 4),
    errors=st.integers(1, 3),
    urls=st.integers(1, 3),
    ids=st.integers(1, 3),
    total_chars=st.just(10**6),
)


@given(transcripts(max_turns=8), CAPS)
def test_capped_scan_keeps_the_newest_entries_of_the_full_scan(
    transcript: Transcript, limits: LedgerLimits
) -> None:
    # The capped scan stops early (newest first); it must keep what capping the full one keeps.
    full = extract_ledger(transcript.messages, limits=UNCAPPED)
    capped = extract_ledger(transcript.messages, limits=limits)
    for kind in KINDS:
        assert capped.of_kind(kind) == full.of_kind(kind)[-limits.cap(kind) :]  # exit codes too


def test_capped_scan_of_real_windows_matches_the_full_scan() -> None:
    for name, msgs in _real_windows()[:10]:
        full = extract_ledger(msgs, limits=UNCAPPED)
        capped = extract_ledger(msgs, limits=LedgerLimits(total_chars=10**6))
        for kind in KINDS:
            assert capped.of_kind(kind) == full.of_kind(kind)[-DEFAULT_CAPS.cap(kind) :], name


# ---------------------------------------------------------------------------------------------
# Scanners: what they must not mistake for artifacts


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("cat > a.py << 'EOF'\nif x > y.z: pass\nEOF", ["a.py"]),
        ('python -c "print(1 > 0)" > out.log 2>&1', ["out.log"]),
        ("grep -rn foo src/ 2>/dev/null | head", []),
        ("echo hi >&2", []),
        ("sed -n '1,5p' a.py", []),
        ("sed -i.bak -e 's/a/b/' -e 's/c/d/' x.py y.py", ["x.py", "y.py"]),
        ("sed -i '' 's/a/b/' mac.py", ["mac.py"]),
        ("perl -pi -e 's/a/b/' lib/x.pm", ["lib/x.pm"]),
        ("cp src/a.py backup/a.py && mv b.txt c.txt", ["backup/a.py", "c.txt"]),
        ("echo x | tee -a log/app.log", ["log/app.log"]),
        ("touch pkg/__init__.py; ls", ["pkg/__init__.py"]),
        ("echo 'unbalanced > quote.py", []),
        ("ls -la > listing", []),  # no extension and no directory: not recognizably a file
    ],
)
def test_shell_written_files(command: str, files: list[str]) -> None:
    assert shell_written_files(command) == files


@pytest.mark.parametrize(
    ("result", "code"),
    [
        ("<returncode>2</returncode>\n<output>x</output>", 2),
        ('{"output": "ok", "exit_code": 0}', 0),
        ("...\nProcess exited with code 137", 137),
        ("Exit code: 1\nstderr: boom", 1),
        ("all good", None),
        ("x" * 1000 + " exit code 5 " + "y" * 1000, None),  # mid-output: someone else's
    ],
)
def test_exit_code(result: str, code: int | None) -> None:
    assert exit_code(result) == code


def test_error_lines_skip_prose_docstrings_and_unrelated_lines() -> None:
    text = (
        "error handling is tricky\n"
        "    Raises:\n"
        "        ValueError: if the value is bad\n"
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "Testing: something after a cut traceback\n"
        "error: pathspec 'nope' did not match any file(s) known to git\n"
        "src/a.c:3:1: error: expected ';' before '}' token\n"
        "\x1b[31mFAILED\x1b[0m tests/test_a.py::test_b\n"
        "ERROR: test_x (pkg.tests.T.test_x)\n"
    )
    assert error_lines(text) == [
        "error: pathspec 'nope' did not match any file(s) known to git",
        "src/a.c:3:1: error: expected ';' before '}' token",
        "FAILED tests/test_a.py::test_b",
        "ERROR: test_x (pkg.tests.T.test_x)",
    ]


def test_identifiers_skip_colors_blob_ranges_and_plain_hex_words() -> None:
    text = (
        "color: #fff; #1 item; a#123b; index 836941edc..612d7d81b 100644; deadbeefdeadbeef; "
        "see django/django#15202 and git show abc1234 and 0a23456..89abcde and 1234567..7654321"
    )
    assert identifiers(text) == ["django/django#15202", "abc1234", "0a23456", "89abcde"]


def identifiers_without_gates(text: str) -> list[str]:
    """The reference: every identifier pattern run over the whole text, no shape test first."""
    found = [
        (m.start(), m.group(0))
        for m in scan._FULL_SHA.finditer(text)
        if scan._free_start(text, m.start()) and scan._is_sha(m.group(0))
    ]
    found += scan._git_context_shas(text, ranges=True)
    found += scan._issue_refs(text)
    found += [
        (m.start(), m.group(0))
        for m in scan._UUID.finditer(text)
        if scan._free_start(text, m.start(), "-")
    ]
    return [value for _, value in sorted(found)]


hexish = st.lists(
    st.one_of(
        st.sampled_from(
            [SHA, UUID, UUID.upper(), "3f78685", "9fceb02d", "..", "...", "commit ", "[main ", "]"]
        ),
        st.sampled_from(["HEAD is now at ", "#12", "a/b#3", "index ", "é", "\ud800", " ", "\n"]),
        st.text(alphabet="0123456789abcdefABCDEF.-g", max_size=12),
    ),
    max_size=10,
).map("".join)


@given(hexish)
def test_identifier_shape_tests_never_hide_a_match(text: str) -> None:
    assert identifiers(text) == identifiers_without_gates(text)


ARTIFACTS = [
    "https://a.io/x",
    "ValueError: bad",
    "FAILED t.py::x",
    "fatal: no",
    "Traceback (most recent call last):\n  f()\nKeyError: 1",
]


@pytest.mark.parametrize(
    ("may_hold", "scanner"),
    [
        (scan.may_hold_identifiers, identifiers),
        (scan.may_hold_urls, scan.urls),
        (scan.may_hold_errors, error_lines),
    ],
)
@given(st.lists(st.one_of(hexish, st.sampled_from(ARTIFACTS), st.text(max_size=40)), max_size=5))
def test_a_window_that_cannot_hold_a_kind_holds_none_in_any_message(
    may_hold: Callable[[str], bool], scanner: Callable[[str], list[str]], texts: list[str]
) -> None:
    if not may_hold("\n".join(texts)):
        assert all(scanner(text) == [] for text in texts)


# ---------------------------------------------------------------------------------------------
# Real transcripts


def _real_windows() -> list[tuple[str, list[Message]]]:
    out = []
    for name, wire in real_transcripts():
        out.append((name, [redact_message(m)[0] for m in parse_messages(list(wire))]))
    return out


def _sources(msgs: Sequence[Message]) -> str:
    parts = [m.text() for m in msgs]
    for m in msgs:
        for call in m.tool_calls:
            parts.extend(v for v in json.loads(call.arguments).values() if isinstance(v, str))
    return "\n".join(parts)


def test_real_transcripts_give_a_full_ledger_of_exact_strings(counter: TokenCounter) -> None:
    for name, msgs in _real_windows()[:12]:
        ledger = extract_ledger(msgs)
        assert ledger.of_kind("command") and ledger.of_kind("file"), name
        source = _sources(msgs)
        normalized = " ".join(source.split())
        for entry in ledger.entries:
            if entry.kind == "command":
                assert entry.needle.removesuffix(" …") in normalized, (name, entry)
            else:
                assert entry.needle.removesuffix("…") in source, (name, entry)
        assert counter.count_text(ledger.render()) <= 650, name


def test_a_ten_thousand_message_window_yields_a_ledger_of_a_few_hundred_tokens(
    counter: TokenCounter,
) -> None:
    msgs: list[Message] = []
    windows = _real_windows()
    while len(msgs) < 10_000:
        for _, window_msgs in windows:
            msgs.extend(window_msgs)
    started = time.perf_counter()
    ledger = extract_ledger(msgs)
    elapsed = time.perf_counter() - started
    assert counter.count_text(ledger.render()) <= 650
    assert elapsed < 30  # measured ~2 s on a loaded 2-core machine; linear in the window
    assert extract_ledger(msgs) == ledger  # deterministic


def test_reused_call_ids_pair_each_command_with_its_own_result() -> None:
    # Ids numbered afresh in every turn (call_0, call_0, ...) are unique only within a turn.
    msgs = [
        *ran("call_0", "make build", "built", 0),
        *ran("call_0", "pytest -q", "1 failed", 1),
        *ran("call_0", "ls", "a.py", 2),
    ]
    commands = extract_ledger(msgs).of_kind("command")
    assert [(c.text, c.exit_code) for c in commands] == [
        ("make build", 0),
        ("pytest -q", 1),
        ("ls", 2),
    ]
