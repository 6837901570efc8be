"""The held-out retention corpus: its files load, are valid transcripts, and every needle is
where the truth says (and nowhere else but a fixed failure's re-run); its generators are
deterministic and its content is not the dev corpus's."""

from __future__ import annotations

from functools import cache
from random import Random
from typing import Any

import pytest

from bench import invariants
from bench.retention import corpus, heldout_failures
from bench.retention.plants import KINDS
from bench.retention.score import collapse, kept, message_text, transcript_text

SPECS = {spec.name: spec for spec in corpus.HELDOUT_SPECS}
# A needle is in the messages of its plant: the call (or message) and the result after it.
PLANT_SPAN = 3


@cache
def heldout() -> tuple[dict[str, Any], ...]:
    return tuple(corpus.load_corpus(corpus.HELDOUT_DIR, "*", corpus.HELDOUT_SPECS))


def test_every_heldout_session_is_there_in_spec_order() -> None:
    assert [d["name"] for d in heldout()] == list(SPECS)
    for doc in heldout():
        spec = SPECS[doc["name"]]
        assert (doc["format"], doc["language"]) == (spec.format, spec.language)
        lo, hi = corpus.size_limits(spec)
        assert lo <= len(doc["messages"]) <= hi


@pytest.mark.parametrize("name", list(SPECS))
def test_session_is_a_valid_transcript(name: str) -> None:
    doc = next(d for d in heldout() if d["name"] == name)
    assert invariants.check_transcript(doc["messages"], doc["messages"]) == []


@pytest.mark.parametrize("name", list(SPECS))
def test_every_needle_is_where_it_was_planted_and_nowhere_else(name: str) -> None:
    doc = next(d for d in heldout() if d["name"] == name)
    msgs = doc["messages"]
    texts = [message_text(m) for m in msgs]
    whole = transcript_text(msgs)
    lo, hi = corpus.DEPTH_LIMITS
    for artifact in doc["truth"]:
        assert artifact["kind"] in KINDS
        assert lo <= artifact["depth"] <= hi
        assert kept(artifact, msgs, text=whole), artifact["needle"]
        if artifact["kind"] == "exit_code":
            continue
        wanted = collapse(artifact["needle"])
        where = [i for i, text in enumerate(texts) if wanted in text]
        index = artifact["message_index"]
        assert where[0] == index, (artifact["kind"], artifact["needle"])
        assert len(where) == artifact["related"]["occurrences"]
        allowed = set(range(index, index + PLANT_SPAN))
        rerun = artifact["related"].get("rerun_index")
        if rerun is not None:
            assert artifact["related"]["resolved"]
            allowed |= set(range(rerun, rerun + PLANT_SPAN))
        stray = [i for i in where if i not in allowed]
        assert not stray, (artifact["kind"], artifact["needle"], stray)


def test_open_failures_are_never_rerun_and_fixed_ones_are() -> None:
    for doc in heldout():
        for artifact in doc["truth"]:
            if artifact["kind"] != "failing_command":
                continue
            rerun = artifact["related"]["rerun_index"]
            assert (rerun is not None) == artifact["related"]["resolved"], artifact["needle"]


def test_every_kind_and_language_is_planted() -> None:
    kinds = {a["kind"] for d in heldout() for a in d["truth"]}
    assert kinds == set(KINDS)
    said = {"constraint", "user_fact", "decision"}
    languages = {
        a["related"]["language"] for d in heldout() for a in d["truth"] if a["kind"] in said
    }
    assert languages == {"en", "es", "zh", "pt", "fr", "de"}


def test_heldout_needles_are_not_dev_needles() -> None:
    dev = {
        collapse(a["needle"])
        for d in corpus.load_corpus()
        for a in d["truth"]
        if a["kind"] != "exit_code"
    }
    clash = [
        a["needle"]
        for d in heldout()
        for a in d["truth"]
        if a["kind"] != "exit_code" and collapse(a["needle"]) in dev
    ]
    assert clash == []


def test_the_files_are_what_the_generator_makes() -> None:
    for name in ("codex-1", "chat-2", "longchat-2"):
        doc = next(d for d in heldout() if d["name"] == name)
        assert corpus.build_session(SPECS[name]) == doc


@pytest.mark.parametrize("generator", heldout_failures.EVERY, ids=lambda g: g.__name__)
def test_failure_generators_print_their_error_line(
    generator: heldout_failures.Generator,
) -> None:
    for seed in range(25):
        failure = generator(Random(f"{generator.__name__}/{seed}"))
        assert failure.exit_code != 0
        assert "\n" not in failure.command
        assert failure.needle == failure.needle.strip() and "\x1b" not in failure.needle
        assert failure.outputs
        for placement, output in failure.outputs.items():
            assert placement in heldout_failures.PLACEMENTS
            assert collapse(failure.needle) in collapse(output), placement
        assert collapse(failure.needle) not in collapse(failure.success_output)
