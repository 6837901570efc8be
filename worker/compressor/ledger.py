"""The artifact ledger: exact strings from the summarized window that a summary must not lose.

Summaries paraphrase; agents then re-run commands, re-open files and ask the user again. The
ledger is collected deterministically from the whole window, read before anything in it is cut:
the commands that failed (exit code and first error line; those never followed by a success of
the same command first), files written or edited, what the user said (their rules and facts
first), decisions taken with their reason, files the user named, other error lines, URLs and
identifiers. Entries are ranked by what matters, not by age, and kept while they fit a budget
that grows with the room the compacted transcript leaves. After the summarizer has written its
summary, ``complete_summary`` appends only the entries the summary left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, TypeAlias

from worker.compressor import ledger_scan as scan
from worker.compressor import salience
from worker.compressor.cuts import quote, size
from worker.compressor.paths import text_paths
from worker.compressor.prose import Prose, decision_tier, distinct
from worker.compressor.tooluse import (
    PATH_CHARS,
    Reading,
    Shown,
    ToolUse,
    fixed_later,
    later_successes,
)
from worker.compressor.turns import Turn

Kind: TypeAlias = Literal[
    "failing", "failed", "file", "user", "decision", "user_file", "error", "url", "id"
]
# Rendering order, and each kind's label.
KINDS: tuple[Kind, ...] = (
    "failing",
    "failed",
    "error",
    "file",
    "user_file",
    "user",
    "decision",
    "url",
    "id",
)
_LABELS: dict[Kind, str] = {
    "failing": "still failing",
    "failed": "failed, later passed",
    "error": "error",
    "file": "file written",
    "user_file": "file named by the user",
    "user": "user said",
    "decision": "decision",
    "url": "url",
    "id": "id",
}
HEADING = "## Artifact Ledger"
_INTRO = "Exact strings from the summarized turns that the summary above does not contain:"
_QUOTE_CHARS = 320  # one user sentence or decision, quoted
_ARGS_ID_CHARS = 200  # of a call's arguments, read for identifiers
_LINE_CHARS = 500  # an error line, a path, a URL (kubectl's and the JVM's run long)


class Entry(NamedTuple):
    kind: Kind
    text: str  # the rendered entry after its label
    needles: tuple[str, ...]  # all of these must appear in a summary for it to be there
    rank: int  # lower goes first when the budget is short
    order: int  # where it was found in the window (chronological)
    exit_code: int | None = None  # commands: the code their result reported
    weight: float = 0.0  # within a rank, more first (what the user said: its salience)

    def render(self) -> str:
        return f"- {_LABELS[self.kind]}: {self.text}"

    def present_in(self, summary: str) -> bool:
        """The summary already carries this entry (for a command: with its exit code)."""
        if not all(n in summary for n in self.needles):
            return False
        if self.exit_code is None:
            return True
        return _names_exit(summary, self.needles[0], self.exit_code)


@dataclass(frozen=True, slots=True)
class Ledger:
    entries: tuple[Entry, ...] = ()  # grouped by kind in KINDS order, chronological within
    # Every entry found, most important first, with what it costs against the summary it was
    # fitted to: ``refit`` fits them again without asking the summary again.
    candidates: tuple[tuple[Entry, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def left_out(self) -> int:
        """How many entries found did not fit the budget (a URL or an id that a kept entry
        quotes is not left out)."""
        kept = set(self.entries)
        quoted = "\n".join(e.text for e in self.entries)
        return sum(
            1
            for e, _ in self.candidates
            if e not in kept and not (e.kind in _SUBSUMED and e.text in quoted)
        )

    def refit(self, budget_bytes: int) -> Ledger:
        """The same entries found, fitted to another budget."""
        return Ledger(_fit(self.candidates, budget_bytes), self.candidates)

    @property
    def is_empty(self) -> bool:
        return not self.entries

    def of_kind(self, kind: Kind) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.kind == kind)

    def render(self) -> str:
        """The whole ledger as a Markdown section ("" when empty)."""
        return _section(self.entries) if self.entries else ""


# Priority when the budget is short (lower first).
_RANK: dict[str, int] = {
    "failing": 0,
    "file": 1,
    "user_rule": 2,
    "failed": 3,
    "decision": 4,  # a choice with a strong reason
    "likely_decision": 5,  # a strong reason alone, or a pick made when asked
    "user_file": 5,
    "error": 6,
    "weak_decision": 7,  # below what the user said: our reading, not their words
    "user": 6,
    "user_reply": 8,
    "url": 8,
    "id": 9,
}


def extract_ledger(
    turns: Sequence[Turn],
    uses: Sequence[ToolUse],
    prose: Prose,
    reading: Reading,
    shown: Shown,
    *,
    budget_bytes: int,  # UTF-8 bytes (``cuts.size``)
    summary: str = "",
    previous: str = "",
    said: Sequence[salience.Ranked] | None = None,
) -> Ledger:
    """The ranked artifact trail of a window: ``turns`` (its messages as the summarizer saw
    them, redacted), ``uses`` (its tool uses) and ``prose`` (what was said in it); ``reading``
    holds later uses too, which may resolve a failure. Entries ``summary`` already holds cost
    nothing against ``budget_bytes``: only what would be appended to it is counted.
    ``previous``: the summary this pass updates; the entries its ledger carried are state, and
    stand again beside the window's. ``said``: what the user said, ranked with what that
    summary quoted of it (``salience.user_statements``; read here when None)."""
    ranked = said
    if ranked is None:
        ranked = salience.user_statements(prose.asks, salience.said_in(previous))
    carried = _carried(previous)
    found = [*carried, *_from_uses(uses, reading, shown), *_from_prose(prose, ranked)]
    # Identifiers (commits, issues, UUIDs) from what people wrote; a tool output's are its
    # data (a log, a diff), and its excerpt is read for URLs only. What the user said and said
    # again otherwise later is listed with that statement, marked, not on its own.
    replaced = {r.at for r in ranked if r.superseded}
    found += _exact_strings(
        [
            (t.at, t.message.text())
            for t in turns
            if t.message.role != "tool" and t.at not in replaced
        ],
        ids=True,
    )
    found += _exact_strings(
        [(t.at, t.message.text()) for t in turns if t.message.role == "tool"], ids=False
    )
    candidates = _costed(_unique(found), summary)
    return Ledger(_fit(candidates, budget_bytes), candidates)


def _from_uses(uses: Sequence[ToolUse], reading: Reading, shown: Shown) -> list[Entry]:
    passed = later_successes(reading.uses)
    out: list[Entry] = []
    # Identifiers in arguments are rare: all are asked at once first, each by its opening
    # (where a command names a commit or an issue; a heredoc's body is code, full of hex).
    with_ids = scan.texts_with_identifiers([u.call.arguments[:_ARGS_ID_CHARS] for u in uses])
    for i, use in enumerate(uses):
        order = use.call_index
        if _attempt_failed(use):
            out += _command_entries(use, shown, resolved=fixed_later(use, passed))
        elif use.failed and use.first_error:
            where = (
                f"{use.call.name} {shown.text(use.facts.paths[0], 80)}: " if use.facts.paths else ""
            )
            error = shown.error(use) or ""
            out.append(Entry("error", f"{where}{error}", (error,), _RANK["error"], order))
        for path in use.written:
            clean = shown.text(path, _LINE_CHARS).removeprefix("./")
            out.append(Entry("file", clean, (clean,), _RANK["file"], order))
        out += _exact_strings_of_call(use, shown, order, ids=i in with_ids)
    return out


def _attempt_failed(use: ToolUse) -> bool:
    """A command that failed (or printed an error line), or a write or an edit that failed."""
    if use.kind in ("shell", "code"):
        return bool(use.command) and (use.failed or bool(use.errors))
    return use.failed and use.kind in ("write", "edit") and bool(use.facts.paths)


def _command_entries(use: ToolUse, shown: Shown, *, resolved: bool) -> list[Entry]:
    """A failed command (or one whose output shows an error), or a failed write or edit: what
    was attempted, its exit code and first error line in one entry; its further error lines as
    entries of their own."""
    code = use.exit_code
    error = shown.error(use)
    if not use.failed and code in (0, None) and resolved:
        return []  # an error printed by a run that succeeded and was run again: noise
    kind: Kind = "failed" if resolved else "failing"
    attempt = shown.command(use) or shown.text(use.facts.paths[0], PATH_CHARS)
    needles = tuple(n for n in (attempt, error) if n)
    text = shown.failure(use)
    entries = [Entry(kind, text, needles, _RANK[kind], use.call_index, code)]
    for extra in use.errors[1:3]:
        line = shown.text(extra.text, _LINE_CHARS)
        entries.append(Entry("error", line, (line,), _RANK["error"] + 1, use.call_index))
    return entries


def _exact_strings_of_call(use: ToolUse, shown: Shown, order: int, *, ids: bool) -> list[Entry]:
    """URLs and identifiers in a call's arguments (redacted: a URL may carry a password)."""
    args = use.call.arguments
    out = []
    if scan.may_hold_urls(args):
        for url in scan.urls(args):
            clean = shown.text(url, _LINE_CHARS)
            out.append(Entry("url", clean, (clean,), _RANK["url"], order))
    if ids:
        found = scan.identifiers(args[:_ARGS_ID_CHARS])
        out += [Entry("id", i, (i,), _RANK["id"], order) for i in found]
    return out


