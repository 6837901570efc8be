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
from worker.compressor.messages import parse_messages
from worker.compressor.prose import Said, decision_tier, distinct, read_prose

LABELED = Path(__file__).parent.parent / "tests" / "data" / "decisions_labeled.jsonl"


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
    key = " ".join(text.split())
    for said, tier in kept:
        if said.at == at and key in " ".join(said.text.split()):
            return tier
    return None


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
            if show and source == "real":
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


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}%" if b else "-"


if __name__ == "__main__":
    main()
