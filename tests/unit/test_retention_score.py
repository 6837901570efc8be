"""The retention bench's scorer: what counts as a kept artifact, and what does not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.retention.score import (
    exit_code_pattern,
    kept,
    reached_prompt,
    result_digest,
    stale_as_current,
    transcript_text,
)

SYSTEM = {"role": "system", "content": "You are a coding agent."}


def artifact(kind: str, needle: str, **related: Any) -> dict[str, Any]:
    return {"kind": kind, "needle": needle, "depth": 0.3, "message_index": 5, "related": related}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def call(call_id: str, arguments: dict[str, Any] | str, name: str = "bash") -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def tool(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# --- needles in text ----------------------------------------------------------------------


def test_needle_in_a_message_is_kept() -> None:
    a = artifact("constraint", "keep the public API of parse() unchanged")
    out = [SYSTEM, user("Thanks. Also, keep the public API of parse() unchanged. Go on.")]
    assert kept(a, out)


def test_needle_only_in_the_input_is_not_kept() -> None:
    a = artifact("user_fact", "the staging port is 8443")
    before = [SYSTEM, user("FYI the staging port is 8443, not the default."), assistant("Noted.")]
    after = [SYSTEM, user("[summary] The user gave some deployment details."), assistant("Noted.")]
    assert kept(a, before)
    assert not kept(a, after)


def test_a_near_miss_is_not_kept() -> None:
    a = artifact("user_fact", "the staging port is 8443")
    assert not kept(a, [SYSTEM, user("the staging port is 844")])
    assert not kept(a, [SYSTEM, user("the staging port was 8443")])


def test_whitespace_runs_are_collapsed_on_both_sides() -> None:
    a = artifact("error_line", "E       assert 9 == 61")
    out = [SYSTEM, assistant("Still failing with `E assert 9 ==\n 61` in the profile test.")]
    assert kept(a, out)


def test_needle_in_tool_call_arguments_raw_or_decoded() -> None:
    path = artifact("file_edited", "app/(tabs)/settings.tsx")
    quoted = artifact("error_line", 'psql:db/m.sql:4: ERROR:  relation "users" does not exist')
    chinese = artifact("constraint", "部署之前先跑一遍集成测试")
    out = [
        SYSTEM,
        assistant(None, call("c1", {"command": "sed -i 's/a/b/' 'app/(tabs)/settings.tsx'"})),
        tool("c1", "ok"),
        # the quotes are escaped in the raw JSON: only the decoded value matches
        assistant(
            None,
            call("c2", {"note": 'psql:db/m.sql:4: ERROR:  relation "users" does not exist'}),
            call("c3", json.dumps({"text": "记住 部署之前先跑一遍集成测试"}, ensure_ascii=True)),
        ),
        tool("c2", "ok"),
        tool("c3", "ok"),
    ]
    assert kept(path, out)
    assert kept(quoted, out)
    assert kept(chinese, out)


def test_needle_in_content_parts() -> None:
    a = artifact("decision", "I'll keep the retry in the client rather than the worker.")
    out: list[dict[str, Any]] = [
        SYSTEM,
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "I'll keep the retry in the client rather than the worker.",
                }
            ],
        },
    ]
    assert kept(a, out)


def test_tool_names_and_ids_are_not_text() -> None:
    a = artifact("file_named", "call_0042")
    out = [SYSTEM, assistant(None, call("call_0042", {"command": "ls"})), tool("call_0042", "x")]
    assert not kept(a, out)


# --- exit codes -------------------------------------------------------------------------------

FAILED_OUTPUT = (
    "<returncode>2</returncode>\n<output>\nmake: *** [Makefile:12: build] Error 1\n</output>"
)


def exit_code(command: str = "make -j4 build", code: int = 2, **extra: Any) -> dict[str, Any]:
    related = {"command": command, "exit_code": code, "call_id": "c9", **extra}
    return artifact("exit_code", str(code), **related)


def test_exit_code_kept_with_its_original_call_and_result() -> None:
    a = exit_code(result_digest=result_digest(FAILED_OUTPUT))
    out = [
        SYSTEM,
        assistant(None, call("c9", {"command": "make -j4 build"})),
        tool("c9", FAILED_OUTPUT),
    ]
    assert kept(a, out)


def test_exit_code_kept_when_the_kept_result_still_shows_the_code() -> None:
    a = exit_code(result_digest="not this one")
    result = json.dumps({"output": "(long output pruned)", "exit_code": 2})
    out = [SYSTEM, assistant(None, call("c9", {"command": "make -j4 build"})), tool("c9", result)]
    assert kept(a, out)


def test_exit_code_lost_when_the_result_was_pruned_without_it() -> None:
    a = exit_code(result_digest=result_digest(FAILED_OUTPUT))
    out = [
        SYSTEM,
        assistant(None, call("c9", {"command": "make -j4 build"})),
        tool("c9", "[old tool output cleared: 1 line]"),
    ]
    assert not kept(a, out)


def test_exit_code_lost_when_the_call_is_gone_even_if_a_result_with_the_id_remains() -> None:
    a = exit_code(result_digest=result_digest(FAILED_OUTPUT))
    out = [SYSTEM, user("hi"), tool("c9", FAILED_OUTPUT)]
    assert not kept(a, out)


@pytest.mark.parametrize(
    "line",
    [
        "- `make -j4 build` failed: exit 2",
        "- make -j4 build -> exit code 2",
        "- make -j4 build (exit code: 2)",
        "- make -j4 build: exit status 2",
        '{"cmd": "make -j4 build", "exit_code": 2}',
        "make -j4 build <returncode>2</returncode>",
        "make -j4 build ... Exit Code 2",
    ],
)
def test_exit_code_kept_in_a_line_with_the_command(line: str) -> None:
    assert kept(exit_code(), [SYSTEM, user("[summary]\n" + line + "\nmore")])


def test_exit_code_line_rule_accepts_the_first_40_characters_of_a_long_command() -> None:
    command = (
        'psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f db/migrations/20260314_0012_add_tenant_id.sql'
    )
    a = exit_code(command=command, code=3)
    summary = f"- `{command[:40]}…` → exit 3: ERROR:  relation does not exist"
    assert kept(a, [SYSTEM, user(summary)])


@pytest.mark.parametrize(
    "text",
    [
        "- make -j4 build -> exit 1",  # another code
        "- make -j4 build -> exit 20",  # a longer number
        "- make -j4 build failed\n- exit 2",  # command and code on different lines
        "- make -j4 build failed with code 2",  # not one of the accepted spellings
        "- cargo build -> exit 2",  # another command
    ],
)
def test_exit_code_not_kept(text: str) -> None:
    assert not kept(exit_code(), [SYSTEM, user(text)])


def test_exit_code_in_the_input_only_is_not_kept() -> None:
    a = exit_code(result_digest=result_digest(FAILED_OUTPUT))
    before = [
        SYSTEM,
        assistant(None, call("c9", {"command": "make -j4 build"})),
        tool("c9", FAILED_OUTPUT),
    ]
    after = [SYSTEM, user("[summary] The build was attempted.")]
    assert kept(a, before)
    assert not kept(a, after)


def test_exit_code_pattern_does_not_match_inside_other_numbers() -> None:
    assert exit_code_pattern(1).search("exit 1")
    assert not exit_code_pattern(1).search("exit 137")
    assert exit_code_pattern(137).search("exit code: 137")
    assert not exit_code_pattern(13).search('"exit_code": 137')


# --- what the summarizer saw ---------------------------------------------------------------------


def test_reached_prompt() -> None:
    a = artifact("error_line", "error[E0425]: cannot find value `due_date` in this scope")
    prompt = "TURN 12 [tool bash]\nerror[E0425]: cannot   find value `due_date` in this scope\n"
    assert reached_prompt(a, ["other call", prompt])
    assert not reached_prompt(a, ["error[E0425]: cannot find value `tenant_id` in this scope"])
    assert not reached_prompt(a, [])


def test_transcript_text_covers_content_and_arguments() -> None:
    out = [SYSTEM, assistant("thinking", call("c1", {"command": "ls  -la"})), tool("c1", "a\n b")]
    text = transcript_text(out)
    assert "thinking" in text
    assert "ls -la" in text
    assert "a b" in text


# --- value updates ------------------------------------------------------------------------


def test_a_value_update_is_kept_by_its_latest_value() -> None:
    a = artifact("current_value", "ap-south-1", superseded=["us-west-3"])
    assert kept(a, [SYSTEM, user("Cambio de planes: la región ahora es ap-south-1.")])
    assert not kept(a, [SYSTEM, user("la región de los servidores, us-west-3.")])


def test_an_old_value_on_a_line_without_superseded_is_given_as_current() -> None:
    a = artifact("current_value", "ap-south-1", superseded=["us-west-3"])
    bare = [SYSTEM, assistant("- region: us-west-3\n- region: ap-south-1")]
    marked = [SYSTEM, assistant("- region: ap-south-1 (superseded: us-west-3)")]
    marked_any_case = [SYSTEM, assistant("region ap-south-1; Superseded US-WEST-3")]
    gone = [SYSTEM, assistant("- region: ap-south-1")]
    assert stale_as_current(a, bare) is True
    assert stale_as_current(a, marked) is False
    assert stale_as_current(a, marked_any_case) is False
    assert stale_as_current(a, gone) is False


def test_the_stale_check_reads_lines_one_by_one_and_tool_arguments_too() -> None:
    a = artifact("current_value", "9月28日", superseded=["9月17日"])
    split = [SYSTEM, assistant("superseded values:\n基金报告: 9月17日")]
    in_args = [SYSTEM, assistant(None, call("c1", {"note": "基金报告 9月17日"})), tool("c1", "ok")]
    assert stale_as_current(a, split) is True
    assert stale_as_current(a, in_args) is True


def test_an_artifact_without_a_superseded_value_has_no_stale_check() -> None:
    assert stale_as_current(artifact("user_fact", "port 8443"), [SYSTEM]) is None
