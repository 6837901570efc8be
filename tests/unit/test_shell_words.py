"""Our command-line splitter gives what ``shlex`` gives, on any line and on every real command."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.data import real_transcripts
from worker.compressor import paths
from worker.compressor.messages import parse_messages
from worker.compressor.shell_words import shell_tokens
from worker.compressor.tool_calls import shell_command


def shlex_tokens(line: str) -> list[str] | None:
    """The reference: the standard library's POSIX lexer, set up the way the ledger needs it."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return None


# Every character the rules treat specially, densely, plus a few that they do not.
special = st.text(alphabet=list(" \t\r\n#'\"\\();<>|&ai-=.é\x0b\x00"), max_size=24)
pieces = st.sampled_from(
    ["sed -i", "'s/a/b/'", '"x\\"y"', "2>&1", ">>", "&&", "|", "# note", "\\ ", "''", '""']
)
shaped = st.lists(st.one_of(pieces, special), max_size=8).map(" ".join)


@given(st.one_of(special, shaped, st.text(max_size=40)))
def test_splits_any_line_as_shlex_does(line: str) -> None:
    assert shell_tokens(line) == shlex_tokens(line)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("echo hi > out.txt 2>&1", ["echo", "hi", ">", "out.txt", "2", ">&", "1"]),
        ("sed -i 's/a b/c/' f.py", ["sed", "-i", "s/a b/c/", "f.py"]),
        ('echo "a \\"b\\" \\n" x', ["echo", 'a "b" \\n', "x"]),
        ("a#b c", ["a"]),  # a comment starts even inside a word
        ("echo 'a#b' \\#c", ["echo", "a#b", "#c"]),
        ("x=''", ["x="]),
        ("''", [""]),
        ("echo 'open", None),
        ("trailing \\", None),
        ("", []),
    ],
)
def test_splits_known_lines(line: str, expected: list[str] | None) -> None:
    assert shell_tokens(line) == expected
    assert shlex_tokens(line) == expected


def test_splits_every_real_command_line_as_shlex_does() -> None:
    lines = [
        line
        for _, wire in real_transcripts()
        for msg in parse_messages(list(wire))
        for call in msg.tool_calls
        if (command := shell_command(json.loads(call.arguments))) is not None
        for line in command.splitlines()
    ]
    assert len(lines) > 10_000
    assert [shell_tokens(line) for line in lines] == [shlex_tokens(line) for line in lines]


@given(st.one_of(special, shaped, st.text(max_size=40)))
def test_the_quick_tokenizer_agrees_with_the_full_one(line: str) -> None:
    # Lines without quoting are split by a plain pattern; a here-document's quoted delimiter
    # is unquoted first (its operand is never read as a file).
    unquoted = paths._HEREDOC.sub("<< EOF", line)
    assert paths._tokens(line) == shell_tokens(unquoted)