def _carried(previous: str) -> list[Entry]:
    """The entries of the ledger ``previous`` ends with, older than anything in the window;
    what the user said among them is read with the rest of what they said
    (``salience.said_in``)."""
    at = previous.rfind(HEADING)
    if at < 0 or (at and previous[at - 1] != "\n"):
        return []
    body = previous[at + len(HEADING) :].split("\n## ", 1)[0]
    entries: list[Entry] = []
    lines = [line[2:] for line in body.splitlines() if line.startswith("- ")]
    for k, line in enumerate(lines):
        label, sep, text = line.partition(": ")
        kind = _KIND_OF.get(label)
        if sep and kind is not None and kind != "user":
            entries.append(Entry(kind, text, (text,), _CARRIED_RANK[kind], k - len(lines)))
    return entries


_KIND_OF: dict[str, Kind] = {label: kind for kind, label in _LABELS.items()}


def _from_prose(prose: Prose, ranked: Sequence[salience.Ranked]) -> list[Entry]:
    out: list[Entry] = []
    for said in prose.asks:
        out += [
            Entry("user_file", p, (p,), _RANK["user_file"], said.at)
            for p in text_paths(said.text[:20_000])
        ]
    for statement in ranked:
        out += _user_entries(statement)
    for said, times in distinct(prose.decisions, template=True):
        quoted = quote(said.text, _QUOTE_CHARS)
        needle = quoted.split("…[", 1)[0]
        rank = _DECISION_RANKS[decision_tier(said, times)]
        out.append(Entry("decision", f'"{quoted}"', (needle,), rank, said.at))
    return out


