"""The needle screen answers exactly what asking every needle with ``in`` answers, and the
redactor built on it redacts exactly what running its passes one by one redacts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_redact import AWS_ID, GITHUB, JWT, OPENAI
from worker.compressor.needle_screen import NeedleScreen
from worker.compressor.redact import Redacted, redact_text
from worker.compressor.secret_patterns import PASSES

PASS_NEEDLES = [p.needles for p in PASSES]
SCREEN = NeedleScreen(PASS_NEEDLES)
ALL_NEEDLES = sorted({n for group in PASS_NEEDLES for n in group})


def asked_one_by_one(groups: Sequence[Sequence[str]], lowered: str) -> list[int]:
    return [i for i, needles in enumerate(groups) if any(n in lowered for n in needles)]


def redacted_pass_by_pass(text: str) -> Redacted:
    """The reference: every pass asked about the text as it is at that point."""
    total = 0
    for needles, apply in PASSES:
        if any(needle in text.lower() for needle in needles):
            text, count = apply(text)
            total += count
    return Redacted(text, total)


# Text made of needles, their pieces and a little else, so needles overlap and nest often.
pieces = st.sampled_from(
    [*ALL_NEEDLES, *(n[: len(n) // 2] for n in ALL_NEEDLES), *(n[1:] for n in ALL_NEEDLES)]
)
needle_soup = st.lists(st.one_of(pieces, st.text(max_size=3)), max_size=12).map("".join)
needle_groups = st.lists(
    st.lists(st.text(alphabet="abc-", min_size=1, max_size=4), min_size=1, max_size=3),
    min_size=1,
    max_size=6,
)


@given(needle_soup)
def test_screen_finds_the_passes_every_needle_check_finds(text: str) -> None:
    lowered = text.lower()
    assert SCREEN.present(lowered) == asked_one_by_one(PASS_NEEDLES, lowered)


@given(needle_groups, st.text(alphabet="abc-", max_size=30))
def test_screen_is_exact_for_any_needles(groups: list[list[str]], text: str) -> None:
    assert NeedleScreen(groups).present(text) == asked_one_by_one(groups, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("private key", ["private key", "key"]),  # one needle inside another's match
        ("sk-x", ["sk-", "k-x"]),  # one needle starting in another's last characters
        ("sk", []),
        ("nothing here", []),
    ],
)
def test_screen_sees_needles_hidden_by_another_match(text: str, expected: list[str]) -> None:
    groups = [["private key"], ["key"], ["sk-"], ["k-x"]]
    found = [groups[i][0] for i in NeedleScreen(groups).present(text)]
    assert sorted(found) == sorted(expected)


def test_screen_refuses_an_empty_needle() -> None:
    with pytest.raises(ValueError, match="empty needle"):
        NeedleScreen([["a", ""]])


secrets = st.sampled_from(
    [OPENAI, GITHUB, AWS_ID, JWT, "password=hunter2x", "Bearer abcdefgh12345678"]
)


@given(st.lists(st.one_of(pieces, secrets, st.text(max_size=4)), max_size=10).map(" ".join))
def test_redact_text_matches_running_every_pass_in_turn(text: str) -> None:
    assert redact_text(text) == redacted_pass_by_pass(text)
