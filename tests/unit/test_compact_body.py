"""The body of ``POST /v1/sessions/{id}/compact``: what it takes as a size, before the session's
own window is asked (tests/integration/test_api_sessions.py checks that bound on the app)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from api.schemas import MAX_CONTEXT_LENGTH, MIN_TARGET_TOKENS, CompactIn


@pytest.mark.parametrize("target", [None, MIN_TARGET_TOKENS, 6_500, MAX_CONTEXT_LENGTH])
def test_a_size_from_the_floor_to_the_largest_window_is_taken(target: int | None) -> None:
    body = {} if target is None else {"target_tokens": target}
    assert CompactIn.model_validate(body).target_tokens == target


@pytest.mark.parametrize(
    ("target", "kind", "message"),
    [
        (MIN_TARGET_TOKENS - 1, "greater_than_equal", "Input should be greater than or equal to 256"),
        (-1, "greater_than_equal", "Input should be greater than or equal to 256"),
        (MAX_CONTEXT_LENGTH + 1, "less_than_equal", "Input should be less than or equal to 100000000"),
        (2**63, "less_than_equal", "Input should be less than or equal to 100000000"),
        (10**300, "less_than_equal", "Input should be less than or equal to 100000000"),
        # Strict, like every field of a body: no string, float or boolean stands for an integer.
        ("4000", "int_type", "Input should be a valid integer"),
        (4000.0, "int_type", "Input should be a valid integer"),
        (True, "int_type", "Input should be a valid integer"),
    ],
)  # fmt: skip
def test_a_size_out_of_range_or_of_another_type_is_refused(
    target: object, kind: str, message: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        CompactIn.model_validate({"target_tokens": target})
    (error,) = refused.value.errors()
    assert (error["loc"], error["type"], error["msg"]) == (("target_tokens",), kind, message)
