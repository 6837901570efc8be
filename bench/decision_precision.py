"""Precision and recall of the decision detector (``prose.read_prose``) on a labeled set.

The set (tests/data/decisions_labeled.jsonl) holds every sentence the detector kept as a
decision, at commit 0044818, in every fourth real session (0, 4, ..., 36 of
``tests.data.real_transcripts()``), each labeled by hand as a decision (a choice of what to do
or how to build it, with or without its reason) or not (an explanation, an observation, a
hypothesis, a question); the sentences a later detector kept in those sessions besides them
(marked "added", labeled the same way); and the planted decisions of both retention corpora,
all decisions.

A labeled sentence counts as kept when a decision read from its message holds it (a decision
may take in the sentence before it or its stated reason). Sentences kept now that the set does
not hold (the detector changed) are counted apart: label them and add them when they grow.

A second, blind set (tests/data/decisions_blind.jsonl) was written by someone who had not
seen the detector's rules nor the sets above: short assistant messages in six languages, from
coding agents and chat assistants, each with one sentence labeled decision or not, half and
half. It is the honest measure of how the rules generalize; nothing was tuned on it when it was
first measured.

    .venv/bin/python -m bench.decision_precision [--list]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.retention import corpus
from tests.data import real_transcripts
from worker.compressor.messages import assistant, parse_messages, user
from worker.compressor.prose import Said, decision_tier, distinct, read_prose

LABELED = Path(__file__).parent.parent / "tests" / "data" / "decisions_labeled.jsonl"
BLIND = LABELED.with_name("decisions_blind.jsonl")


def load_labeled(path: Path = LABELED) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _session_messages(source: str, name: str) -> list[dict[str, Any]]:
    if source == "real":
        return next(list(wire) for n, wire in real_transcripts() if n == name)
    directory, specs = corpus.CORPORA[source]
    messages: list[dict[str, Any]] = corpus.load_corpus(directory, name, specs)[0]["messages"]
    return messages


def kept_decisions(source: str, name: str) -> list[tuple[Said, int]]:
    """The distinct decisions the detector keeps in one session, with their tiers."""
    prose = read_prose(parse_messages(_session_messages(source, name)))
    return [(said, decision_tier(said, times)) for said, times in distinct(prose.decisions)]


def _holds(kept: Sequence[tuple[Said, int]], at: int, text: str) -> int | None:
    """The tier of the kept decision in message ``at`` that holds ``text``, if one does."""
    for said, tier in kept:
        if said.at == at and _holds_words(said.text, text):
            return tier
    return None


def _holds_words(text: str, part: str) -> bool:
    """``part`` stands in ``text``, white space aside."""
    return " ".join(part.split()) in " ".join(text.split())


def measure(rows: Sequence[dict[str, Any]], *, show: bool = False) -> dict[str, Any]:
    by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_session.setdefault((row["source"], row["session"]), []).append(row)
    tp = fp = fn = unlabeled = 0
    recall: dict[str, list[int]] = {}
    tiers: dict[bool, list[int]] = {True: [], False: []}
    for (source, name), labeled in by_session.items():
        kept = kept_decisions(source, name)
        for row in labeled:
            tier = _holds(kept, row["message_index"], row["text"])
            if tier is not None:
                tiers[row["decision"]].append(tier)
            if source != "real":
                recall.setdefault(source, [0, 0])[0] += tier is not None
                recall[source][1] += 1
                continue
            tp += row["decision"] and tier is not None
            fp += not row["decision"] and tier is not None
            fn += row["decision"] and tier is None
            if show:
                mark = "kept" if tier is not None else "----"
                print(f"{mark} t{tier} {'D' if row['decision'] else 'n'} | {row['text'][:130]}")
        if source == "real":
            labeled_texts = [(r["message_index"], " ".join(r["text"].split())) for r in labeled]
            for said, _ in kept:
                text = " ".join(said.text.split())
                if not any(at == said.at and t in text for at, t in labeled_texts):
                    unlabeled += 1
                    if show:
                        print(f"new  | {said.text[:130]}")
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "unlabeled": unlabeled,
        "recall": recall,
        "tiers": tiers,
    }


def measure_blind(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, bool, bool], int]:
    """(language, labeled a decision, kept as one) -> how many, over the blind set."""
    counts: dict[tuple[str, bool, bool], int] = {}
    for row in rows:
        key = (row["lang"], row["decision"], kept_blind(row))
        counts[key] = counts.get(key, 0) + 1
    return counts


def kept_blind(row: dict[str, Any]) -> bool:
    """The row's sentence is in a decision read from its assistant message, read after the
    user's message before it."""
    prose = read_prose([user(row["context"]), assistant(row["message"])])
    return any(_holds_words(d.text, row["sentence"]) for d in prose.decisions)


def _blind_report(rows: Sequence[dict[str, Any]], *, show: bool) -> None:
    counts = measure_blind(rows)
    langs = sorted({lang for lang, _, _ in counts})
    print(f"blind set: {len(rows)} sentences ({sum(r['decision'] for r in rows)} decisions)")
    print("| language | precision | recall |")
    print("|---|---:|---:|")
    for lang in [*langs, "all"]:
        tp, fp, fn = (
            _count(counts, lang, label, kept)
            for label, kept in ((True, True), (False, True), (True, False))
        )
        precision, recall = _pct(tp, tp + fp), _pct(tp, tp + fn)
        print(f"| {lang} | {tp}/{tp + fp} = {precision} | {tp}/{tp + fn} = {recall} |")
    if show:
        for row in rows:
            if kept_blind(row) != row["decision"]:
                label = "missed" if row["decision"] else "wrongly kept"
                print(f"{label:12} {row['lang']} | {row['sentence'][:120]}")


def _count(counts: dict[tuple[str, bool, bool], int], lang: str, label: bool, kept: bool) -> int:
    return sum(
        v for (g, d, k), v in counts.items() if d == label and k == kept and lang in (g, "all")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--list", action="store_true", help="print each real sentence")
    args = parser.parse_args()
    rows = load_labeled()
    real = [r for r in rows if r["source"] == "real"]
    result = measure(rows, show=args.list)
    tp, fp, fn = result["tp"], result["fp"], result["fn"]
    print(
        f"labeled: {len(real)} real sentences ({sum(r['decision'] for r in real)} decisions), "
        f"{len(rows) - len(real)} planted decisions"
    )
    print(
        f"precision (real sentences kept that are decisions): {tp}/{tp + fp} = {_pct(tp, tp + fp)}"
    )
    print(f"real decisions still kept: {tp}/{tp + fn} = {_pct(tp, tp + fn)}")
    for source, (kept, total) in result["recall"].items():
        print(f"planted decisions kept, {source}: {kept}/{total} = {_pct(kept, total)}")
    print(f"kept in the sampled sessions but not labeled: {result['unlabeled']}")
    for label, name in ((True, "decisions"), (False, "not decisions")):
        found = result["tiers"][label]
        counts = {t: found.count(t) for t in sorted(set(found))}
        print(f"tiers of kept {name}, real and planted (0 first): {counts}")
    if BLIND.exists():
        _blind_report(load_labeled(BLIND), show=args.list)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}%" if b else "-"


if __name__ == "__main__":
    main()
