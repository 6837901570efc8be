"""The metric names a PromQL expression reads, found without a PromQL parser.

What is left of an expression once string literals, label matchers, range and subquery
brackets, grouping clauses, numbers and Grafana's ``$variables`` are taken out is operators,
keywords, function names (an identifier followed by ``(``) and metric names; the metric names
are the rest.
"""

from __future__ import annotations

import re

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_BRACKETS = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(
    r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", re.IGNORECASE
)
_VARIABLES = re.compile(r"\$\{[^}]*\}|\$\w+")
_OFFSET = re.compile(r"\boffset\s+-?\w+", re.IGNORECASE)
_NUMBERS = re.compile(r"(?<![\w:])(?:0x[0-9a-f]+|\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+)", re.IGNORECASE)
_IDENTIFIER = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\(?))")
KEYWORDS = frozenset(
    {"and", "or", "unless", "bool", "by", "without", "on", "ignoring", "group_left",
     "group_right", "offset", "inf", "nan", "atan2"}
)  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """The metric names ``expr`` selects (``rate(x_total[5m]) / y`` -> {x_total, y})."""
    text = _STRINGS.sub(" ", expr)
    text = _VARIABLES.sub(" ", text)
    text = _MATCHERS.sub(" ", text)
    text = _BRACKETS.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    text = _OFFSET.sub(" ", text)
    text = _NUMBERS.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        name, call = match.group(0), match.group(1)
        if not call and name.lower() not in KEYWORDS:
            names.add(name)
    return names
