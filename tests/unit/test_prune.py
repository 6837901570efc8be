from __future__ import annotations

import json

import pytest

from worker.compressor.cuts import line_excerpt, safe_prefix, snippet
from worker.compressor.messages import Message, ToolCall, assistant, system, tool_result, user
from worker.compressor.prune import PruneResult, prune_head, shrink_arguments
from worker.compressor.tooluse import Shown, read_tool_uses


def call(call_id: str, name: str, **args: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=json.dumps(args))


def bash_output(code: int, lines: int, last: str = "done") -> str:
    body = "\n".join(f"line {i}" for i in range(lines - 1)) + f"\n{last}"
    return f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>"


def prune(msgs: list[Message], end: int | None = None) -> PruneResult:
    end = len(msgs) if end is None else end
    reading = read_tool_uses(msgs)
    return prune_head(msgs, end, reading, Shown(), min_chars=200, arg_max_chars=200)


def prune_all(msgs: list[Message]) -> list[Message]:
    return prune(msgs).messages


def test_old_bash_output_becomes_a_line_naming_command_exit_code_and_size() -> None:
    msgs = [
        assistant(None, [call("c1", "bash", command="npm test")]),
        tool_result("c1", bash_output(0, 47)),
    ]
    assert prune_all(msgs)[1].content == "[bash] ran `npm test` -> exit 0, 47 lines"


def test_failed_command_line_quotes_the_first_error_line_not_the_last_line() -> None:
    output = (
        "<returncode>2</returncode>\n<output>\n"
        + "\n".join(f"gcc -c f{i}.c" for i in range(100))
        + "\nsrc/parse.c:41:9: error: 'len' undeclared (first use in this function)\n"
        + "\n".join(f"gcc -c g{i}.c" for i in range(100))
        + "\nmake: *** [Makefile:12: all] Error 1\n</output>"
    )
    msgs = [assistant(None, [call("c1", "bash", command="make")]), tool_result("c1", output)]
    assert prune_all(msgs)[1].content == (
        "[bash] ran `make` -> exit 2, 202 lines, "
        "error: \"src/parse.c:41:9: error: 'len' undeclared (first use in this function)\""
    )


def test_terminal_output_with_exit_code_line() -> None:
    output = "\n".join(["x" * 30] * 10) + "\nexit code: 2"
    msgs = [assistant(None, [call("c1", "terminal", command="make")]), tool_result("c1", output)]
    assert prune_all(msgs)[1].content == "[terminal] ran `make` -> exit 2, 10 lines"


def test_read_file_line_names_path_start_and_size() -> None:
    msgs = [
        assistant(None, [call("c1", "read_file", path="config.py", offset=40)]),
        tool_result("c1", "x" * 3400),
    ]
    assert prune_all(msgs)[1].content == (
        "[read_file] read config.py from line 40 -> 1 line, 3,400 chars"
    )


def account(name: str, arguments: str, output: str) -> str:
    msgs = [assistant(None, [ToolCall("c1", name, arguments)]), tool_result("c1", output)]
    return Shown().action(read_tool_uses(msgs).uses[0])


def test_search_write_fetch_and_unknown_tools_get_lines_too() -> None:
    out = "\n".join(["agent/x.py:1: compress"] * 12)
    assert account("search_files", '{"pattern": "compress", "path": "agent/"}', out) == (
        f"searched for 'compress' in agent/ -> 12 lines, {len(out):,} chars"
    )
    assert account("write_file", '{"path": "a.py", "content": "..."}', "Wrote 10 bytes") == (
        "wrote a.py -> Wrote 10 bytes"
    )
    assert account("web_fetch", '{"url": "https://x.org/a"}', "y" * 900) == (
        "fetched https://x.org/a -> 1 line, 900 chars"
    )
    assert account("delegate", '{"task": "refactor auth", "depth": 2}', "z" * 1800) == (
        "called with task=refactor auth, depth=2 -> 1 line, 1,800 chars"
    )
    assert account("mystery", "not json", "q" * 300) == "called -> 1 line, 300 chars"
    assert account(
        "edit_file",
        '{"path": "a.py", "old_string": "x", "new_string": "y"}',
        "Error: String 'x' not found in file",
    ) == ("tried to edit a.py -> failed: \"Error: String 'x' not found in file\"")


def test_a_result_without_its_call_stays_for_the_sanitizer() -> None:
    # The assembly drops a result whose call is not in the transcript (and says so).
    msgs = [tool_result("gone", "o" * 500, name="browser")]
    assert prune_all(msgs)[0] is msgs[0]


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
    # The head is the first four; the newest copy (c3) stays in the tail, untouched.
    result = prune(msgs, 4)
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
    result = prune(msgs)
    assert (result.pruned_tool_outputs, result.deduplicated_tool_outputs) == (1, 0)
    assert result.shrunk_tool_args == 1
    assert result.messages[0] is msgs[0] and result.messages[4] is msgs[4]


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
    assert prune_all([msg])[0] is msg


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
    assert out[3].content == '[bash] ran `pytest -x` -> exit 1, 40 lines, error: "1 failed"'


def test_an_excerpt_keeps_error_lines_before_head_and_tail_in_whole_lines() -> None:
    lines = [f"line {i} " + "x" * 30 for i in range(400)]
    lines[200] = "ValueError: the one line that matters"
    text = "\n".join(lines)
    at = text.index("ValueError")
    excerpt = line_excerpt(text, head=200, tail=200, marked=[at], room=500)
    assert "ValueError: the one line that matters" in excerpt
    assert excerpt.startswith("line 0 ") and excerpt.rstrip().endswith("x" * 30)
    assert "lines omitted]" in excerpt and len(excerpt) < 700
    kept = [line for line in excerpt.splitlines() if not line.startswith("…")]
    assert all(line in lines for line in kept)  # whole lines only


def test_an_excerpt_of_a_short_text_is_the_text() -> None:
    assert line_excerpt("a\nb", head=1, tail=1, marked=[], room=10) == "a\nb"
