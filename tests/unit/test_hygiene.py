from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.cooldowns import Cooldown
from worker.hygiene import DECISIONS, decide, threshold_tokens


def inputs(**overrides: Any) -> dict[str, Any]:
    """A session that qualifies: 900 of 1000 tokens, 10 messages, no guard."""
    base: dict[str, Any] = {
        "tokens": 900,
        "context_length": 1000,
        "threshold": 0.85,
        "active_messages": 10,
        "min_messages": 4,
        "open_job_id": None,
        "cooldown": None,
        "ineffective_count": 0,
        "thrash_until_tokens": None,
        "thrash_strikes": 2,
        "auto_jobs_last_hour": 0,
        "max_auto_per_hour": 4,
    }
    return base | overrides


def cooldown() -> Cooldown:
    return Cooldown(scope="session", error_class="timeout", until=time.time() + 60)


def test_qualifying_session_is_enqueued() -> None:
    d = decide(**inputs())
    assert d.decision == "enqueued" and d.enqueue
    assert d.threshold_tokens == 850 and d.job_id is None


def test_threshold_is_inclusive() -> None:
    assert decide(**inputs(tokens=850)).decision == "enqueued"
    assert decide(**inputs(tokens=849)).decision == "below_threshold"


def test_threshold_tokens_rounds_up_without_float_noise() -> None:
    assert threshold_tokens(1000, 0.85) == 850
    assert threshold_tokens(128_000, 0.85) == 108_800
    assert threshold_tokens(10, 0.85) == 9  # 8.5 rounds up: the rule is tokens >= 0.85 x window
    assert threshold_tokens(100, 0.7) == 70  # 100 * 0.7 == 70.00000000000001 in floats


def test_open_job_wins_over_everything_and_names_the_job() -> None:
    d = decide(**inputs(open_job_id="j1", tokens=10, active_messages=1, cooldown=cooldown()))
    assert (d.decision, d.job_id) == ("already_queued", "j1")
    assert "j1" in d.reason


def test_too_few_messages_only_matters_over_the_threshold() -> None:
    assert decide(**inputs(active_messages=3)).decision == "too_few_messages"
    assert decide(**inputs(active_messages=3, tokens=100)).decision == "below_threshold"
    assert decide(**inputs(active_messages=4)).decision == "enqueued"


def test_cooldown_blocks_and_says_why() -> None:
    d = decide(**inputs(cooldown=cooldown()))
    assert d.decision == "cooldown"
    assert "timeout" in d.reason and "session" in d.reason


def test_two_ineffective_passes_trip_the_guard_until_the_session_grows() -> None:
    assert decide(**inputs(ineffective_count=1)).decision == "enqueued"
    tripped = inputs(ineffective_count=2, thrash_until_tokens=1000)
    assert decide(**tripped).decision == "thrash_guard"
    assert decide(**tripped | {"tokens": 1000}).decision == "thrash_guard"
    assert decide(**tripped | {"tokens": 1001}).decision == "enqueued"


def test_strikes_without_a_mark_still_guard() -> None:
    d = decide(**inputs(ineffective_count=2))
    assert d.decision == "thrash_guard" and "2" in d.reason


def test_hourly_limit_on_automatic_compactions() -> None:
    assert decide(**inputs(auto_jobs_last_hour=3)).decision == "enqueued"
    d = decide(**inputs(auto_jobs_last_hour=4))
    assert d.decision == "thrash_guard" and "last hour" in d.reason


def test_thrash_guard_is_reported_over_a_shorter_cooldown() -> None:
    d = decide(**inputs(cooldown=cooldown(), ineffective_count=2, thrash_until_tokens=950))
    assert d.decision == "thrash_guard"


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"tokens": 0}, "below_threshold"),
        ({"active_messages": 0}, "too_few_messages"),
        ({"open_job_id": "x"}, "already_queued"),
        ({"auto_jobs_last_hour": 99}, "thrash_guard"),
    ],
)
def test_each_decision_is_reachable(overrides: dict[str, Any], expected: str) -> None:
    assert decide(**inputs(**overrides)).decision == expected


@given(
    tokens=st.integers(0, 10_000),
    context_length=st.integers(1, 10_000),
    threshold=st.floats(0.05, 1.0),
    active=st.integers(0, 50),
    open_job=st.none() | st.just("j"),
    has_cooldown=st.booleans(),
    ineffective=st.integers(0, 5),
    until=st.none() | st.integers(0, 10_000),
    auto=st.integers(0, 10),
)
def test_enqueued_only_when_every_rule_allows(
    tokens: int,
    context_length: int,
    threshold: float,
    active: int,
    open_job: str | None,
    has_cooldown: bool,
    ineffective: int,
    until: int | None,
    auto: int,
) -> None:
    d = decide(
        **inputs(
            tokens=tokens,
            context_length=context_length,
            threshold=threshold,
            active_messages=active,
            open_job_id=open_job,
            cooldown=cooldown() if has_cooldown else None,
            ineffective_count=ineffective,
            thrash_until_tokens=until,
            auto_jobs_last_hour=auto,
        )
    )
    assert d.decision in DECISIONS and d.reason
    allowed = (
        tokens >= context_length * threshold - 1e-6
        and active >= 4
        and open_job is None
        and not has_cooldown
        and (tokens > until if until is not None else ineffective < 2)
        and auto < 4
    )
    assert d.enqueue == allowed
