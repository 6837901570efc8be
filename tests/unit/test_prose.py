"""Decisions, rules and blockers read from what people wrote, in the ways people write them.

The sentences are written here (not taken from the retention corpora).
"""

from __future__ import annotations

import json

import pytest

from worker.compressor.messages import ToolCall, assistant, user
from worker.compressor.prose import read_prose


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))


DECISIONS = [
    ("a causal connective", "Keeping the cache in memory because the data set is 2 MB."),
    (
        "a choice, then a colon",
        "Using a partial index for this: the table is mostly archived rows.",
    ),
    ("a choice, then a semicolon", "Sticking with the old parser; the new one drops comments."),
    ("a choice, then a dash", "Splitting the migration in two \u2014 the backfill takes an hour."),
    ("given", "Redis over memcached here, given that we need sorted sets."),
    ("Portuguese", "Escolhi o Postgres em vez do MySQL, já que precisamos de JSONB."),
    ("Spanish", "Despliego primero en staging, dado que producción no tiene rollback."),
    ("French", "On garde le format actuel, car les clients le lisent déjà."),
    ("German", "Ich nehme die Queue-Tabelle: die Datenbank läuft ohnehin."),
    ("Chinese", "这里用乐观锁\uff1a冲突很少\uff0c重试也便宜。"),
    (
        "the reason in a labelled sentence of its own",
        "Plan: nightly snapshots for the archive. Why: the restore window is a day.",
    ),
]


@pytest.mark.parametrize("text", [d[1] for d in DECISIONS], ids=[d[0] for d in DECISIONS])
def test_a_decision_and_its_reason_are_read_whole(text: str) -> None:
    msgs = [user("go"), assistant(f"{text} Running the tests now.", [bash("c1", "make test")])]
    decisions = [d.text for d in read_prose(msgs).decisions]
    assert decisions == [text]


NOT_DECISIONS = [
    (
        "a reason to look somewhere",
        "Let me look at the serializer since the import comes from there.",
    ),
    ("a status line with a dash", "Getting there \u2014 one more check after this edit."),
    ("a finding, no choice", "Cause found: the import dropped the sign convention."),
    ("a plain step", "Running the suite to get a baseline."),
]


@pytest.mark.parametrize("text", [d[1] for d in NOT_DECISIONS], ids=[d[0] for d in NOT_DECISIONS])
def test_steps_and_findings_are_not_decisions(text: str) -> None:
    msgs = [user("go"), assistant(text, [bash("c1", "make test")])]
    assert read_prose(msgs).decisions == ()


@pytest.mark.parametrize(
    "rule",
    [
        "Les recettes doivent marcher au air fryer.",
        "Die Liste soll nach Tagen sortiert sein.",
        "A resposta deve caber numa página.",
        "Pas de réunions le vendredi.",
    ],
)
def test_rules_in_more_languages_are_read_as_rules(rule: str) -> None:
    msgs = [user(f"Bonjour. {rule}"), assistant("ok")]
    assert [r.text for r in read_prose(msgs).rules] == [rule]
