"""The decision detector against its labeled set (bench/decision_precision.py): what it keeps
in real agent sessions is mostly decisions, and no planted decision of the retention corpora
is lost. A rule that starts keeping explanations again, or drops decisions, fails here."""

from __future__ import annotations

import pytest

from bench.decision_precision import BLIND, load_labeled, measure, measure_blind


@pytest.fixture(scope="module")
def result() -> dict[str, object]:
    return measure(load_labeled())


def test_the_labeled_set_is_whole() -> None:
    rows = load_labeled()
    assert {r["source"] for r in rows} == {"real", "dev", "heldout"}
    assert all(isinstance(r["decision"], bool) and r["text"].strip() for r in rows)
    assert all(r["decision"] for r in rows if r["source"] != "real")  # planted: all decisions


def test_most_of_what_is_kept_in_real_sessions_is_a_decision(result: dict[str, int]) -> None:
    kept = result["tp"] + result["fp"]
    assert kept > 0
    assert result["tp"] / kept >= 0.8, f"precision {result['tp']}/{kept}"
    # and the real decisions are still found
    assert result["tp"] / (result["tp"] + result["fn"]) >= 0.9


def test_every_planted_dev_decision_is_kept(result: dict[str, object]) -> None:
    kept, total = result["recall"]["dev"]  # type: ignore[index]
    assert kept == total


def test_the_blind_set_is_whole_and_every_row_is_measured() -> None:
    # Written without sight of the detector's rules: a measure, not a target (no threshold
    # here, so that nothing is tuned on it).
    rows = load_labeled(BLIND)
    assert all(r["sentence"] in r["message"] for r in rows)
    for lang in {r["lang"] for r in rows}:
        labels = [r["decision"] for r in rows if r["lang"] == lang]
        assert labels.count(True) == labels.count(False)
    assert sum(measure_blind(rows).values()) == len(rows)
