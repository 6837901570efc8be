"""The salience model: what a person said is kept for what it says.

Statements alike collapse without losing a token found nowhere else; of two statements giving
one subject two values the later is current; a label in front of a statement changes nothing;
the directive table reads a rule in every language it lists; a template's lines and an
acknowledgement rank below what carries something of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.compressor import salience, voice
from worker.compressor.extractive import extractive_summary, parse_sections
from worker.compressor.messages import Message, assistant, parse_messages, user
from worker.compressor.prose import read_prose
from worker.compressor.salience import Ranked, Statement, rank


def ranked(*texts: str) -> list[Ranked]:
    return rank([Statement(i, t) for i, t in enumerate(texts)])


def by_text(out: list[Ranked]) -> dict[str, Ranked]:
    return {r.text: r for r in out}


# ---------------------------------------------------------------------------------------------
# Directives: one table, every language it lists


@pytest.mark.parametrize(
    "text",
    [
        "Les recettes doivent marcher au air fryer.",
        "Die Liste soll nach Tagen sortiert sein.",
        "A resposta deve caber numa página.",
        "Pas de réunions le vendredi.",
        "Bitte nicht direkt auf main pushen.",
        "Never push to main on a Friday.",
        "Only Python 3.11.",
        "The deadline is Friday.",
        "La fecha límite es el viernes.",
        "El plazo vence el lunes.",
        "O prazo é sexta-feira.",
        "La date limite est vendredi.",
        "L'échéance est lundi.",
        "Die Frist ist Freitag.",
        "La scadenza è venerdì.",
        "Срок — пятница.",
        "締め切りは金曜日です。",
        "截止日期是周五。",
        "Nutze niemals moment.js.",
        "常に日本語で答えてください。",
        "If it could harm a third party, never do it.",
        "Prefiero respuestas cortas.",
    ],
)
def test_a_rule_is_read_in_every_language_the_table_lists(text: str) -> None:
    assert salience.directive_kinds(text) > 0


@pytest.mark.parametrize(
    "text",
    ["Der Akku hält nicht lange.", "The staging deploy finished.", "Lasttest bei 1.3k rps"],
)
def test_a_statement_of_how_things_are_sets_no_rule(text: str) -> None:
    assert salience.directive_kinds(text) == 0


def test_a_question_with_a_rules_words_sets_no_rule() -> None:
    out = rank([Statement(0, "What should we see in Porto?", question=True)])
    assert out[0].directive == 0


def test_every_word_table_lists_every_language() -> None:
    tables = {**salience.DIRECTIVES, "address": salience.ADDRESS, "plans": salience.PLANS}
    tables["acknowledgements"] = salience.ACKNOWLEDGEMENTS
    for name, languages in tables.items():
        assert len(languages) == 9, name
        assert all(words.split() for words in languages), name


# ---------------------------------------------------------------------------------------------
# Labels, names, acknowledgements


STATEMENTS = [
    "SAFETY RULE: Never disclose the vault code abcde-12 to any user.",
    "FACT: The production database runs in region eu-west-3.",
    "USER PREFERENCE: User wants answers in Terse style.",
    "GOAL STATE: Next up: token refresh handling.",
    "The retry budget for the importer is still being tuned.",
    "We are moving the asset pipeline to content-hashed file names.",
]


def test_a_label_in_front_of_a_statement_changes_nothing() -> None:
    kept = [r.score for r in ranked(*STATEMENTS)]
    stripped = [r.score for r in ranked(*(salience.without_label(s) for s in STATEMENTS))]
    assert kept == pytest.approx(stripped)
    assert salience.without_label("[ci] Build #12 passed") == "Build #12 passed"
    assert salience.without_label("Codename for this project: X") == "Codename for this project: X"


def test_a_capital_after_a_determiner_is_no_name() -> None:
    shapes = {t.text: t.shape for t in salience.tokens("Die Übergabe macht Dmitri Esposito.")}
    assert shapes["Übergabe"] == salience.WORD
    assert shapes["Dmitri"] == shapes["Esposito"] == salience.NAME


@pytest.mark.parametrize(
    "text",
    ["ok", "Thanks!", "ok, got it", "¡Gracias!", "好的", "👍", "sounds good", "Danke, super"],
)
def test_an_acknowledgement_in_any_language_says_nothing(text: str) -> None:
    assert salience.idle(text)


@pytest.mark.parametrize(
    "text", ["Super, danke dir.", "thanks so much!", "Muchas gracias", "Merci beaucoup"]
)
def test_a_thank_you_with_its_intensifier_says_nothing(text: str) -> None:
    assert salience.idle(text)


@pytest.mark.parametrize(
    "text", ["Write the fixtures.", "Use yarn.", "no me llames antes de las 9"]
)
def test_a_short_request_is_no_acknowledgement(text: str) -> None:
    assert not salience.idle(text)


# ---------------------------------------------------------------------------------------------
# What ranks first


def test_a_template_said_again_and_again_ranks_below_what_is_said_once() -> None:
    bots = [f"[ci] Build #{4400 + i} passed on feat/x{i} in {i + 2} min" for i in range(30)]
    rule = "Do not deploy on Fridays without Ana Silva's approval."
    out = ranked(*bots[:15], rule, *bots[15:])
    scores = by_text(out)
    assert len(out) == 2  # the thirty lines are one, at their latest
    line = next(r for r in out if r.text != rule)
    assert line.times == 30 and scores[rule].score > line.score


def test_a_number_alone_is_no_fact() -> None:
    chatter = "load test is at 3.5k rps, no errors yet"
    fact = "The staging API base URL is https://qmsbp.internal/v2."
    scores = by_text(ranked(chatter, fact))
    assert scores[fact].score > scores[chatter].score


def test_a_long_run_of_digits_is_an_identifier_and_a_short_one_a_quantity() -> None:
    shapes = {t.text: t.shape for t in salience.tokens("reference 9055562979, 14 items, 250000")}
    assert shapes["9055562979"] == salience.CODE
    assert shapes["14"] == shapes["250000"] == salience.NUMBER
    (ref,) = ranked("For the letter: the council tax reference is 9055562979.")
    (count,) = ranked("For the letter: the council tax reference is 14.")
    assert ref.score > count.score


def test_what_matters_is_a_rule_or_a_statement_with_something_of_its_own() -> None:
    rule = "Sundays are family time, don't put errands on a Sunday."
    fact = "By the way, the wedding is on Saturday the 21th at 11:00 at Hartwell House."
    chatter = "What do you think about the weather this week?"
    out = by_text(user_ranked([rule, fact, chatter, "ok thanks"]))
    assert out[rule].matters and out[fact].matters
    assert not out[chatter].matters and not out["ok thanks"].matters
    old, new = ranked("Budget cap is $300 total.", "Budget cap is $700 total.")
    assert new.matters and not old.matters  # superseded


def test_an_acknowledgement_scores_nothing() -> None:
    out = user_ranked(["ok thanks", "The invoice number is INV-4471."])
    assert by_text(out)["ok thanks"].score == 0.0


def user_ranked(texts: list[str]) -> list[Ranked]:
    msgs: list[Message] = []
    for text in texts:
        msgs += [user(text), assistant("Noted.")]
    return salience.user_statements(read_prose(msgs).asks)


# ---------------------------------------------------------------------------------------------
# Families: alike statements once, the later value current


def test_a_value_said_again_marks_the_earlier_superseded() -> None:
    out = ranked(
        "Budget cap is $300 total. Never exceed without explicit approval.",
        "The load balancer probes run every ten seconds.",
        "Budget cap is $700 total. Never exceed without explicit approval.",
    )
    old, new = out[0], out[-1]
    assert "$300" in old.text and old.superseded and old.replaced_by == new.at
    assert "$700" in new.text and not new.superseded
    assert "superseded" in old.render(300) and "superseded" not in new.render(300)


def test_a_subject_said_again_in_other_words_marks_the_earlier_superseded() -> None:
    out = by_text(
        ranked(
            "The on-call rotation owner this week is Znmx Zsoel.",
            "Drafting the changelog entry for the next patch release.",
            "On-call this week belongs to Bjya Iptxm.",
        )
    )
    assert out["The on-call rotation owner this week is Znmx Zsoel."].superseded
    assert not out["On-call this week belongs to Bjya Iptxm."].superseded


def test_two_things_that_share_an_opener_are_not_one_subject() -> None:
    out = ranked(
        "Small thing: my husband works nights, so no plans before 2pm on weekdays.",
        "Small thing: send it as a checklist I can tick off.",
    )
    assert not any(r.superseded for r in out)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My sister's flight lands at 14:05.", "My brother's flight lands at 16:30."),
        ("The staging database is db-staging-3.", "The production database is db-prod-7."),
        ("Le vol de ma sœur arrive à 14:05.", "Le vol de mon frère arrive à 16:30."),
        (
            "Note: the blue locker is on the third floor, code 1009B.",
            "Note: the red locker is on the fifth floor, code 1012B.",
        ),
    ],
)
def test_one_word_told_apart_by_another_is_two_subjects(first: str, second: str) -> None:
    """A word each names with a word of its own in front of it (or after a genitive's link) is
    two things, each with its value: neither replaces the other."""
    assert not any(r.superseded for r in ranked(first, second))


def test_the_same_thing_told_again_with_another_value_is_an_update() -> None:
    old, new = ranked(
        "The staging database is db-staging-3.",
        "Actually the staging database is db-staging-4 now.",
    )
    assert old.superseded and not new.superseded


def test_a_long_message_is_no_update_of_another() -> None:
    task = "Fix the parser in django/django under /testbed. " + "It fails on input. " * 30
    out = ranked(task + "Case A.", task + "Case B.")
    assert not any(r.superseded for r in out)


def test_a_superseded_statement_carried_by_an_earlier_summary_stays_superseded() -> None:
    # The summary lists the current rule first (a rule) and the superseded one after it.
    current = Statement(-2, "Budget cap is $700 total. Never exceed without explicit approval.")
    old = Statement(
        -1, "Budget cap is $300 total. Never exceed without explicit approval.", superseded=True
    )
    out = rank([current, old])
    assert by_text(out)[current.text].superseded is False
    assert by_text(out)[old.text].superseded is True


def test_what_a_summary_quoted_is_read_back_with_its_family() -> None:
    r = Ranked(3, "Build 7 passed.", 1.0, 0, 3, ("5", "6"))
    back = salience.carried(r.render(300), -1)
    assert back is not None and back.text == r.text and back.times == 3
    assert back.earlier == ("5", "6")
    summary = f'## Constraints & Preferences\n- {r.render(300)}\n\n## Key Decisions\n- "x"'
    assert salience.said_in(summary) == [r.render(300)]


# Property tests: hypothesis builds sessions of templated lines and distinct statements.

_WORDS = st.sampled_from(
    ["importer", "exporter", "indexer", "crawler", "mailer", "billing", "search", "upload"]
)
_VALUE = st.from_regex(r"[A-Z]{4}-[0-9]{3}", fullmatch=True)


@st.composite
def sessions(draw: st.DrawFn) -> list[str]:
    templated = [
        f"The retry budget for the {draw(_WORDS)} is still being tuned."
        for _ in range(draw(st.integers(0, 12)))
    ]
    status = [
        f"[ci] Build #{draw(st.integers(1000, 9999))} passed in {draw(st.integers(1, 59))}m"
        for _ in range(draw(st.integers(0, 12)))
    ]
    distinct = [
        f"Remember the code {draw(_VALUE)} for the {w} vault."
        for w in draw(st.lists(_WORDS, max_size=4, unique=True))
    ]
    said = templated + status + distinct
    order = draw(st.permutations(range(len(said))))
    return [said[i] for i in order]


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_collapsing_near_duplicates_never_drops_a_token_found_nowhere_else(
    texts: list[str],
) -> None:
    out = ranked(*texts)
    counts: dict[str, int] = {}
    for text in texts:
        for norm in {t.norm for t in salience.tokens(salience.without_label(text))}:
            counts[norm] = counts.get(norm, 0) + 1
    kept = " ".join(f"{r.text} {' '.join(r.earlier)}" for r in out).lower()
    kept_tokens = {t.norm for t in salience.tokens(kept)} | set(kept.split())
    for norm, n in counts.items():
        if n == 1:
            assert norm in kept_tokens, norm


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(
        [
            "The project codename is {v}.",
            "Only {v} may approve production deploys.",
            "The staging API base URL is https://{v}.internal/v2.",
        ]
    ),
    _VALUE,
    _VALUE,
    st.lists(_WORDS, max_size=6),
)
def test_of_two_values_for_one_subject_the_later_is_current(
    template: str, first: str, second: str, filler: list[str]
) -> None:
    if first == second:
        return
    between = [f"Pairing on the {w} module this afternoon." for w in filler]
    texts = [template.format(v=first), *between, template.format(v=second)]
    out = ranked(*texts)
    current = [r for r in out if not r.superseded and (first in r.text or second in r.text)]
    assert len(current) == 1 and second in current[0].text
    earlier = [r for r in out if first in r.text or first in " ".join(r.earlier)]
    assert earlier and all(r.superseded or first in r.earlier for r in earlier)


# ---------------------------------------------------------------------------------------------
# Who wrote a user-role message

_AGENT_MESSAGES = (
    Path(__file__).parent.parent / "data" / "tool_formats" / "agent_user_messages.json"
)
_DOC: dict[str, Any] = json.loads(_AGENT_MESSAGES.read_text())
# A shape no structure tells from a person's: a blocked command quoted back after a reply that
# made no call (its text does not name the command).
_KNOWN_GAPS = {"blocked_command"}


def _labelled() -> list[tuple[str, int, dict[str, Any], list[Message]]]:
    out = []
    for t in _DOC["transcripts"]:
        msgs = parse_messages(t["messages"])
        for label in t["user_messages"]:
            out.append((t["name"], label["at"], label, msgs))
    return out


@pytest.mark.parametrize(
    ("name", "at", "label", "msgs"),
    [
        pytest.param(
            *case,
            marks=pytest.mark.xfail(strict=True, reason="known gap")
            if case[2].get("kind") in _KNOWN_GAPS
            else (),
        )
        for case in _labelled()
    ],
    ids=[f"{c[0][:30]}@{c[1]}" for c in _labelled()],
)
def test_a_user_message_the_agent_wrote_is_told_from_a_persons(
    name: str, at: int, label: dict[str, Any], msgs: list[Message]
) -> None:
    before = next((m for m in reversed(msgs[:at]) if m.role == "assistant"), None)
    written = voice.agent_written(
        msgs[at],
        before=before,
        tools=voice.tool_names(msgs),
        refrain=msgs[at].text().strip() in voice.refrains(msgs),
    )
    assert written == (label["from"] == "agent")


def test_the_agents_feedback_is_never_the_active_task() -> None:
    t = next(t for t in _DOC["transcripts"] if t["agent"] == "openhands")
    msgs = parse_messages(t["messages"])
    said = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=2000))
    assert "deterministic" in said["Active Task"]
    assert "[Error occurred" not in said["Active Task"]
    assert all("continue working" not in a.text for a in read_prose(msgs).asks)


def test_what_the_user_said_reaches_the_summary_through_compress() -> None:
    from datetime import date

    from worker.compressor.compress import compress
    from worker.compressor.config import CompressConfig
    from worker.compressor.extractive import ExtractiveSummarizer
    from worker.encodings import counter_for_model

    msgs: list[Message] = []
    for i in range(60):
        msgs += [user(f"Notes on the {i}th retry of the importer."), assistant("Noted.")]
    msgs[30:30] = [user("Never deploy on Fridays; Ana Silva approves releases."), assistant("Ok.")]
    counter = counter_for_model("gpt-4")
    window = int(sum(counter.count_messages(msgs)) / 0.85)
    result = compress(
        msgs,
        config=CompressConfig(context_length=window),
        summarizer=ExtractiveSummarizer(),
        counter=counter,
        today=date(2026, 12, 1),
    )
    assert result.summary is not None
    assert "Never deploy on Fridays; Ana Silva approves releases." in result.summary


@settings(max_examples=60, deadline=None)
@given(st.integers(5, 40), st.integers(0, 39), _VALUE)
def test_a_near_duplicate_never_displaces_a_statement_that_holds_something_of_its_own(
    variants: int, at: int, value: str
) -> None:
    words = ["importer", "exporter", "indexer", "crawler", "mailer", "billing", "search"]
    lines = [
        f"The retry budget for the {words[i % 7]} is still being tuned." for i in range(variants)
    ]
    fact = f"The vault code for the billing account is {value}."
    lines.insert(min(at, len(lines)), fact)
    msgs: list[Message] = []
    for line in lines:
        msgs += [user(line), assistant("Noted.")]
    # Room for a few quotes: the fact is one of them.
    said = parse_sections(extractive_summary(msgs, previous=None, budget_tokens=150))
    assert fact in "\n".join(said.values())
