"""Which of many substring "needles" occur in a text, found in one regex scan.

The redactor guards each pass with needles (``://``, ``bearer``, ``key``...). Asking ``needle
in text`` for each of ~40 needles scans the text ~40 times, and on clean text (nearly all of
it) every needle is absent, so every scan runs to the end. Here the multi-character needles are
folded into one regex, so one pass over the text finds them; single characters are still asked
with ``in`` (a memchr), and so are the few needles made only of very common letters.

The regex engine tries a pattern at every position whose character can start it, so each needle
is matched from its rarest character (the "anchor"), with a look-behind for the characters
before it: ``key`` is tried only where a ``k`` is, ``passw`` only where a ``w`` is.

The answer is exact, the same as asking every needle. The regex reports non-overlapping matches,
and several needles may end in the same text from their anchor on; so whenever a match could
stand for, or cover the anchor of, a needle it does not prove, that needle is asked with ``in``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Lower-case characters from the most to the least frequent in agent transcripts (prose, code,
# commands, JSON); a character not listed counts as rarest. Only speed depends on this order.
_COMMON_FIRST = " etaoisnrlcdhpu\nmf.y_g/b,w-\"'=(x)v:k1#0[]2{}j>q<3z"
_RANK = {char: rank for rank, char in enumerate(_COMMON_FIRST)}
# A needle whose rarest character is still one of these most frequent ones (``secret``: ``c``)
# would have the regex stop at a large share of all positions; a plain ``in`` (a fast substring
# search) costs less for it. Measured over the bench's window texts: the scan takes ~25% less
# time on real sessions than with every needle in the regex.
_ASK_DIRECTLY_BELOW_RANK = 14


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
        self._groups = {needle: tuple(sorted(set(ids))) for needle, ids in owners.items()}
        anchors = {n: _anchor(n) for n in self._groups if len(n) > 1}
        direct = {n for n, j in anchors.items() if _rank(n[j]) < _ASK_DIRECTLY_BELOW_RANK}
        # Asked with ``in``: single characters (a memchr) and needles with only common letters.
        self._direct = tuple(
            (n, ids) for n, ids in self._groups.items() if len(n) == 1 or n in direct
        )
        anchored = {n: j for n, j in anchors.items() if n not in direct}
        self._regex = re.compile(_pattern(anchored)) if anchored else None
        # What a match (a needle from its anchor on) proves, and what it leaves to be asked.
        self._proves: dict[str, str | None] = {}
        self._ask: dict[str, tuple[str, ...]] = {}
        for suffix in {n[j:] for n, j in anchored.items()}:
            same = [n for n, j in anchored.items() if n[j:] == suffix]
            proven = same[0] if len(same) == 1 else None
            self._proves[suffix] = proven
            self._ask[suffix] = tuple(
                b
                for b, jb in anchored.items()
                if b != proven and any(_may_cover(a, anchored[a], b, jb) for a in same)
            )

    def present(self, lowered: str) -> list[int]:
        # Called for every distinct text: the groups found are gathered as their id tuples
        # (each sorted, without repeats) and merged only when there are several.
        hits = [ids for needle, ids in self._direct if needle in lowered]
        suffixes = self._regex.findall(lowered) if self._regex is not None else None
        if suffixes:
            asked: set[str] = set()
            for suffix in set(suffixes):
                proven = self._proves[suffix]
                if proven is not None:
                    hits.append(self._groups[proven])
                asked.update(self._ask[suffix])
            hits.extend(self._groups[needle] for needle in asked if needle in lowered)
        if len(hits) > 1:
            return sorted({i for ids in hits for i in ids})
        return list(hits[0]) if hits else []


def _may_cover(a: str, ja: int, b: str, jb: int) -> bool:
    """Whether a match of ``a`` (from its anchor ``ja`` on) can hold the anchor of an ``b``.

    That is, ``b`` placed with its anchor on one of the matched characters agrees with ``a``
    wherever the two overlap. (It covers ``b == a`` too: a match stands for itself.)
    """
    for at in range(ja, len(a)):
        start = at - jb  # b's first character, in a's coordinates
        if all(a[start + i] == b[i] for i in range(len(b)) if 0 <= start + i < len(a)):
            return True
    return False


def _anchor(needle: str) -> int:
    """Where ``needle``'s rarest character is (the first of equals)."""
    return max(range(len(needle)), key=lambda j: (_rank(needle[j]), -j))


def _rank(char: str) -> int:
    return _RANK.get(char, len(_RANK))


def _pattern(anchored: dict[str, int]) -> str:
    """One alternative per anchor character; each needle checks what precedes it by look-behind.

    The engine tries the alternatives in order at each position, so the most frequent anchor
    characters come first.
    """
    by_anchor: dict[str, list[str]] = {}
    for needle, j in sorted(anchored.items(), key=lambda item: (-len(item[0]), item[0])):
        behind = f"(?<={re.escape(needle[: j + 1])})" if j else ""
        by_anchor.setdefault(needle[j], []).append(behind + re.escape(needle[j + 1 :]))
    order = sorted(by_anchor, key=lambda char: (_rank(char), char))
    return "|".join(re.escape(char) + "(?:" + "|".join(by_anchor[char]) + ")" for char in order)
