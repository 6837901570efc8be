from __future__ import annotations

import json

import pytest

from worker.compressor.messages import Message, ToolCall, assistant, system, tool_result, user
from worker.compressor.prune import (
    describe_call,
    prune_window,
    safe_prefix,
    shrink_arguments,
    snippet,
)


def call(call_id: str, name: str, **args: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=json.dumps(args))


def bash_output(code: int, lines: int, last: str = "done") -> str:
    body = "\n".join(f"line {i}" for i in range(lines - 1)) + f"\n{last}"
    return f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>"


def prune_all(msgs: list[Message]) -> list[Message]:
    return prune_window(msgs, 0, len(msgs), min_chars=200, arg_max_chars=200).messages


def test_old_bash_output_becomes_a_line_naming_command_exit_code_and_size() -> None:
    msgs = [
        assistant(None, [call("c1", "bash", command="npm test")]),
        tool_result("c1", bash_output(0, 47)),
    ]
    assert prune_all(msgs)[1].content == "[bash] ran `npm test` -> exit 0, 47 lines"


def test_failed_command_line_quotes_the_last_output_line() -> None:
    msgs = [
        assistant(None, [call("c1", "bash", command="pytest -x")]),
        tool_result("c1", bash_output(1, 212, last="FAILED tests/test_a.py::test_b - KeyError")),
    ]
    line = prune_all(msgs)[1].content
    assert line == (
        '[bash] ran `pytest -x` -> exit 1, 212 lines, last: "FAILED tests/test_a.py::test_b - KeyError"'
    )


def test_terminal_output_with_exit_code_line() -> None:
    output = "\n".join(["x" * 30] * 10) + "\nexit code: 2"
    assert describe_call("terminal", json.dumps({"command": "make"}), output).startswith(
        "ran `make` -> exit 2, 11 lines"
    )


def test_read_file_line_names_path_start_and_size() -> None:
    msgs = [
        assistant(None, [call("c1", "read_file", path="config.py", offset=40)]),
        tool_result("c1", "x" * 3400),
    ]
    assert prune_all(msgs)[1].content == "[read_file] read config.py from line 40 (3,400 chars)"


def test_search_write_fetch_and_unknown_tools_get_lines_too() -> None:
    out = "\n".join(["agent/x.py:1: compress"] * 12)
    assert describe_call("search_files", '{"pattern": "compress", "path": "agent/"}', out) == (
        f"searched for 'compress' in agent/ -> 12 lines, {len(out):,} chars"
    )
    assert describe_call("write_file", '{"path": "a.py", "content": "..."}', "Wrote 10 bytes") == (
        "wrote a.py -> Wrote 10 bytes"
    )
    assert describe_call("web_fetch", '{"url": "https://x.org/a"}', "y" * 900) == (
        "fetched https://x.org/a (900 chars)"
    )
    assert describe_call("delegate", '{"task": "refactor auth", "depth": 2}', "z" * 1800) == (
        "called with task=refactor auth, depth=2 -> 1 line, 1,800 chars"
    )
    assert describe_call("mystery", "not json", "q" * 300) == "called -> 1 line, 300 chars"


def test_result_without_a_known_call_uses_its_name() -> None:
    msgs = [tool_result("gone", "o" * 500, name="browser")]
    assert prune_all(msgs)[0].content == "[browser] called -> 1 line, 500 chars"


def test_short_outputs_stay_as_they_are() -> None:
    msgs = [assistant(None, [call("c1", "bash", command="ls")]), tool_result("c1", "a.py b.py")]
    assert prune_all(msgs)[1] is msgs[1]


