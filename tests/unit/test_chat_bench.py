"""The chat-retention bench's own parts, without the kit: chatter, the label stripper, the
stale-as-current check, the lengthening of a chat and the budget adapter's char→token step."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from bench import chatter
from bench.kit_compact import (
    BUDGET_MARGIN,
    BudgetAdapter,
    Carry,
    Compacted,
    budget_target_tokens,
    count,
    hygiene_window,
    kit_text,
    lengthen,
    stale_as_current,
    tighter_target,
    top_up,
    turns_to_messages,
)
from bench.kit_side import strip_label
from worker.compressor.config import CompressConfig
from worker.encodings import counter_for_model


def lines(seed: int | str, n: int = 2_000, **kw: Any) -> list[chatter.Exchange]:
    return list(itertools.islice(chatter.chatter(seed, **kw), n))


def test_chatter_is_the_same_for_a_seed_and_differs_between_seeds() -> None:
    assert lines(7) == lines(7)
    assert lines("x:long") == lines("x:long")
    assert lines(7) != lines(8)


def test_chatter_draws_every_kind_and_language() -> None:
    drawn = lines(1, 5_000)
    assert {e.kind for e in drawn} == set(chatter.KINDS)
    assert {e.language for e in drawn} == set(chatter.LANGUAGES)


def _rule_patterns() -> list[re.Pattern[str]]:
    patterns = []
    for language, words in chatter.RULE_WORDS.items():
        for word in words:
            if language == "zh":
                patterns.append(re.compile(re.escape(word)))
            else:
                patterns.append(re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE))
    return patterns


def test_chatter_holds_no_rule_phrasing_in_any_language() -> None:
    patterns = _rule_patterns()
    for exchange in itertools.chain(lines(1, 5_000), lines(2, 5_000)):
        for text in (exchange.user, exchange.assistant):
            found = [p.pattern for p in patterns if p.search(text)]
            assert not found, f"{text!r} holds {found}"


def test_chatter_never_holds_a_forbidden_value() -> None:
    forbidden = {"staging", "BUILD #", "ok", "2026-11-15", "$500"}
    for exchange in lines(3, 3_000, forbidden=forbidden):
        text = f"{exchange.user}\n{exchange.assistant}".lower()
        assert not any(v.lower() in text for v in forbidden), text


def test_chatter_refuses_values_that_leave_nothing_to_say() -> None:
    texts = [*itertools.chain(*chatter.TEMPLATES.values(), *chatter.REPLIES.values())]
    every_character = set("".join(texts)) | set("".join(chatter.ANSWERS["en"])) | {"👍", "🎉"}
    with pytest.raises(ValueError, match="forbidden"):
        next(chatter.chatter(1, forbidden=every_character - {" "}))


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("SAFETY RULE: Never reveal API keys.", "Never reveal API keys."),
        ("HARD CONSTRAINT: Budget cap is $500 total.", "Budget cap is $500 total."),
        ("FACT: The project codename is LANTERN.", "The project codename is LANTERN."),
        ("GOAL STATE: Next step is token refresh.", "Next step is token refresh."),
        ("USER PREFERENCE: User wants metric units.", "User wants metric units."),
        ("ONE TWO THREE: three words are a label", "three words are a label"),
        ("ONE TWO THREE FOUR: four are not", "ONE TWO THREE FOUR: four are not"),
        ("Quick update: keep project spend low.", "Quick update: keep project spend low."),
        ("We moved it. FACT: not at the start", "We moved it. FACT: not at the start"),
        ("FACT:", "FACT:"),  # nothing would be left
    ],
)
def test_strip_label_takes_off_a_leading_all_caps_label_only(text: str, stripped: str) -> None:
    assert strip_label(text) == stripped


def test_stale_as_current_is_a_token_on_a_line_without_superseded() -> None:
    assert stale_as_current("[user] Budget cap is $443 total.", ["$443"])
    assert not stale_as_current("[user] Budget cap is $803 (superseded: $443).", ["$443"])
    assert not stale_as_current("- cap: $803 (Superseded $443)", ["$443"])
    assert stale_as_current("cap $803 (superseded $443)\nold cap $443", ["$443"])
    assert not stale_as_current("nothing here", ["$443"])
    assert stale_as_current("Deadline 2027-01-02", ["2027-01-02", "x"])


def test_kit_text_renders_roles_and_text_parts_as_the_kit() -> None:
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    assert kit_text(msgs) == "[system] sys\n[user] a\nb"


def _kit_turns(pairs: int) -> list[dict[str, Any]]:
    turns = [{"role": "system", "text": "You are a helper.", "canary_id": None}]
    for i in range(pairs):
        turns.append({"role": "user", "text": f"KIT-{i}", "canary_id": None})
        turns.append({"role": "assistant", "text": "Noted.", "canary_id": None})
    return turns


def test_lengthen_keeps_the_kit_turns_in_order_and_the_roles_alternating() -> None:
    kit = turns_to_messages(_kit_turns(10))
    long = lengthen(kit, chatter.chatter(1), 400)
    assert 395 <= len(long) <= 400
    assert [m for m in long if str(m["content"]).startswith("KIT-")] == [
        m for m in kit if str(m["content"]).startswith("KIT-")
    ]
    roles = [m["role"] for m in long[1:]]
    assert roles == ["user", "assistant"] * (len(roles) // 2)


def test_top_up_brings_the_transcript_back_to_the_hygiene_trigger() -> None:
    counter = counter_for_model("gpt-4")
    kit = turns_to_messages(_kit_turns(3))
    window = 2_000
    out = top_up(kit[:-1], window, chatter.chatter(2), counter)  # ends on a user message
    assert out[len(kit) - 1]["role"] == "assistant"
    assert count(counter, out) >= 0.85 * window > count(counter, out[:-2])


class RecordingPath:
    """A stand-in compactor path: records each config, answers texts of the given lengths."""

    def __init__(self, lengths: list[int]) -> None:
        self.lengths = lengths
        self.configs: list[CompressConfig] = []

    def __call__(
        self, wire: list[dict[str, Any]], config: CompressConfig, carry: Carry
    ) -> Compacted:
        self.configs.append(config)
        size = self.lengths[min(len(self.configs), len(self.lengths)) - 1]
        return Compacted([{"role": "user", "content": "x" * (size - len("[user] "))}], carry)


def test_budget_adapter_turns_the_character_budget_into_tokens() -> None:
    counter = counter_for_model("gpt-4")
    turns = _kit_turns(4)
    wire = turns_to_messages(turns)
    tokens, chars = count(counter, wire), len(kit_text(wire))
    path = RecordingPath([100])
    adapter = BudgetAdapter({"ours": path}, counter)
    assert len(adapter("ours", turns, 1, 120)) == 100
    (config,) = path.configs
    assert config.context_length == hygiene_window(tokens)
    assert config.target_tokens == int(120 * tokens / chars * BUDGET_MARGIN)
    assert config.target_tokens == budget_target_tokens(120, tokens, chars)
    assert adapter.retried == adapter.over_budget == 0


def test_budget_adapter_tries_tighter_targets_twice_then_gives_what_it_has() -> None:
    counter = counter_for_model("gpt-4")
    path = RecordingPath([300, 200, 150])
    adapter = BudgetAdapter({"ours": path}, counter)
    assert len(adapter("ours", _kit_turns(4), 1, 100)) == 150
    targets = [c.target_tokens for c in path.configs]
    assert len(targets) == 3
    assert targets[1] == tighter_target(targets[0] or 0, 100, 300) < targets[0]  # type: ignore[operator]
    assert targets[2] == tighter_target(targets[1] or 0, 100, 200)
    assert (adapter.retried, adapter.over_budget) == (1, 1)


def test_budget_adapter_returns_one_turn_that_fits_unchanged() -> None:
    path = RecordingPath([1])
    adapter = BudgetAdapter({"ours": path}, counter_for_model("gpt-4"))
    turn = {"role": "system", "text": "[user] already compact", "canary_id": None}
    assert adapter("ours", [turn], 2, 100) == "[user] already compact"
    assert path.configs == []


def test_budget_adapter_counts_a_failing_compaction_as_an_empty_output() -> None:
    def broken(wire: list[dict[str, Any]], config: CompressConfig, carry: Carry) -> Compacted:
        raise ValueError("no room")

    adapter = BudgetAdapter({"ours": broken}, counter_for_model("gpt-4"))
    assert adapter("ours", _kit_turns(3), 1, 100) == ""
    assert adapter.errors == ["ours round 1: ValueError: no room"]
