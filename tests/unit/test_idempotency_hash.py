"""The body hash behind Idempotency-Key: the same request hashes alike however it was spelled."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from worker.store.idempotency import body_sha256

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),  # floats: "1.0" vs "1" is another body
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
bodies = st.dictionaries(st.text(), json_values, max_size=6)


def reordered(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


@given(bodies)
def test_the_hash_ignores_key_order_and_spacing(body: dict[str, Any]) -> None:
    digest = body_sha256(body)
    assert body_sha256(reordered(body)) == digest
    assert body_sha256(json.loads(json.dumps(body, indent=2, ensure_ascii=False))) == digest
    assert len(digest) == 64 and int(digest, 16) >= 0


@given(bodies, bodies)
def test_different_bodies_hash_differently(a: dict[str, Any], b: dict[str, Any]) -> None:
    if a != b:
        assert body_sha256(a) != body_sha256(b)


def test_a_message_order_is_part_of_the_body() -> None:
    one, two = {"role": "user", "content": "1"}, {"role": "user", "content": "2"}
    assert body_sha256({"messages": [one, two]}) != body_sha256({"messages": [two, one]})