def _user_entries(ranked: salience.Ranked) -> list[Entry]:
    """What the user said, as the salience model ranks it: a short statement whole (with what
    its family adds: how often, the values it superseded, or that it was superseded); of a
    long message its opening sentence and its most salient ones."""
    rank = _user_rank(ranked)
    stripped = ranked.text
    if len(stripped) <= _QUOTE_CHARS:
        needle = quote(stripped, _QUOTE_CHARS)
        return [_said(ranked.render(_QUOTE_CHARS), needle, ranked, rank)]
    # A long message (a pasted task, a log) is the summary's to condense: the ledger keeps its
    # opening sentence and its most salient ones.
    parts = salience.sentences_of(stripped)
    chosen = salience.salient_sentences(stripped, _LONG_QUOTE_CHARS) if parts else ()
    out = []
    for k, i in enumerate(chosen):
        if k and i == len(parts) - 1 and len(chosen) > 1:
            continue  # its last words: the summary's
        quoted = quote(parts[i], _QUOTE_CHARS)
        out.append(_said(f'"{quoted}"', quoted.split("…[", 1)[0], ranked, rank))
    return out


_LONG_QUOTE_CHARS = 900


def _said(text: str, needle: str, ranked: salience.Ranked, rank: int) -> Entry:
    return Entry("user", text, (needle,), rank, ranked.at, weight=ranked.score)


def _user_rank(ranked: salience.Ranked) -> int:
    """What instructs or restricts, or carries much found nowhere else, first; then other
    statements; what was superseded, and what says little, last."""
    if ranked.superseded or ranked.score < salience.LOW:
        return _RANK["user_reply"]
    if ranked.directive or ranked.score >= salience.HIGH:
        return _RANK["user_rule"]
    return _RANK["user"]


# An entry an earlier ledger carried, by its kind: as it was ranked then (a decision as the
# surer kind, its tier not kept).
_CARRIED_RANK: dict[Kind, int] = {
    "failing": _RANK["failing"],
    "failed": _RANK["failed"],
    "error": _RANK["error"],
    "file": _RANK["file"],
    "user_file": _RANK["user_file"],
    "user": _RANK["user"],
    "decision": _RANK["likely_decision"],
    "url": _RANK["url"],
    "id": _RANK["id"],
}

