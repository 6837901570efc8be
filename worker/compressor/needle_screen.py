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

from ahocorasick_rs import AhoCorasick, Implementation


class Needles:
    """A fixed set of needles: which of them occur in a text, and where."""

    def __init__(self, needles: Sequence[str]) -> None:
        if any(not n for n in needles):
            raise ValueError("a needle may not be empty")
        self.needles = tuple(needles)
        # Left to choose, the library builds a DFA only up to about 100 needles and an NFA past
        # that, which scans about twice as slowly; a set is built once and scanned on every text.
        self._automaton = AhoCorasick(self.needles, implementation=Implementation.DFA)

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
        # A one-character needle ("?", ".") is asked with ``in`` (a memchr): in the automaton
        # every occurrence would be a match to hand back, thousands in a long text.
        self._chars = tuple((n, tuple(sorted(ids))) for n, ids in owners.items() if len(n) == 1)
        longer = [n for n in owners if len(n) > 1]
        self._needles = Needles(longer) if longer else None
        self._owners = tuple(tuple(sorted(owners[n])) for n in longer)

    def present(self, text: str) -> list[int]:
        groups = [ids for char, ids in self._chars if char in text]
        if self._needles is not None:
            groups += [self._owners[i] for i in self._needles.found(text)]
        if not groups:
            return []
        if len(groups) == 1:
            return list(groups[0])
        return sorted({group for ids in groups for group in ids})
