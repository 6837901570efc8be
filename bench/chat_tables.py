"""The chat-retention bench's tables (markdown), from its results (``bench/chat_retention.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the results' types; chat_retention imports this module
    from bench.chat_retention import RoundResult, SessionResult

TYPES = ("safety_rule", "hard_constraint", "fact", "goal_state", "user_preference")
CORPUS_NAMES = {"seeded": "seeded", "random": "randomized", "generated": "generated"}
OUR_PATHS = ("extractive", "poor-llm")
# The targets (docs/benchmarks.md, "Chat retention").
TYPE_TARGET = 0.95  # every type, rounds 1 and R, seeded and generated, both sizes and labelings
BUDGET_SURVIVAL_TARGETS = {0.20: 0.90, 0.30: 0.98}


def _cell(kept: int, total: int) -> str:
    return f"{kept}/{total} ({100 * kept / total:.0f}%)" if total else "-"


def _groups(sessions: Sequence[SessionResult]) -> list[tuple[str, str, str]]:
    """(labels, corpus, size) in the order the sessions ran."""
    return list(dict.fromkeys((s.labels, s.corpus, s.size) for s in sessions))


def _tally(
    sessions: Iterable[SessionResult],
    path: str,
    round_index: int,
    pick: Callable[[RoundResult, dict[str, Any]], bool | None],
) -> tuple[int, int]:
    """(hits, total) over every canary of the sessions at one round; ``pick`` None skips one."""
    hits = total = 0
    for s in sessions:
        result = s.rounds[path][round_index]
        for canary in s.canaries:
            got = pick(result, canary)
            if got is not None:
                hits += int(got)
                total += 1
    return hits, total


def _of(sessions: Sequence[SessionResult], group: tuple[str, str, str]) -> list[SessionResult]:
    return [s for s in sessions if (s.labels, s.corpus, s.size) == group]


def _group_name(group: tuple[str, str, str], sessions: Sequence[SessionResult]) -> str:
    _, corpus, size = group
    n = len(_of(sessions, group))
    many = f" x{n}" if corpus != "seeded" else ""
    return f"{CORPUS_NAMES[corpus]}{many}, {size}"


def _survived(ctype: str | None) -> Callable[[RoundResult, dict[str, Any]], bool | None]:
    def pick(result: RoundResult, canary: dict[str, Any]) -> bool | None:
        if ctype is not None and canary["type"] != ctype:
            return None
        return result.survived.get(canary["id"], False)

    return pick


def _stale(field: str) -> Callable[[RoundResult, dict[str, Any]], bool | None]:
    def pick(result: RoundResult, canary: dict[str, Any]) -> bool | None:
        if not canary["superseded_tokens"]:
            return None
        return bool(getattr(result, field).get(canary["id"], False))

    return pick


def _rounds_cell(
    sessions: Sequence[SessionResult], path: str, last: int, pick: Callable[..., bool | None]
) -> str:
    first = _tally(sessions, path, 0, pick)
    final = _tally(sessions, path, last, pick)
    if not first[1]:
        return "-"
    return f"{_cell(*first)} → {_cell(*final)}"


def survival_table(
    sessions: Sequence[SessionResult], labels: str, paths: Sequence[str], rounds: int
) -> str:
    lines = [
        "| corpus, size | type | " + " | ".join(paths) + " |",
        "|---|---" + "|---" * len(paths) + "|",
    ]
    for group in _groups(sessions):
        if group[0] != labels:
            continue
        chosen = _of(sessions, group)
        name = _group_name(group, sessions)
        for ctype in (*TYPES, None):
            cells = [_rounds_cell(chosen, p, rounds - 1, _survived(ctype)) for p in paths]
            row = f"**{ctype or 'all'}**" if ctype is None else ctype
            lines.append(f"| {name} | {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def stale_table(sessions: Sequence[SessionResult], paths: Sequence[str], rounds: int) -> str:
    lines = [
        "| labels | corpus, size | "
        + " | ".join(f"{p}: present | {p}: as current" for p in paths)
        + " |",
        "|---|---" + "|---|---" * len(paths) + "|",
    ]
    for group in _groups(sessions):
        chosen = _of(sessions, group)
        if not any(c["superseded_tokens"] for s in chosen for c in s.canaries):
            continue
        cells = []
        for p in paths:
            cells.append(_rounds_cell(chosen, p, rounds - 1, _stale("stale_present")))
            cells.append(_rounds_cell(chosen, p, rounds - 1, _stale("stale_current")))
        lines.append(f"| {group[0]} | {_group_name(group, sessions)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def size_table(sessions: Sequence[SessionResult], paths: Sequence[str], rounds: int) -> str:
    lines = [
        "| labels | corpus, size | messages | window (mean) | "
        + " | ".join(f"{p}: share r1 → r{rounds} / violations" for p in paths)
        + " | notes |",
        "|---|---|---|---" + "|---" * len(paths) + "|---|",
    ]
    for group in _groups(sessions):
        chosen = _of(sessions, group)
        messages = sum(s.messages for s in chosen) / len(chosen)
        window = sum(s.window for s in chosen) / len(chosen)
        cells, notes = [], []
        for p in paths:
            first = sum(s.rounds[p][0].window_share for s in chosen) / len(chosen)
            final = sum(s.rounds[p][-1].window_share for s in chosen) / len(chosen)
            violations = sum(len(r.violations) for s in chosen for r in s.rounds[p])
            cells.append(f"{100 * first:.1f}% → {100 * final:.1f}% / {violations}")
            notes += _note_counts(p, [n for s in chosen for r in s.rounds[p] for n in r.notes])
        lines.append(
            f"| {group[0]} | {_group_name(group, sessions)} | {messages:,.0f} | {window:,.0f} | "
            + " | ".join(cells)
            + f" | {'; '.join(notes)} |"
        )
    return "\n".join(lines)


def _note_counts(path: str, notes: Sequence[str]) -> list[str]:
    return [f"{path}: {note} x{notes.count(note)}" for note in dict.fromkeys(notes)]


def budget_table(payload: dict[str, Any]) -> str:
    lines = [
        "| budget | rank | compactor | compliant | max output / budget | survival (randomized) "
        "| stale present (randomized) | semantic resolved | stale present (semantic) "
        "| distinct pairs | final output |",
        "|---" * 11 + "|",
    ]
    for entry in payload["entries"]:
        sup = entry["randomized"]["supersession"]
        sem = entry["semantic"]["conflicts"]
        lines.append(
            f"| {entry['budget_fraction']:.0%} | {entry['rank']} | {entry['compactor']} | "
            f"{'yes' if entry['budget_compliant'] else 'NO'} | "
            f"{entry['max_output_to_budget']:.2f} | "
            f"{entry['randomized']['overall_final_survival']:.1%} | "
            f"{sup['stale']}/{sup['n']} | "
            f"{entry['semantic']['resolved_rate']:.1%} | "
            f"{sem['stale']}/{sem['n']} | "
            f"{entry['semantic']['distinct_pair_rate']:.1%} | "
            f"{entry['mean_final_output_ratio']:.1%} |"
        )
    return "\n".join(lines)


def targets(sessions: Sequence[SessionResult], budget: dict[str, Any], rounds: int) -> list[str]:
    """Each target, met or missed, on our two paths."""
    out = []
    for p in OUR_PATHS:
        misses = []
        for group in _groups(sessions):
            if group[1] == "random":
                continue
            chosen = _of(sessions, group)
            for ctype in TYPES:
                for r in (0, rounds - 1):
                    kept, total = _tally(chosen, p, r, _survived(ctype))
                    if total and kept / total < TYPE_TARGET:
                        misses.append(
                            f"{group[0]} {_group_name(group, sessions)} {ctype} r{r + 1} "
                            f"{100 * kept / total:.0f}%"
                        )
        verdict = "met" if not misses else f"missed in {len(misses)} cells"
        worst = f" (e.g. {'; '.join(misses[:4])})" if misses else ""
        out.append(
            f"- {p}: every type ≥ 95% at r1 and r{rounds} (seeded, generated): {verdict}{worst}"
        )
        stale = sum(_tally(sessions, p, r, _stale("stale_current"))[0] for r in range(rounds))
        out.append(f"- {p}: stale as current, all rounds and corpora: {stale} (target 0)")
        out.append(f"- {p}: budget benchmark: " + _budget_verdict(budget, p))
    return out


def _budget_verdict(budget: dict[str, Any], path: str) -> str:
    parts = []
    for labels in ("kept", "stripped"):
        for entry in budget[labels]["entries"]:
            if entry["compactor"] != path:
                continue
            fraction = entry["budget_fraction"]
            survival = entry["randomized"]["overall_final_survival"]
            want = BUDGET_SURVIVAL_TARGETS.get(round(fraction, 2))
            ok = (
                entry["budget_compliant"]
                and (want is None or survival >= want)
                and not budget["adapter"]["errors"]
            )
            goal = f", survival {survival:.0%} (≥ {want:.0%})" if want else ""
            parts.append(
                f"{labels} {fraction:.0%} {'met' if ok else 'missed'} "
                f"({'compliant' if entry['budget_compliant'] else 'not compliant'}{goal})"
            )
    return "; ".join(parts)


def header(
    sessions: Sequence[SessionResult],
    *,
    seeds: Sequence[int],
    budget_seeds: Sequence[int],
    rounds: int,
    core: str,
    kit_version: str,
    hermes_version: str,
    python: str,
    seconds: float,
) -> str:
    canaries = sum(len(s.canaries) for s in sessions)
    messages = sum(s.messages for s in sessions)
    return (
        f"{len(sessions)} chats ({messages:,} messages, {canaries} canaries; the kit's seeded "
        f"session and its randomized and generated corpora at seeds {_span(seeds)}, each at the "
        f"kit's size and lengthened, labels kept and stripped), {rounds} rounds each at 85% of "
        f"the window; budget benchmark at seeds {_span(budget_seeds)}; {core}. "
        f"compaction-conformance-kit {kit_version}, hermes-agent {hermes_version}, "
        f"Python {python}; run took {seconds:.0f} s."
    )


def _span(seeds: Sequence[int]) -> str:
    s = list(seeds)
    return (
        f"{s[0]}-{s[-1]}"
        if s == list(range(s[0], s[-1] + 1)) and len(s) > 1
        else ",".join(map(str, s))
    )


def render(
    sessions: Sequence[SessionResult],
    budget: dict[str, Any],
    paths: Sequence[str],
    *,
    rounds: int,
    header: str,
) -> str:
    parts = [header, ""]
    for labels in ("kept", "stripped"):
        parts += [
            f"Survival by canary type, labels {labels} (the kit's probe; round 1 → round {rounds}):",
            "",
            survival_table(sessions, labels, paths, rounds),
            "",
        ]
    parts += [
        f"Superseded values (canaries that replaced an earlier value; round 1 → round {rounds}): "
        "*present* is the old value anywhere (the kit's measure), *as current* is the old value "
        "on a line that does not say `superseded`.",
        "",
        stale_table(sessions, paths, rounds),
        "",
        "Output size (tokens after as a share of the window, mean) and invariant violations "
        "(`bench/invariants.py`, all rounds):",
        "",
        size_table(sessions, paths, rounds),
        "",
    ]
    for labels in ("kept", "stripped"):
        parts += [
            f"The kit's fixed-budget benchmark (`run_budget_benchmark`), labels {labels}:",
            "",
            budget_table(budget[labels]),
            "",
        ]
    adapter = budget["adapter"]
    parts += [
        f"Budget adapter: {adapter['calls']} compactions asked for, {adapter['unchanged']} "
        f"returned unchanged (one turn that already fit), {adapter['retried']} needed a tighter "
        f"try, {adapter['over_budget']} still over budget after the last try, "
        f"{len(adapter['errors'])} failed (counted as an empty output)"
        + "".join(f"; {e}" for e in adapter["errors"][:5])
        + ".",
        "",
        "Targets (ours):",
        "",
        *targets(sessions, budget, rounds),
    ]
    return "\n".join(parts)