def test_identical_outputs_keep_the_newest_and_point_older_copies_to_it() -> None:
    big = bash_output(0, 80)
    msgs = [
        assistant(None, [call("c1", "bash", command="cat a")]),
        tool_result("c1", big),
        assistant(None, [call("c2", "bash", command="cat a")]),
        tool_result("c2", big),
        assistant(None, [call("c3", "bash", command="cat a")]),
        tool_result("c3", big),
    ]
    # The window is the first four; the newest copy (c3) stays in the tail, untouched.
    result = prune_window(msgs, 0, 4, min_chars=200, arg_max_chars=200)
    assert result.deduplicated_tool_outputs == 2
    assert result.pruned_tool_outputs == 0
    assert result.messages[1].content == result.messages[3].content
    assert "later result of call c3" in str(result.messages[1].content)
    assert len(result.messages) == 4


def test_counts_report_what_each_pass_did() -> None:
    msgs = [
        system("s"),
        user("go"),
        assistant(None, [call("c1", "write_file", path="a.py", content="x" * 5000)]),
        tool_result("c1", bash_output(0, 50)),
        assistant("done"),
    ]
    result = prune_window(msgs, 1, 5, min_chars=200, arg_max_chars=200)
    assert (result.pruned_tool_outputs, result.deduplicated_tool_outputs) == (1, 0)
    assert result.shrunk_tool_args == 1
    assert result.messages[0] is msgs[1] and result.messages[3] is msgs[4]


def test_shrunk_arguments_stay_valid_json_and_keep_non_strings() -> None:
    content = "def f(x):\n    return x\n" * 200
    args = json.dumps(
        {"path": "a.py", "content": content, "n": 3, "flags": [True, None, "y" * 900]}
    )
    shrunk = shrink_arguments(args, 200)
    assert shrunk is not None
    parsed = json.loads(shrunk)
    assert parsed["path"] == "a.py" and parsed["n"] == 3
    assert parsed["flags"][:2] == [True, None]
    assert parsed["content"].startswith(content[:190])
    assert f"{len(content) - 200:,} chars cut" in parsed["content"]
    # One unbroken 900-character token is dropped whole: a fragment of it could be a secret.
    assert parsed["flags"][2] == "…[700 chars cut]"
    assert len(shrunk) < 600


def test_arguments_that_need_no_cut_keep_their_exact_text() -> None:
    args = '{"command":   "ls -la",   "cwd": "/tmp"}'
    assert shrink_arguments(args, 200) is None
    long_but_fine = json.dumps({"a": "x" * 150, "b": "y" * 150})
    assert shrink_arguments(long_but_fine, 200) is None


def test_non_json_arguments_pass_through() -> None:
    assert shrink_arguments("x" * 5000, 200) is None
    assert shrink_arguments("{broken" + "x" * 500, 200) is None
    msg = assistant(None, [ToolCall(id="c1", name="f", arguments="{broken" + "x" * 500)])
    assert prune_window([msg], 0, 1, min_chars=200, arg_max_chars=200).messages[0] is msg


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("export KEY=sk-proj-abcdefghijklmnopqrstuvwxyz", 20, "export "),
        ("run it now please", 9, "run it "),
        ("echo 'correct horse battery' done", 20, "echo "),
        ("a b c", 3, "a b"),
    ],
)
def test_safe_prefix_never_keeps_a_fragment_of_a_word_or_quote(
    text: str, limit: int, expected: str
) -> None:
    assert safe_prefix(text, limit) == expected


def test_snippet_is_one_line() -> None:
    assert snippet("cd /x &&\n  make   test") == "cd /x && make test"
    assert snippet("word " * 40, 20) == "word word word word…"


def test_reused_call_ids_describe_each_result_by_its_own_call() -> None:
    # Some providers number the calls of every turn afresh: the ids repeat across turns.
    msgs = [
        assistant(None, [call("call_0", "bash", command="ls -la")]),
        tool_result("call_0", bash_output(0, 30)),
        assistant(None, [call("call_0", "bash", command="pytest -x")]),
        tool_result("call_0", bash_output(1, 40, last="1 failed")),
        user("and?"),
    ]
    out = prune_all(msgs)
    assert out[1].content == "[bash] ran `ls -la` -> exit 0, 30 lines"
    assert out[3].content == '[bash] ran `pytest -x` -> exit 1, 40 lines, last: "1 failed"'
