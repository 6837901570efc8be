"""Which of many substring "needles" occur in a text, found in one pass.

The redactor guards each pass with needles (``://``, ``bearer``, ``key``...), the error-line
reader with triggers (``rror``, ``FAIL``...), the cue reader with words in many languages.
Asking ``needle in text`` for each of dozens of needles scans the text dozens of times, and on
clean text (nearly all of it) every needle is absent, so every scan runs to the end; a regular
expression with one alternative per needle tries a match at every character. An Aho-Corasick
automaton (``ahocorasick_rs``, in Rust) reads the text once for all of them. Matches may overlap,
so a needle hidden inside another's match is still seen: the answer is exactly what asking
every needle with ``in`` answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from ahocorasick_rs import AhoCorasick


class Needles:
    """A fixed set of needles: which of them occur in a text, and where."""

    def __init__(self, needles: Sequence[str]) -> None:
        if any(not n for n in needles):
            raise ValueError("a needle may not be empty")
        self.needles = tuple(needles)
        self._automaton = AhoCorasick(self.needles)

    def found(self, text: str) -> set[int]:
        """The indexes (into ``needles``) of those that occur in ``text``."""
        return {i for i, _, _ in self._automaton.find_matches_as_indexes(text, overlapping=True)}

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        """(needle index, start, end) of every occurrence, overlapping ones included."""
        return self._automaton.find_matches_as_indexes(text, overlapping=True)

    def any_in(self, text: str) -> bool:
        return bool(self._automaton.find_matches_as_indexes(text))


class NeedleScreen:
    """For groups of needles: which groups have a needle in a text.

    ``present(text)`` answers with the indexes of those groups, in order.
    """

    def __init__(self, groups: Sequence[Sequence[str]]) -> None:
        owners: dict[str, set[int]] = {}
        for i, needles in enumerate(groups):
            for needle in needles:
                if not needle:
                    raise ValueError(f"group {i} has an empty needle")
                owners.setdefault(needle, set()).add(i)
        self._needles = Needles(list(owners))
        self._owners = tuple(tuple(sorted(ids)) for ids in owners.values())

    def present(self, text: str) -> list[int]:
        found = self._needles.found(text)
        if not found:
            return []
        if len(found) == 1:
            return list(self._owners[found.pop()])
        return sorted({group for i in found for group in self._owners[i]})
