"""Markdown tables of the results: readable in a terminal and pasted as-is into the docs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bench.measure import CaseResult, SummarizerInput


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the tables: a single case, or several summed (the real sessions)."""

    label: str
    messages: int
    tokens_before: int
    window: str
    hermes_s: float
    cold_s: float
    cached_s: float
    hermes_tokens_after: int | None
    ours_tokens_after: int | None
    hermes_in: SummarizerInput
    ours_in: SummarizerInput
    ours_budget: int
    hermes_violations: int
    ours_violations: int


def row_of(r: CaseResult) -> Row:
    return Row(
        label=r.name,
        messages=r.messages_before,
        tokens_before=r.tokens_before,
        window=f"{r.context_length:,}",
        hermes_s=r.hermes.median_s,
        cold_s=r.ours_cold_s,
        cached_s=r.ours.median_s,
        hermes_tokens_after=r.hermes.tokens_after,
        ours_tokens_after=r.ours.tokens_after,
        hermes_in=r.hermes.summarizer_input,
        ours_in=r.ours.summarizer_input,
        ours_budget=r.ours_budget_tokens,
        hermes_violations=len(r.hermes.violations),
        ours_violations=len(r.ours.violations),
    )


def summed_row(label: str, results: Sequence[CaseResult]) -> Row:
    """Times and tokens summed over the cases; summarizer input: the largest single call."""
    rows = [row_of(r) for r in results]
    return Row(
        label=label,
        messages=sum(r.messages for r in rows),
        tokens_before=sum(r.tokens_before for r in rows),
        window="each at 85%",
        hermes_s=sum(r.hermes_s for r in rows),
        cold_s=sum(r.cold_s for r in rows),
        cached_s=sum(r.cached_s for r in rows),
        hermes_tokens_after=_sum_or_none([r.hermes_tokens_after for r in rows]),
        ours_tokens_after=_sum_or_none([r.ours_tokens_after for r in rows]),
        hermes_in=_combined([r.hermes_in for r in rows]),
        ours_in=_combined([r.ours_in for r in rows]),
        ours_budget=min(r.ours_budget for r in rows),
        hermes_violations=sum(r.hermes_violations for r in rows),
        ours_violations=sum(r.ours_violations for r in rows),
    )


def _combined(inputs: Sequence[SummarizerInput]) -> SummarizerInput:
    """The largest single call of all, and the totals summed."""
    return SummarizerInput(
        calls=sum(i.calls for i in inputs),
        max_chars=max(i.max_chars for i in inputs),
        max_tokens=max(i.max_tokens for i in inputs),
        total_chars=sum(i.total_chars for i in inputs),
        total_tokens=sum(i.total_tokens for i in inputs),
    )


def _sum_or_none(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def main_rows(results: Sequence[CaseResult]) -> list[Row]:
    rows = [row_of(r) for r in results if r.group == "generated"]
    real = [r for r in results if r.group == "real"]
    if real:
        rows.append(summed_row(f"real sessions ({len(real)}, summed)", real))
    rows += [row_of(r) for r in results if r.group == "long"]
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f}"


def _ratio(hermes_s: float, ours_s: float) -> str:
    return f"{hermes_s / ours_s:.2f}x" if ours_s > 0 else "n/a"


def _int(value: int | None) -> str:
    return "unparseable" if value is None else f"{value:,}"


def markdown(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def time_table(rows: Sequence[Row]) -> str:
    header = (
        "case",
        "messages",
        "tokens before",
        "window",
        "Hermes ms",
        "ours cold ms",
        "ours cached ms",
        "Hermes ÷ ours cached",
        "Hermes ÷ ours cold",
    )
    lines = [
        (
            r.label,
            f"{r.messages:,}",
            f"{r.tokens_before:,}",
            r.window,
            _ms(r.hermes_s),
            _ms(r.cold_s),
            _ms(r.cached_s),
            _ratio(r.hermes_s, r.cached_s),
            _ratio(r.hermes_s, r.cold_s),
        )
        for r in rows
    ]
    return markdown(header, lines)


def size_table(rows: Sequence[Row]) -> str:
    header = (
        "case",
        "tokens after Hermes",
        "tokens after ours",
        "summ. input Hermes: largest call",
        "Hermes: all calls",
        "summ. input ours: largest call",
        "ours: all calls",
        "our budget",
        "violations Hermes",
        "violations ours",
    )
    lines = [
        (
            r.label,
            _int(r.hermes_tokens_after),
            _int(r.ours_tokens_after),
            _size(r.hermes_in.max_tokens, r.hermes_in.max_chars),
            _size(r.hermes_in.total_tokens, r.hermes_in.total_chars, r.hermes_in.calls),
            _size(r.ours_in.max_tokens, r.ours_in.max_chars),
            _size(r.ours_in.total_tokens, r.ours_in.total_chars, r.ours_in.calls),
            f"{r.ours_budget:,} t",
            str(r.hermes_violations),
            str(r.ours_violations),
        )
        for r in rows
    ]
    return markdown(header, lines)


def _size(tokens: int, chars: int, calls: int | None = None) -> str:
    cell = f"{tokens:,} t / {chars:,} ch"
    return cell if calls is None else f"{cell} ({calls} call{'s' if calls != 1 else ''})"


def real_detail_table(results: Sequence[CaseResult]) -> str:
    """One line per real session."""
    return time_table([row_of(r) for r in results if r.group == "real"])


def settings_table(results: Sequence[CaseResult]) -> str:
    """Hermes' derived trigger and budgets, and our tail budget, for the non-real cases."""
    header = (
        "case",
        "window",
        "Hermes trigger",
        "Hermes tail budget (chars/4)",
        "our tail budget (tiktoken)",
        "Hermes summary cap",
    )
    lines = [
        (
            r.name,
            f"{r.context_length:,}",
            f"{r.hermes_settings['threshold_tokens']:,} "
            f"({r.hermes_settings['threshold_tokens'] / r.context_length:.0%})",
            f"{r.hermes_settings['tail_token_budget']:,}",
            f"{r.tail_budget_tokens:,}",
            f"{r.hermes_settings['max_summary_tokens']:,}",
        )
        for r in results
        if r.group != "real"
    ]
    return markdown(header, lines)


def violation_listing(results: Sequence[CaseResult]) -> str:
    """Violations by side and kind, with the first example of each."""
    lines: list[str] = []
    for side in ("hermes", "ours"):
        kinds: Counter[str] = Counter()
        example: dict[str, str] = {}
        for r in results:
            for v in getattr(r, side).violations:
                kinds[v.kind] += 1
                example.setdefault(v.kind, f"{r.name}: {v}")
        for kind, count in sorted(kinds.items()):
            lines.append(f"- {side}: {kind} x {count} (e.g. {example[kind]})")
    return "\n".join(lines) if lines else "- none on either side"


def notes_listing(results: Sequence[CaseResult]) -> str:
    """Notes by side, each with how many cases it applies to."""
    lines: list[str] = []
    for side in ("hermes", "ours"):
        cases: dict[str, list[str]] = {}
        for r in results:
            for note in getattr(r, side).notes:
                cases.setdefault(note, []).append(r.name)
        for note, names in sorted(cases.items()):
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            lines.append(f"- {side}: {note} — {len(names)} of {len(results)} cases ({shown})")
    return "\n".join(lines) if lines else "- none"
