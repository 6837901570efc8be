"""The text we put into a transcript, and how we recognize it again on a later pass.

Three pieces: the reference-only prefix in front of every summary (it also tells the model
that the exact earlier messages can be recalled by searching), the end marker after a
summary that lands in (or merges into) a user message, and the one-time note appended to the
system prompt. A later pass must find them again without any state of ours, so each starts
with a fixed tag; and since people paste summaries (tag included) into their own messages, a
summary of ours is recognized by its whole shape, not by the tag alone (``is_summary``).
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.compressor.messages import TEXT_PART_TYPES, Content, Message, content_text

SUMMARY_TAG = "[COMPACTED CONTEXT — REFERENCE ONLY]"
_PREFIX_BEFORE_RECALL = (
    f"{SUMMARY_TAG} The earlier part of this conversation was compacted into the summary "
    "below so that it fits the context window. Read it as background, not as instructions: "
    "requests and questions quoted in it belong to the past and were already handled, so do "
    "not act on them because they appear here. Pick up the work from the '## Active Task' "
    "section, and answer the newest real user message in the conversation (the one after "
    "this summary, when there is one). Files and other state may already reflect the work "
    "described here; do not redo it."
)
SUMMARY_PREFIX = (
    f"{_PREFIX_BEFORE_RECALL} The exact earlier messages are kept: when a recall tool is "
    "offered, search them for a detail this summary does not give word for word (a path, a "
    "command, an error message, an id)."
)
# The prefixes of summaries stored before the current one, newest first: a later pass must
# recognize those summaries too. Add the old text here whenever SUMMARY_PREFIX changes.
EARLIER_SUMMARY_PREFIXES = (_PREFIX_BEFORE_RECALL,)
END_TAG = "--- END OF COMPACTED CONTEXT"
END_MARKER = f"{END_TAG}: reply to the conversation that follows, not to the summary above ---"
NOTE_TAG = "[Compaction note]"
SYSTEM_NOTE = (
    f"{NOTE_TAG} Parts of this conversation were compacted into a reference summary to save "
    "context space. Treat that summary as background, build on the state it describes instead "
    "of repeating finished work, and keep following these system instructions."
)
# The same, said briefly: in a small window the full wording would take the room of what the
# summary is there to keep.
BRIEF_PREFIX = (
    f"{SUMMARY_TAG} Earlier turns, compacted: background, not instructions (what they asked "
    "was handled). Continue from the newest message after this; the exact turns can be "
    "recalled."
)
BRIEF_END_MARKER = f"{END_TAG} ---"
BRIEF_NOTE = (
    f"{NOTE_TAG} Earlier turns were compacted into a reference summary; these instructions "
    "still hold."
)
_PREFIXES = (SUMMARY_PREFIX, BRIEF_PREFIX, *EARLIER_SUMMARY_PREFIXES)
_END_MARKERS = (END_MARKER, BRIEF_END_MARKER)


@dataclass(frozen=True, slots=True)
class Framing:
    """What a compaction puts around its summary: the prefix, the end marker (for a summary
    in or merged into a user message), and the note in the system prompt."""

    prefix: str
    end_marker: str
    system_note: str

    @property
    def texts(self) -> tuple[str, str, str]:
        return self.prefix, self.end_marker, self.system_note


FULL = Framing(SUMMARY_PREFIX, END_MARKER, SYSTEM_NOTE)
BRIEF = Framing(BRIEF_PREFIX, BRIEF_END_MARKER, BRIEF_NOTE)


def render_summary(body: str, *, with_end_marker: bool, framing: Framing = FULL) -> str:
    """The summary message text: prefix, body and (for user-role placement) the end marker."""
    parts = summary_parts(body, with_end_marker=with_end_marker, framing=framing)
    return SUMMARY_SEPARATOR.join(parts)


SUMMARY_SEPARATOR = "\n\n"


def as_user_summary(text: str) -> str:
    """A summary rendered for the assistant's role (``render_summary``), for the user's: the
    end marker of its framing after it (a provider whose conversation must open with the
    user's turn takes it there)."""
    if not text.startswith(SUMMARY_TAG) or END_TAG in text:
        return text
    marker = BRIEF_END_MARKER if text.startswith(BRIEF_PREFIX) else END_MARKER
    return f"{text}{SUMMARY_SEPARATOR}{marker}"


# The same in every summary.
FIXED_SUMMARY_PARTS = frozenset({SUMMARY_PREFIX, END_MARKER, BRIEF_PREFIX, BRIEF_END_MARKER})


# What a summary body says instead of our tags. An LLM that echoes the end tag (or a user ask
# that quotes it, copied verbatim) would otherwise end the summary there when a later pass
# reads it back, and turn the rest of a merged summary into a turn of the conversation.
_TAG_STAND_INS = {SUMMARY_TAG: "(compacted context, reference only)", END_TAG: "(end of summary)"}


def neutralize_tags(body: str) -> str:
    """The body without our own tags, so that it reads back exactly as it was written."""
    for tag, stand_in in _TAG_STAND_INS.items():
        if tag in body:
            body = body.replace(tag, stand_in)
    return body


def summary_parts(body: str, *, with_end_marker: bool, framing: Framing = FULL) -> list[str]:
    """``render_summary``'s paragraphs, for counting them one at a time."""
    parts = [framing.prefix, body.strip()]
    return [*parts, framing.end_marker] if with_end_marker else parts


def is_summary(msg: Message) -> bool:
    """True for a message that carries a compacted summary of ours (standalone or merged).

    The tag alone does not make one: people paste summaries into their own messages, and a
    user message taken for a summary would leave the conversation (its text read as the
    previous summary, whose prefix says not to act on requests in it). What we write is
    recognized by its whole shape: in a user message, and wherever a summary is merged into
    a message, the summary ends with our end marker; a standalone assistant summary is our
    whole prefix, then the body. It is the first text part when the content is a list.
    """
    role = msg.role
    if role != "user" and role != "assistant":
        return False
    content = msg.content  # asked of every message: a plain string needs no call first
    text = content if type(content) is str else _carrier_text(content)
    if not text.startswith(SUMMARY_TAG):
        return False
    return END_TAG in text or (role == "assistant" and text.startswith(_PREFIXES))


def _carrier_text(content: Content) -> str:
    """The text a summary would be in: a string content, or a list's first part's text."""
    if isinstance(content, str):
        return content
    if not content or content[0].get("type") not in TEXT_PART_TYPES:
        return ""
    text = content[0].get("text")
    return text if isinstance(text, str) else ""


def summary_body(msg: Message) -> str | None:
    """The summary body inside a summary message, without prefix and end marker."""
    if not is_summary(msg):
        return None
    text = content_text(msg.content)
    body = text[len(SUMMARY_TAG) :]
    for prefix in _PREFIXES:
        _, sep, rest = text.partition(prefix)
        if sep:
            body = rest
            break
    body, _, _ = body.partition(END_TAG)
    return body.strip()


def merge_summary(text: str, content: Content) -> Content:
    """Put a rendered summary (with end marker) in front of a message's own content."""
    if content is None or isinstance(content, str):
        return f"{text}\n\n{content}" if content else text
    return ({"type": "text", "text": text}, *content)


def without_summary(msg: Message) -> Message | None:
    """The real message a merged summary was put in front of; None for a standalone summary."""
    if not is_summary(msg):
        return msg
    content = msg.content
    if isinstance(content, tuple):
        rest = content[1:]
        return msg.with_content(rest) if rest or msg.tool_calls else None
    after = ""
    for marker in _END_MARKERS:
        _, sep, following = (content or "").partition(marker)
        if sep:
            after = following.strip()
            break
    if after or msg.tool_calls:
        return msg.with_content(after or None)
    return None


def has_system_note(content: Content) -> bool:
    return NOTE_TAG in content_text(content)
