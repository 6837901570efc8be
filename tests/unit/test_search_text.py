"""What of a message is searchable, how a query splits into terms, and how a snippet looks."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from worker.store.search_text import (
    ELLIPSIS,
    HIGHLIGHT_CLOSE,
    HIGHLIGHT_OPEN,
    MAX_INDEXED_CHARS,
    MAX_QUERY_TERMS,
    parse_query,
    searchable_text,
    snippet,
    tool_name_of,
    tool_names_by_call_id,
)


def test_json_tool_output_is_searchable_as_it_was_printed() -> None:
    output = {"output": "File \"/app/main.py\", line 3\nKeyError: 'x'", "exit_code": 1}
    text = searchable_text({"role": "tool", "tool_call_id": "c1", "content": json.dumps(output)})
    assert "File \"/app/main.py\", line 3\nKeyError: 'x'" in text
    assert "exit_code: 1" in text


def test_tool_arguments_are_decoded_and_named() -> None:
    call = {"id": "c1", "type": "function", "function": {
        "name": "terminal", "arguments": json.dumps({"command": 'grep -rn "TODO" src/'}),
    }}  # fmt: skip
    text = searchable_text({"role": "assistant", "content": "Looking.", "tool_calls": [call]})
    assert text.splitlines() == ["Looking.", "terminal", 'command: grep -rn "TODO" src/']


def test_text_that_is_not_json_stays_as_it_is() -> None:
    for raw in ("{not json", "[1, 2", "plain words", "{}"):
        text = searchable_text({"role": "tool", "tool_call_id": "c", "content": raw})
        assert text == raw or (raw == "{}" and text == "")
    # a user's JSON is text they typed: kept as they typed it
    assert searchable_text({"role": "user", "content": '{"a": 1}'}) == '{"a": 1}'


def test_text_parts_count_and_images_do_not() -> None:
    message = {"role": "user", "content": [
        {"type": "text", "text": "see the screenshot"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]}  # fmt: skip
    assert searchable_text(message) == "see the screenshot"


def test_a_huge_output_is_indexed_up_to_the_limit() -> None:
    message = {"role": "tool", "tool_call_id": "c", "content": "x" * (MAX_INDEXED_CHARS + 10)}
    assert len(searchable_text(message)) == MAX_INDEXED_CHARS


def test_tool_results_name_the_tool_their_call_ran() -> None:
    calls = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "terminal", "arguments": "{}"}},
    ]}  # fmt: skip
    names = tool_names_by_call_id([calls])
    assert names == {"a": "read_file", "b": "terminal"}
    assert tool_name_of({"role": "tool", "tool_call_id": "b", "content": ""}, names) == "terminal"
    assert tool_name_of(calls, names) == "read_file"
    orphan = {"role": "tool", "tool_call_id": "z", "name": "web", "content": ""}
    assert tool_name_of(orphan, names) == "web"
    assert tool_name_of({"role": "user", "content": "hi"}, names) is None
    assert searchable_text(orphan, tool_name="ignored") == "web"


def test_queries_split_at_spaces_and_keep_quoted_phrases() -> None:
    q = parse_query('KeyError: "no such table" --force  x.py:42 KEYERROR:')
    assert q.terms == ("KeyError:", "no such table", "--force", "x.py:42")
    assert parse_query('say "hi').terms == ("say", '"hi')  # an unclosed quote is a character
    assert parse_query("   ").terms == ()
    assert len(parse_query(" ".join(f"t{i}" for i in range(50))).terms) == MAX_QUERY_TERMS
    assert parse_query("ab cde").short == ("ab",) and parse_query("ab cde").indexed == ("cde",)


def test_a_snippet_marks_every_match_near_the_first() -> None:
    text = "a" * 500 + " the KeyError here and keyerror there " + "b" * 500
    out = snippet(text, parse_query("keyerror"), width=60)
    assert out.startswith(ELLIPSIS) and out.endswith(ELLIPSIS)
    assert out.count(HIGHLIGHT_OPEN) == 2
    assert f"{HIGHLIGHT_OPEN}KeyError{HIGHLIGHT_CLOSE}" in out
    assert snippet("short text", parse_query("nothing")) == "short text"


def test_overlapping_matches_are_marked_once() -> None:
    out = snippet("tasks.py", parse_query("tasks task .py"))
    assert out == f"{HIGHLIGHT_OPEN}tasks.py{HIGHLIGHT_CLOSE}"


def test_a_fold_that_changes_lengths_still_gives_a_snippet() -> None:
    out = snippet("Die Straße ist lang", parse_query("straße"))
    assert f"{HIGHLIGHT_OPEN}Straße{HIGHLIGHT_CLOSE}" in out


# (A text that holds the marks itself cannot be read back by taking them out: its own case is
# the example after this one.)
@given(
    st.text(min_size=1, max_size=300).filter(lambda t: "[[" not in t and "]]" not in t),
    st.text(min_size=1, max_size=8).filter(str.strip),
)
def test_a_snippet_is_the_text_with_marks_and_cuts(text: str, term: str) -> None:
    out = snippet(text, parse_query(term), width=80)
    plain = out.replace(HIGHLIGHT_OPEN, "").replace(HIGHLIGHT_CLOSE, "").strip(ELLIPSIS)
    assert plain in text


def test_a_text_that_holds_the_marks_keeps_them_beside_ours() -> None:
    assert snippet("0[[0", parse_query("0"), width=80) == "[[0]][[[[0]]"
