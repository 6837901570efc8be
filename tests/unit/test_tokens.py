"""Counting joined text a part at a time gives exactly what encoding the whole text gives."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.data import real_transcripts
from worker.compressor.markers import (
    FIXED_SUMMARY_PARTS,
    SUMMARY_SEPARATOR,
    render_summary,
    summary_parts,
)
from worker.compressor.prompts import (
    FIXED_PARTS,
    PART_SEPARATOR,
    job_fixed_parts,
    prompt_parts,
    render_prompt,
)
from worker.compressor.tokens import TokenCounter, encoding_name_for_model
from worker.encodings import counter_for_model, get_encoding

# The engine the service counts with, and tiktoken itself as the reference for whole texts.
ENCODINGS = {model: counter_for_model(model).encoding for model in ("gpt-4", "gpt-4o")}
REFERENCE = {model: get_encoding(encoding_name_for_model(model)) for model in ENCODINGS}

# Pieces that stress the pre-tokenizer at a join: line breaks, other white space, slashes,
# punctuation before a break, contractions, digits, letters of other scripts.
pieces = st.sampled_from(
    ["\n", "\r\n", "\n\n", " ", "\t", "\u2028", "\x85", "/", "//", ".", ":", "'s", "'ll", "9",
     "123", "ab", "Zé", "中文", "#", "-", "x y", "https://a/b"]
)  # fmt: skip
texts = st.lists(st.one_of(pieces, st.text(max_size=6)), max_size=8).map("".join)
separators = st.sampled_from(["\n\n", "\n", " \n", "\r\n", ".\n", "\n/", " "])


@pytest.mark.parametrize("model", sorted(ENCODINGS))
@given(parts=st.lists(texts, max_size=5), sep=separators)
def test_joined_count_is_the_count_of_the_joined_text(
    model: str, parts: list[str], sep: str
) -> None:
    encoding, reference = ENCODINGS[model], REFERENCE[model]
    counter = TokenCounter(encoding)
    whole = len(reference.encode_ordinary(sep.join(parts)))
    assert counter.count_joined(parts, sep) == whole
    assert counter.count_joined(parts, sep, fixed=frozenset(parts)) == whole


long_texts = st.lists(st.one_of(pieces, st.text(max_size=12)), min_size=8, max_size=20).map("".join)


@pytest.mark.parametrize("model", sorted(ENCODINGS))
@given(parts=st.lists(long_texts, min_size=1, max_size=4), sep=separators)
def test_parts_counted_inside_a_join_then_alone_count_exactly(
    model: str, parts: list[str], sep: str
) -> None:
    # A part followed by the separator is counted in two pieces, and its own count is kept
    # for later: both must be what encoding the text gives.
    encoding, reference = ENCODINGS[model], REFERENCE[model]
    counter = TokenCounter(encoding)
    assert counter.count_joined(parts, sep) == len(reference.encode_ordinary(sep.join(parts)))
    for part in parts:
        assert counter.count_text(part) == len(reference.encode_ordinary(part))


@pytest.mark.parametrize("model", sorted(ENCODINGS))
def test_real_paragraphs_split_after_a_line_break_count_exactly(model: str) -> None:
    encoding, reference = ENCODINGS[model], REFERENCE[model]
    counter = TokenCounter(encoding)
    checked = 0
    for _, wire in real_transcripts()[:10]:
        for msg in wire:
            text = str(msg.get("content") or "")
            parts = text.split("\n\n")
            if len(parts) > 1:
                assert counter.count_joined(parts, "\n\n") == len(reference.encode_ordinary(text))
                checked += 1
    assert checked > 50


@pytest.mark.parametrize("model", sorted(ENCODINGS))
@pytest.mark.parametrize("previous", [None, "## Active Task\nkeep going\n"])
def test_prompt_and_summary_counts_by_part_match_the_rendered_text(
    model: str, previous: str | None
) -> None:
    encoding, reference = ENCODINGS[model], REFERENCE[model]
    kwargs = {
        "turns": "",
        "previous_summary": previous,
        "focus_topic": "auth",
        "budget_tokens": 4321,
        "today": date(2026, 1, 15),
    }
    job_parts = job_fixed_parts(date(2026, 1, 15), 4321)
    for counter in (TokenCounter(encoding), TokenCounter(encoding)):  # fresh, then shared counts
        parts = prompt_parts(**kwargs)  # type: ignore[arg-type]
        whole = len(reference.encode_ordinary(render_prompt(**kwargs)))  # type: ignore[arg-type]
        assert counter.count_joined(parts, PART_SEPARATOR, fixed=FIXED_PARTS) == whole
        assert counter.count_joined(parts, PART_SEPARATOR, fixed=job_parts) == whole
        for marker in (True, False):
            body = "## Active Task\nUser asked for a fix.\n"
            text = render_summary(body, with_end_marker=marker)
            counted = counter.count_joined(
                summary_parts(body, with_end_marker=marker),
                SUMMARY_SEPARATOR,
                fixed=FIXED_SUMMARY_PARTS,
            )
            assert counted == len(reference.encode_ordinary(text))


def test_an_encoding_of_another_family_is_counted_whole() -> None:
    class CharCounts:
        name = "gpt2"

        def encode_ordinary(self, text: str) -> list[int]:
            return [0] * len(text)

    counter = TokenCounter(CharCounts())
    assert not counter._splits("a\n", "b")
    assert counter.count_joined(["a", "b"], "\n") == 3


def test_the_dated_and_budgeted_paragraphs_are_fixed_for_their_job() -> None:
    parts = prompt_parts(
        turns="", previous_summary=None, focus_topic=None, budget_tokens=4321,
        today=date(2026, 1, 15),
    )  # fmt: skip
    job_parts = job_fixed_parts(date(2026, 1, 15), 4321)
    assert job_parts > FIXED_PARTS
    assert [p for p in parts if p in job_parts and p not in FIXED_PARTS] == [
        next(p for p in parts if "2026-01-15" in p),
        next(p for p in parts if "4,321 tokens" in p),
    ]
    assert not job_fixed_parts(date(2026, 1, 16), 4321) >= job_parts