_DECISION_RANKS = (
    _RANK["decision"],
    _RANK["likely_decision"],
    _RANK["weak_decision"],
    _RANK["id"],
    _RANK["id"],
)


def _exact_strings(texts: Sequence[tuple[int, str]], *, ids: bool) -> list[Entry]:
    """URLs (and identifiers, with ``ids``) in the texts, each at the place of the text it is
    in. Which texts may hold an identifier is decided for all of them at once."""
    out = []
    with_ids = scan.texts_with_identifiers([text for _, text in texts]) if ids else set()
    for i in sorted(with_ids):
        order, text = texts[i]
        out += [Entry("id", v, (v,), _RANK["id"], order) for v in scan.identifiers(text)]
    for order, text in texts:
        if scan.may_hold_urls(text):
            out += [Entry("url", u, (u,), _RANK["url"], order) for u in scan.urls(text)]
    return out


def _unique(entries: Iterable[Entry]) -> list[Entry]:
    """One entry per text and kind: the most important occurrence, then the latest."""
    best: dict[tuple[Kind, str], Entry] = {}
    for entry in entries:
        key = (entry.kind, entry.text)
        known = best.get(key)
        if known is None or (entry.rank, -entry.order) < (known.rank, -known.order):
            best[key] = entry
    # A file both written and named by the user is listed once, as written.
    written = {e.text for e in best.values() if e.kind == "file"}
    return [e for e in best.values() if not (e.kind == "user_file" and e.text in written)]


def _costed(entries: list[Entry], summary: str) -> tuple[tuple[Entry, int], ...]:
    """The entries most important first (the newest first within a rank), each with its cost
    in bytes: nothing for one the summary holds already."""
    ranked = sorted(entries, key=lambda e: (e.rank, -e.weight, -e.order))
    return tuple(
        (e, 0 if summary and e.present_in(summary) else size(e.render()) + 1) for e in ranked
    )


def _fit(costed: Sequence[tuple[Entry, int]], budget_bytes: int) -> tuple[Entry, ...]:
    """The entries (from ``_costed``) that fit the budget, taken in their order; then in
    rendering order."""
    used = size(_section(()))
    kept: list[Entry] = []
    quoted: list[str] = []  # the kept entries' texts, joined when a URL or an id asks
    joined, joined_upto = "", 0
    for entry, cost in costed:
        if used + cost > budget_bytes:
            continue
        if entry.kind in _SUBSUMED and cost:
            if joined_upto < len(quoted):
                joined, joined_upto = "\n".join(quoted), len(quoted)
            if entry.text in joined:
                continue  # a URL or an id a kept entry quotes already
        kept.append(entry)
        quoted.append(entry.text)
        used += cost
    return tuple(sorted(kept, key=lambda e: (KINDS.index(e.kind), e.order)))


_SUBSUMED: frozenset[Kind] = frozenset({"url", "id"})


def complete_summary(summary: str, ledger: Ledger) -> tuple[str, int]:
    """Append the ledger entries the summary does not already contain, and count them.

    Idempotent: every appended entry then appears in the summary, so a second call appends
    nothing. When the summary already ends with a ledger section (a previous pass), new entries
    join that section instead of starting another.
    """
    missing = [e for e in ledger.entries if not e.present_in(summary)]
    if not missing:
        return summary, 0
    body = summary.rstrip()
    if _ends_with_ledger(body):
        return body + "\n" + "\n".join(e.render() for e in missing), len(missing)
    return f"{body}\n\n{_section(missing)}", len(missing)


def _names_exit(summary: str, command: str, code: int) -> bool:
    """Some line of the summary names the command and its exit code."""
    exit_re = re.compile(rf"\bexit(?: code| status)?:? {code}\b")
    return any(command in line and exit_re.search(line) for line in summary.splitlines())


def _section(entries: Iterable[Entry]) -> str:
    return "\n".join([HEADING, _INTRO, *(e.render() for e in entries)])


def _ends_with_ledger(summary: str) -> bool:
    at = summary.rfind(HEADING)
    return (
        at >= 0
        and "\n## " not in summary[at + len(HEADING) :]
        and (at == 0 or summary[at - 1] == "\n")
    )
