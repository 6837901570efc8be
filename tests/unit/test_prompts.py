from __future__ import annotations

from datetime import date

from worker.compressor.config import CompressConfig
from worker.compressor.extractive import BRIEF_EXTRACTIVE_NOTE, EXTRACTIVE_NOTE
from worker.compressor.markers import BRIEF, FULL
from worker.compressor.prompts import (
    SECTIONS,
    max_output_tokens,
    render_prompt,
    summary_budget,
    template,
)
from worker.compressor.redact import redact_text

TODAY = date(2026, 3, 14)


def test_template_asks_for_every_section_in_order_with_the_budget() -> None:
    text = template(2500)
    positions = [text.index(f"## {name}\n") for name in SECTIONS]
    assert positions == sorted(positions)
    assert len(SECTIONS) == 13
    assert "2,500 tokens" in text
    assert "N. ACTION target - outcome [tool: name]" in text
    assert "word for word" in text  # the Active Task is quoted, not paraphrased


def test_first_pass_prompt_has_the_turns_the_date_and_the_language_rule() -> None:
    prompt = render_prompt(
        turns="[USER]: fix it",
        previous_summary=None,
        focus_topic=None,
        budget_tokens=2000,
        today=TODAY,
    )
    assert "TURNS:\n[USER]: fix it" in prompt
    assert "PREVIOUS CHECKPOINT" not in prompt
    assert "Today is 2026-03-14" in prompt
    assert "language the user writes in" in prompt
    assert "[REDACTED]" in prompt  # secrets are to be left out


def test_iterative_prompt_updates_the_previous_summary_with_new_turns() -> None:
    prompt = render_prompt(
        turns="[USER]: next",
        previous_summary="## Active Task\nold task",
        focus_topic=None,
        budget_tokens=2000,
        today=TODAY,
    )
    assert "PREVIOUS CHECKPOINT:\n## Active Task\nold task" in prompt
    assert "TURNS NOT YET COVERED:\n[USER]: next" in prompt
    assert "continuing its numbering" in prompt
    assert prompt.index("PREVIOUS CHECKPOINT") < prompt.index("TURNS NOT YET COVERED")


def test_focus_topic_reaches_the_prompt_with_its_share_of_the_budget() -> None:
    prompt = render_prompt(
        turns="t",
        previous_summary=None,
        focus_topic=" database migration ",
        budget_tokens=2000,
        today=TODAY,
    )
    assert 'Focus topic: "database migration"' in prompt
    assert "60-70%" in prompt
    plain = render_prompt(
        turns="t", previous_summary=None, focus_topic="  ", budget_tokens=2000, today=TODAY
    )
    assert "Focus topic" not in plain


def test_budget_is_a_fifth_of_the_content_within_its_bounds() -> None:
    config = CompressConfig(context_length=200_000)  # max: min(5% = 10,000, 12,000)
    assert summary_budget(1_000, config) == 2_000  # the floor
    assert summary_budget(20_000, config) == 4_000
    # The ceiling is also bounded by the summarizer's window (a quarter of 32k, over 1.3).
    assert summary_budget(1_000_000, config) == int(32_000 / (4 * 1.3))
    big = CompressConfig(context_length=200_000, summarizer_context_tokens=128_000)
    assert summary_budget(1_000_000, big) == 10_000
    small = CompressConfig(context_length=20_000)  # 5% = 1,000 < the floor: the floor wins
    assert summary_budget(50_000, small) == 2_000


def test_max_output_is_the_budget_with_headroom() -> None:
    assert max_output_tokens(2_000) == 2_600


def test_our_own_wording_is_nothing_the_redactor_would_touch() -> None:
    prompt = render_prompt(
        turns="", previous_summary="prev", focus_topic="topic", budget_tokens=2000, today=TODAY
    )
    for text in (prompt, *FULL.texts, *BRIEF.texts, EXTRACTIVE_NOTE, BRIEF_EXTRACTIVE_NOTE):
        assert redact_text(text).count == 0
