"""jsonvalue.loads answers every text as json.loads does (faster), lone surrogates as U+FFFD,
and refuses deep nesting."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.compressor import jsonvalue


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _replaced(value: Any) -> Any:
    """json.loads's value with each lone surrogate as U+FFFD, written out independently."""
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_replaced(v) for v in value]
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    return value


def _answers_as_json_does(text: str) -> None:
    try:
        expected: Any = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            jsonvalue.loads(text)
        return
    assert _same(jsonvalue.loads(text), _replaced(expected)), text


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(values, st.booleans())
def test_encoded_values_decode_to_what_json_gives(value: Any, ascii_only: bool) -> None:
    # Integers past 64 bits, NaN and infinities, lone surrogates, non-ASCII keys and text.
    _answers_as_json_does(json.dumps(value, ensure_ascii=ascii_only))


# Pieces of JSON and of near-JSON: what one decoder takes and the other refuses is where they
# could part ways.
pieces = st.sampled_from(
    ["{", "}", "[", "]", ":", ",", '"', "\\", "\\u", "\\ud800", "\\ud83d\\ude00", "\\n", " ",
     "\n", "\t", "0", "1", "-", ".", "e", "E", "+", "1e400", "-0", "123456789012345678901234567890",
     "true", "false", "null", "NaN", "Infinity", "-Infinity", '"a"', "\ufeff", "\x00", "\u2028",
     "\ud800", "é"]
)  # fmt: skip


@given(st.lists(pieces, max_size=16).map("".join))
def test_any_text_gets_jsons_value_or_a_value_error(text: str) -> None:
    _answers_as_json_does(text)


@given(st.text())
def test_arbitrary_text(text: str) -> None:
    _answers_as_json_does(text)


@pytest.mark.parametrize(
    "text",
    ['"\ud800"', '"\\ud800"', "NaN", "[1e400]", "-9223372036854775809", "\ufeff{}", '{"a": 1,}',
     '{"a": 1, "a": 2}', "", " "],
)  # fmt: skip
def test_texts_where_the_decoders_differ(text: str) -> None:
    # A lone surrogate (raw or escaped), non-standard numbers, an int past 64 bits, a BOM,
    # a trailing comma, a repeated key (the last wins), nothing at all.
    _answers_as_json_does(text)


@pytest.mark.parametrize("depth", [1, 99, 100])
def test_nesting_up_to_the_limit_decodes(depth: int) -> None:
    assert jsonvalue.loads("[" * depth + "]" * depth) is not None


@pytest.mark.parametrize("depth", [101, 996, 5_000, 100_000])
def test_deeper_nesting_is_a_value_error_whatever_the_stack(depth: int) -> None:
    # 996 decodes under msgspec's limit and not json's; 5,000 is past both.
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        jsonvalue.loads('{"a": ' + "[" * depth + "]" * depth + "}")


def test_deeper_than_counts_objects_and_arrays_as_levels() -> None:
    value = {"a": [1, {"b": "x"}]}
    assert jsonvalue.deeper_than(value, 2)
    assert not jsonvalue.deeper_than(value, 3)
    assert not jsonvalue.deeper_than([], 1)


def test_lone_surrogates_come_out_as_replacement_characters() -> None:
    # An escape without its other half (a JavaScript agent can write one): no UTF-8 text,
    # tokenizer or database takes the lone half, so decoded strings never hold one.
    text = '{"\\udfff": ["\\ud83d", "ok \\ud83d\\ude00", "\ud800 raw"], "n": 1}'
    assert jsonvalue.loads(text) == {"\ufffd": ["\ufffd", "ok \U0001f600", "\ufffd raw"], "n": 1}
    assert jsonvalue.loads('"caf\\u00e9"') == "café"
