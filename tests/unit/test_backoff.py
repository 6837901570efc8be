"""Retry waits: exponential, capped, spread at random below the ceiling (full jitter)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from worker.backoff import backoff_s, ceiling_s


def test_the_ceiling_doubles_and_is_capped() -> None:
    assert [ceiling_s(5.0, n, 300.0) for n in range(8)] == [5, 10, 20, 40, 80, 160, 300, 300]
    assert ceiling_s(5.0, 10_000, 300.0) == 300.0  # no overflow however many tries


@given(
    base=st.floats(0, 100),
    attempt=st.integers(0, 200),
    cap=st.floats(0, 1_000),
    draw=st.floats(0, 1, exclude_max=True),
)
def test_a_wait_is_the_draw_times_the_ceiling(
    base: float, attempt: int, cap: float, draw: float
) -> None:
    wait = backoff_s(base, attempt, cap, rand=lambda: draw)
    assert 0 <= wait <= ceiling_s(base, attempt, cap)
    assert wait == draw * ceiling_s(base, attempt, cap)


def test_jobs_that_failed_together_come_back_apart() -> None:
    # A hundred jobs meet the same blip: their retries spread over the whole interval.
    waits = sorted(backoff_s(5.0, 2, 300.0) for _ in range(100))
    assert waits[0] < 5.0 and waits[-1] > 15.0
    assert len({round(w, 3) for w in waits}) > 90
