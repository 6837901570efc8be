"""The transcripts both compressors get: generated ones by size, the real ones, one long session."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.data import real_transcripts
from worker.compressor.messages import parse_messages
from worker.compressor.tokens import TokenCounter

GENERATED_SIZES = (50, 500, 2000, 10_000)
# Each case's window is chosen so the session sits exactly at our hygiene trigger (DESIGN.md:
# 85% of the window queues a job): every case is the compaction the service would really run.
HYGIENE_THRESHOLD = 0.85


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    group: str  # "generated", "real" or "long"
    wire: list[dict[str, Any]]
    token_counts: tuple[int, ...]  # per message, as the store computes them at ingestion
    context_length: int

    @property
    def tokens_before(self) -> int:
        return sum(self.token_counts)


def make_case(
    name: str,
    group: str,
    wire: Sequence[dict[str, Any]],
    *,
    counter: TokenCounter,
    context_length: int | None,
) -> Case:
    counts = tuple(counter.count_messages(parse_messages(list(wire))))
    window = context_length or math.ceil(sum(counts) / HYGIENE_THRESHOLD)
    return Case(name, group, list(wire), counts, window)


def generated_wire(n_messages: int) -> list[dict[str, Any]]:
    """A deterministic realistic transcript of exactly ``n_messages`` messages."""
    from tests.factories import make_transcript  # written alongside the core; imported late

    return list(make_transcript(messages=n_messages))


def concatenated_session(sessions: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One long-lived session: the first system prompt, then each session's turns as a new task.

    Every real session ends with a tool result and the next one opens with a user task, so the
    joined transcript stays valid; their tool-call ids are already unique.
    """
    out = [dict(sessions[0][0])]
    for session in sessions:
        out.extend(dict(m) for m in session if m.get("role") != "system")
    return out


def build_cases(
    counter: TokenCounter,
    *,
    sizes: Sequence[int] = GENERATED_SIZES,
    real: bool = True,
    context_length: int | None = None,
) -> list[Case]:
    cases = [
        make_case(
            f"generated-{n}",
            "generated",
            generated_wire(n),
            counter=counter,
            context_length=context_length,
        )
        for n in sizes
    ]
    if real:
        sessions = real_transcripts()
        cases += [
            make_case(name, "real", msgs, counter=counter, context_length=context_length)
            for name, msgs in sessions
        ]
        long = concatenated_session([msgs for _, msgs in sessions])
        cases.append(
            make_case(
                f"real-concatenated-{len(sessions)}",
                "long",
                long,
                counter=counter,
                context_length=context_length,
            )
        )
    return cases
