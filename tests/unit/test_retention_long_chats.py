"""The long chats of both retention corpora: thousands of messages of chatter and topic talk in
several languages, with value updates whose old value is said once, before its update, and
never with the word the stale check looks for."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from bench.retention import corpus, heldout_updates, updates
from bench.retention.score import collapse, message_text

LONG = [
    (which, spec)
    for which, (_, specs) in corpus.CORPORA.items()
    for spec in specs
    if spec.long is not None
]
IDS = [f"{which}-{spec.name}" for which, spec in LONG]


@cache
def session(which: str, name: str) -> dict[str, Any]:
    directory, specs = corpus.CORPORA[which]
    (doc,) = corpus.load_corpus(directory, name, specs)
    return doc


def test_both_corpora_have_long_chats() -> None:
    assert sorted(w for w, _ in LONG) == ["dev"] * 3 + ["heldout"] * 2


@pytest.mark.parametrize(("which", "spec"), LONG, ids=IDS)
def test_a_long_chat_has_thousands_of_messages_and_every_chat_kind(
    which: str, spec: corpus.Spec
) -> None:
    doc = session(which, spec.name)
    lo, hi = corpus.size_limits(spec)
    assert lo <= len(doc["messages"]) <= hi and len(doc["messages"]) >= 2_000
    assert {a["kind"] for a in doc["truth"]} == {
        "constraint",
        "user_fact",
        "decision",
        "current_value",
    }
    assert all(m.get("role") != "tool" for m in doc["messages"])


@pytest.mark.parametrize(("which", "spec"), LONG, ids=IDS)
def test_an_old_value_is_said_once_before_its_update(which: str, spec: corpus.Spec) -> None:
    doc = session(which, spec.name)
    texts = [message_text(m) for m in doc["messages"]]
    for a in doc["truth"]:
        if a["kind"] != "current_value":
            continue
        (old,) = a["related"]["superseded"]
        where = [i for i, t in enumerate(texts) if collapse(old) in t]
        assert where == [a["related"]["superseded_index"]]
        assert where[0] < a["message_index"]
        assert collapse(old) not in texts[a["message_index"]]
        assert a["related"]["language"] in spec.long.updates  # type: ignore[union-attr]


@pytest.mark.parametrize(("which", "spec"), LONG, ids=IDS)
def test_no_session_says_superseded(which: str, spec: corpus.Spec) -> None:
    doc = session(which, spec.name)
    assert not any("superseded" in message_text(m).casefold() for m in doc["messages"])


def test_the_value_updates_are_in_six_languages_and_heldout_ones_are_their_own() -> None:
    languages = {
        a["related"]["language"]
        for which, spec in LONG
        for a in session(which, spec.name)["truth"]
        if a["kind"] == "current_value"
    }
    assert languages == {"en", "es", "de", "fr", "zh", "ja"}
    dev = {s.names[lang] for s in updates.SUBJECTS for lang in updates.LANGS}
    heldout = {s.names[lang] for s in heldout_updates.SUBJECTS for lang in updates.LANGS}
    assert dev.isdisjoint(heldout)
    for frames in (updates.FIRST, updates.UPDATE):
        for lang, texts in frames.items():
            assert set(texts).isdisjoint(heldout_updates.FIRST[lang] + heldout_updates.UPDATE[lang])


def test_the_dev_long_chats_are_what_the_generator_makes() -> None:
    spec = next(s for w, s in LONG if w == "dev" and s.name == "longchat-2")
    assert corpus.build_session(spec) == session("dev", "longchat-2")
