"""How long to wait before trying again: exponential, capped, with full jitter.

Every retry after an operational failure waits a random time between zero and its ceiling
(``base * 2**n``, at most ``cap``). Without the randomness, every job that met the same Redis
or database blip would come back at the same 5, 10, 20 s and meet the recovering service all
at once; spread over the whole interval, they arrive one by one and the mean wait halves.
"""

from __future__ import annotations

import random
from collections.abc import Callable


def ceiling_s(base_s: float, attempt: int, cap_s: float) -> float:
    """The longest wait before retry ``attempt`` (0-based): ``base * 2**attempt``, at most ``cap``."""
    return float(min(base_s * 2 ** min(max(attempt, 0), 62), cap_s))


def backoff_s(
    base_s: float, attempt: int, cap_s: float, *, rand: Callable[[], float] = random.random
) -> float:
    """A wait drawn evenly from [0, ``ceiling_s(base, attempt, cap)``)."""
    return rand() * ceiling_s(base_s, attempt, cap_s)
