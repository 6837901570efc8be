"""The counting engine: splintr over tiktoken's own files and pattern, checked against tiktoken."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
import splintr
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.data import real_transcripts
from worker.encodings import (
    FastEncoding,
    counting_encoding,
    disagreement,
    fast_encoding,
    get_encoding,
    provision,
    strip_possessive,
)
from worker.settings import get_settings

NAMES = ("cl100k_base", "o200k_base")


def _fast(name: str) -> FastEncoding:
    engine = counting_encoding(name)
    assert isinstance(engine, FastEncoding), f"{name} is not counted by splintr: {engine!r}"
    return engine


@pytest.mark.parametrize("name", NAMES)
def test_the_default_engine_is_splintr_checked_against_tiktoken(name: str) -> None:
    engine = _fast(name)
    assert engine.name == name
    assert disagreement(engine, get_encoding(name)) is None


# Pieces where pre-tokenizers part ways: contractions, white-space runs before text or at the
# end, line breaks after punctuation or a slash, digit runs, marks, other scripts, emoji.
pieces = st.sampled_from(
    ["'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'M", "'", " ", "  ", "\t", "\n", "\r\n",
     "\n\n", " \n", "\u00a0", "\u2028", "\u3000", "\x0b", "\x85", "1", "12", "1234", "٣", "½",
     "/", "//", "!!", "...", "=>", "a", "Zé", "ß", "İ", "中文", "한국", "ع", "\u0301", "\u200d",
     "🙂", "👍🏽", "<|endoftext|>", "x" * 40,
     # Surrogates (ingestion refuses lone ones, but the engines must agree on every str):
     # lone, or a high and a low half side by side, which tiktoken joins into one character.
     "\ud800", "\udfff", "\ud83d", "\ude00"]
)  # fmt: skip
mixed = st.lists(st.one_of(pieces, st.text(max_size=8)), max_size=30).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=3_000)
@given(text=st.one_of(st.text(), mixed))
def test_splintr_counts_and_ids_are_tiktokens(name: str, text: str) -> None:
    engine, reference = _fast(name), get_encoding(name)
    ids = reference.encode_ordinary(text)
    assert engine.count_ordinary(text) == len(ids)
    assert engine.encode_ordinary(text) == ids


def _real_texts() -> Iterator[str]:
    for _, wire in real_transcripts():
        for msg in wire:
            content = msg.get("content")
            if isinstance(content, str):
                yield content
            for call in msg.get("tool_calls") or ():
                yield call["function"]["arguments"]


@pytest.mark.parametrize("name", NAMES)
def test_every_real_transcript_text_counts_the_same(name: str) -> None:
    engine, reference = _fast(name), get_encoding(name)
    texts = list(_real_texts())
    assert len(texts) > 9_000
    ours = [engine.count_ordinary(t) for t in texts]
    theirs = [len(reference.encode_ordinary(t)) for t in texts]
    assert ours == theirs


def test_threads_sharing_one_engine_count_what_one_thread_counts() -> None:
    # The worker runs its jobs on threads that share one engine per encoding.
    engine = _fast("cl100k_base")
    texts = list(_real_texts())[:3_000]
    expected = [engine.count_ordinary(t) for t in texts]
    results: list[list[int]] = []

    def count() -> None:
        results.append([engine.count_ordinary(t) for t in texts])

    threads = [threading.Thread(target=count) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_tiktokens_patterns_without_possessive_marks_are_splintrs_own() -> None:
    # An independent rendition to check ours against: splintr ships both patterns greedy.
    cl100k = get_encoding("cl100k_base")._pat_str
    assert "++" in cl100k and strip_possessive(cl100k) == splintr.CL100K_BASE_PATTERN
    o200k = get_encoding("o200k_base")._pat_str
    assert strip_possessive(o200k) == o200k == splintr.O200K_BASE_PATTERN


@pytest.mark.parametrize(
    ("pattern", "greedy"),
    [
        ("a++", "a+"),
        ("a?+b", "a?b"),
        ("a*+", "a*"),
        (r"\p{N}{1,3}+", r"\p{N}{1,3}"),
        (r"\p{L}+", r"\p{L}+"),  # the brace of \p{L} is not a counted repetition
        (r"\p{L}++", r"\p{L}+"),
        ("[+]+", "[+]+"),
        (r"[\]+]++", r"[\]+]+"),
        ("[]a]+", "[]a]+"),
        (r"\++", r"\++"),  # an escaped plus, then a quantifier
        (r"\+++", r"\++"),
        ("(?i:ab)+", "(?i:ab)+"),
        ("(?:a)++", "(?:a)+"),
        ("a+?b", "a+?b"),  # lazy, not possessive
        ("a{2}+", "a{2}"),
        ("a{,2}+", "a{,2}+"),  # not a counted repetition: a literal brace, then a quantifier
        (r"\s++$|\s+(?!\S)", r"\s+$|\s+(?!\S)"),
    ],
)
def test_strip_possessive(pattern: str, greedy: str) -> None:
    assert strip_possessive(pattern) == greedy


def test_an_unclosed_class_is_an_error() -> None:
    with pytest.raises(ValueError, match="unclosed character class"):
        strip_possessive("[abc")


def _tampered_vocabulary(name: str) -> bytes:
    lines = provision(name).read_bytes().splitlines()
    # Swap the ranks of two tokens: every count stays plausible, some ids change.
    first, second = lines[300].split(), lines[301].split()
    lines[300], lines[301] = first[0] + b" " + second[1], second[0] + b" " + first[1]
    return b"\n".join(lines) + b"\n"


def test_a_vocabulary_that_differs_from_tiktokens_is_found() -> None:
    reference = get_encoding("cl100k_base")
    pattern = strip_possessive(reference._pat_str)
    tokenizer = splintr.Tokenizer.from_bytes(_tampered_vocabulary("cl100k_base"), pattern, {})
    problem = disagreement(FastEncoding("cl100k_base", tokenizer), reference)
    assert problem is not None and problem.startswith("token 300 is")


def test_a_pattern_that_splits_differently_is_found() -> None:
    reference = get_encoding("cl100k_base")
    # Without the rule that leaves one space for the next word, runs of spaces split otherwise.
    pattern = strip_possessive(reference._pat_str).replace(r"|\s+(?!\S)", "")
    tokenizer = splintr.Tokenizer.from_bytes(provision("cl100k_base").read_bytes(), pattern, {})
    problem = disagreement(FastEncoding("cl100k_base", tokenizer), reference)
    assert problem is not None and "tiktoken counts" in problem


def test_an_engine_that_disagrees_is_not_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reference = get_encoding("cl100k_base")
    real_from_bytes = splintr.Tokenizer.from_bytes

    def tampered(data: bytes, pattern: str, special: dict[str, int]) -> splintr.Tokenizer:
        return real_from_bytes(_tampered_vocabulary("cl100k_base"), pattern, special)

    monkeypatch.setattr(splintr.Tokenizer, "from_bytes", staticmethod(tampered))
    with caplog.at_level(logging.WARNING, logger="worker.encodings"):
        assert fast_encoding("cl100k_base", reference) is None
    assert "splintr disagrees with tiktoken on cl100k_base" in caplog.text
    assert "counting with tiktoken" in caplog.text


def test_a_pattern_splintr_refuses_falls_back_to_tiktoken(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reference = get_encoding("cl100k_base")
    monkeypatch.setattr("worker.encodings.strip_possessive", lambda pattern: pattern)
    with caplog.at_level(logging.WARNING, logger="worker.encodings"):
        assert fast_encoding("cl100k_base", reference) is None
    assert "splintr cannot load cl100k_base" in caplog.text


def test_the_tiktoken_setting_skips_splintr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_TOKEN_ENGINE", "tiktoken")
    get_settings.cache_clear()
    counting_encoding.cache_clear()
    try:
        engine = counting_encoding("cl100k_base")
        assert isinstance(engine, tiktoken.Encoding)
        assert engine is get_encoding("cl100k_base")
    finally:
        monkeypatch.delenv("COMPACTION_TOKEN_ENGINE")
        get_settings.cache_clear()
        counting_encoding.cache_clear()
    assert isinstance(counting_encoding("cl100k_base"), FastEncoding)
