"""Which of many substring "needles" occur in a text, found in one regex scan.

The redactor guards each pass with needles (``://``, ``bearer``, ``key``...). Asking ``needle
in text`` for each of ~40 needles scans the text ~40 times, and on clean text (nearly all of
it) every needle is absent, so every scan runs to the end. Here the multi-character needles are
folded into one regex shaped like a trie (one alternative per first character), so one pass
over the text finds them; single characters are still asked with ``in`` (a memchr).

The answer is exact, the same as asking every needle: the regex reports non-overlapping
matches, so a needle that can start inside another's match (``key`` in ``private key``, or one
that begins with another's last characters) is asked with ``in`` whenever that other was found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_Trie = dict[str, "_Trie"]
_END = ""  # a trie key that marks "a needle ends here"


class NeedleScreen:
    """For groups of lower-case needles: which groups have a needle in a text.

    ``present(lowered)`` answers with the indexes of those groups, in order.
    """

    def __init__(self, groups: Sequence[Sequence[str]]) -> None:
        owners: dict[str, list[int]] = {}
        for i, needles in enumerate(groups):
            for needle in needles:
                if not needle:
                    raise ValueError(f"group {i} has an empty needle")
                owners.setdefault(needle, []).append(i)
        self._groups = {needle: tuple(ids) for needle, ids in owners.items()}
        self._single = tuple((n, ids) for n, ids in self._groups.items() if len(n) == 1)
        multi = sorted(n for n in self._groups if len(n) > 1)
        self._regex = re.compile(_trie_pattern(multi)) if multi else None
        self._hidden = {a: tuple(b for b in multi if b != a and _may_hide(a, b)) for a in multi}

    def present(self, lowered: str) -> list[int]:
        hits: set[int] = set()
        for needle, ids in self._single:
            if needle in lowered:
                hits.update(ids)
        if self._regex is not None:
            found = set(self._regex.findall(lowered))
            for needle in found:
                hits.update(self._groups[needle])
                for other in self._hidden[needle]:
                    if other not in found and other in lowered:
                        hits.update(self._groups[other])
        return sorted(hits)


def _may_hide(a: str, b: str) -> bool:
    """Whether a match of ``a`` can cover the start of an occurrence of ``b``.

    That is ``b`` inside ``a``, or ``b`` starting with one of ``a``'s proper suffixes.
    """
    return b in a or any(b.startswith(a[k:]) for k in range(1, len(a)))


def _trie_pattern(needles: Sequence[str]) -> str:
    """A regex matching any of ``needles``: at each position, the longest one that starts there."""
    root: _Trie = {}
    for needle in needles:
        node = root
        for char in needle:
            node = node.setdefault(char, {})
        node[_END] = {}
    return _branch(root)


def _branch(node: _Trie) -> str:
    alternatives = [re.escape(char) + _branch(child) for char, child in node.items() if char]
    if not alternatives:
        return ""
    body = "(?:" + "|".join(alternatives) + ")"
    # A needle may end here while a longer one continues: the continuation is optional (greedy).
    return body + "?" if _END in node else body
