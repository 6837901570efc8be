"""What the summarizer is asked: a structured checkpoint, written fresh or updated in place.

The template is a set of specific questions (what is the task, which files, which exact errors)
because an agent resuming from a summary needs exact state, not a narrative. Its headings are
stable so that the next pass can update the same sections.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache

from worker.compressor.config import CompressConfig

SECTIONS: tuple[str, ...] = (
    "Active Task",
    "Goal",
    "Constraints & Preferences",
    "Completed Actions",
    "Active State",
    "In Progress",
    "Blocked",
    "Key Decisions",
    "Resolved Questions",
    "Pending User Asks",
    "Relevant Files",
    "Remaining Work",
    "Critical Context",
)

_GUIDANCE: dict[str, str] = {
    "Active Task": (
        "The most important section. Quote the user's latest request that is not finished yet, "
        'word for word, in their own language (for example: User asked: "..."). When several '
        'things were asked and some are done, quote only the unfinished ones. Write "None." '
        "when nothing is outstanding."
    ),
    "Goal": "What the user wants to achieve overall, in one or two sentences.",
    "Constraints & Preferences": (
        "Rules, preferences and constraints the user stated (style, tools, things to avoid)."
    ),
    "Completed Actions": (
        "A numbered list, one line per action: N. ACTION target - outcome [tool: name]. "
        "For example: 3. TEST `pytest tests/unit` - 2 of 40 failed: test_parse, test_merge "
        "[tool: bash]. Name exact files, lines, commands and results."
    ),
    "Active State": (
        "The state of the work right now: working directory and branch, files created or "
        "modified (one note each), test status, running processes, relevant environment."
    ),
    "In Progress": "What was being done when this checkpoint was made.",
    "Blocked": 'Open problems and errors, with the exact error messages. "None." if none.',
    "Key Decisions": "Technical decisions taken and the reason for each.",
    "Resolved Questions": "Questions the user asked that were answered, with the answer.",
    "Pending User Asks": (
        'Questions or requests from the user not answered or done yet. "None." if none.'
    ),
    "Relevant Files": "Files read, changed or created, with a short note on each.",
    "Remaining Work": (
        'What is left to do, described as state ("tests for X not written yet"), not as orders.'
    ),
    "Critical Context": (
        "Exact values that would otherwise be lost: identifiers, ports, versions, settings, "
        "error strings. Leave out credentials, putting [REDACTED] where one was."
    ),
}

_PREAMBLE = (
    "You write context checkpoints. The conversation turns below are source material for a "
    "compact, exact record of the work so far; another assistant will continue the work from "
    "your record alone, without the original turns. Output only the checkpoint: no greeting, "
    "no introduction, no closing remarks. Write it in the language the user writes in; do not "
    "translate. Leave out secrets (API keys, tokens, passwords, private keys, connection "
    "strings): write [REDACTED] where one appeared, and at most mention that credentials were "
    "involved."
)

_TEMPORAL = (
    "Today is {today}. Describe finished work as finished, in the past tense and dated where "
    'useful ("Sent the report to the team on {today}"), never as a step still to take, so '
    "that nobody repeats it."
)

_FOCUS = (
    'Focus topic: "{topic}". The user asked this checkpoint to favour that topic. Give '
    "material related to it full detail (exact values, paths, commands, outputs, errors, "
    "decisions) and spend roughly 60-70% of the length on it; cover everything else briefly, "
    "in one line or not at all when it does not matter. Secrets stay out even here."
)

# What the user said that a summary must not lose, listed from the whole window in every call
# (a later chunk's turns may not hold it, and the running summary may have dropped it).
_USER_SAID = (
    "WHAT THE USER SAID that must carry over: the rules, facts and preferences below were "
    "picked from all of the turns being compacted, in order. Keep each one that still holds, "
    "word for word and in the user's language, under Constraints & Preferences (a rule, a "
    "preference, a limit) or Critical Context (a fact, a value). Where two give one subject "
    "different values, the later one holds: write it as current and do not present the "
    "earlier one as current."
)

_FIRST_PASS = (
    "Write a checkpoint of the turns below, detailed enough that the work can continue "
    "without them."
)

_UPDATE = (
    "Update an existing checkpoint. The previous checkpoint is below, followed by turns it does "
    "not cover yet. Keep everything in it that still holds. Add the new actions to the "
    "numbered Completed Actions list, continuing its numbering. Move finished items from In "
    "Progress to Completed Actions and answered questions to Resolved Questions. Bring Active "
    "State up to date. Drop an item only when it is clearly obsolete. Most important: Active "
    "Task must quote the user's latest request that is not finished yet."
)


def template(budget_tokens: int) -> str:
    """The section headings with what belongs under each, and the length to aim for."""
    return PART_SEPARATOR.join(_template_parts(budget_tokens))


def _template_parts(budget_tokens: int) -> list[str]:
    return [*_BLOCKS, _closing(budget_tokens)]


def _closing(budget_tokens: int) -> str:
    return (
        f"Aim for about {budget_tokens:,} tokens. Be concrete: file paths, commands, outputs, "
        'error messages, line numbers and values, never "made some changes". Write only the '
        "checkpoint body under these headings."
    )


_BLOCKS = tuple(f"## {name}\n[{_GUIDANCE[name]}]" for name in SECTIONS)
_STRUCTURE = "Use exactly this structure:"
PART_SEPARATOR = "\n\n"
# The paragraphs that are the same in every prompt (a token counter may keep their counts).
FIXED_PARTS = frozenset({_PREAMBLE, _FIRST_PASS, _UPDATE, _STRUCTURE, _USER_SAID, *_BLOCKS})


@lru_cache(maxsize=64)
def job_fixed_parts(today: date, budget_tokens: int) -> frozenset[str]:
    """``FIXED_PARTS`` plus the paragraphs fixed by the date and the summary budget.

    A worker writes the same date all day, and every large window has the same (capped)
    budget, so a token counter may keep these counts across jobs too.
    """
    return FIXED_PARTS | {_TEMPORAL.format(today=today.isoformat()), _closing(budget_tokens)}


def render_prompt(
    *,
    turns: str,
    previous_summary: str | None,
    focus_topic: str | None,
    budget_tokens: int,
    today: date,
    user_said: str = "",
) -> str:
    """The whole prompt for one summarizer call (first pass, or update of a previous summary)."""
    return PART_SEPARATOR.join(
        prompt_parts(
            turns=turns,
            previous_summary=previous_summary,
            focus_topic=focus_topic,
            budget_tokens=budget_tokens,
            today=today,
            user_said=user_said,
        )
    )


def prompt_parts(
    *,
    turns: str,
    previous_summary: str | None,
    focus_topic: str | None,
    budget_tokens: int,
    today: date,
    user_said: str = "",
) -> list[str]:
    """The prompt's paragraphs: ``render_prompt`` joins them with ``PART_SEPARATOR``.

    Most are fixed text, so a token counter can count them once (``count_joined``).
    ``user_said``: the user's statements to carry over (``salience.carry_over``), one per line.
    """
    parts = [_PREAMBLE, _TEMPORAL.format(today=today.isoformat())]
    if previous_summary:
        parts += [
            _UPDATE,
            f"PREVIOUS CHECKPOINT:\n{previous_summary.strip()}",
            f"TURNS NOT YET COVERED:\n{turns}",
        ]
    else:
        parts += [_FIRST_PASS, f"TURNS:\n{turns}"]
    if user_said:
        parts += [_USER_SAID, user_said]
    if focus_topic and focus_topic.strip():
        parts.append(_FOCUS.format(topic=focus_topic.strip()))
    return [*parts, _STRUCTURE, *_template_parts(budget_tokens)]


def summary_budget(window_tokens: int, config: CompressConfig) -> int:
    """Summary length: a share of what is summarized, within [min, max].

    Also at most a quarter of the summarizer's window (output x 1.3), so a call always has room
    for the previous summary and some turns beside its own answer.
    """
    proportional = int(window_tokens * config.summary_ratio)
    ceiling = min(config.max_summary_tokens, int(config.summarizer_context_tokens / (4 * 1.3)))
    return max(min(config.min_summary_tokens, ceiling), min(proportional, ceiling))


def max_output_tokens(budget_tokens: int) -> int:
    """What the model may write: headroom above the aim, as a hard cap."""
    return int(budget_tokens * 1.3)
