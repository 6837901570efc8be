"""Exact token counting with tiktoken's encodings, plus fixed costs for what tiktoken cannot see.

The encoding is passed in (``worker.encodings`` provisions it offline and picks the engine:
splintr checked against tiktoken, or tiktoken itself), so this module reads no files and no
environment. Images cost a fixed ``IMAGE_TOKENS`` each, never their base64 length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Protocol

from worker.compressor.messages import Message, content_text, image_count

IMAGE_TOKENS = 1600
# Chat framing per message (role marker, separators), as in OpenAI's own accounting.
MESSAGE_OVERHEAD_TOKENS = 4
# Per tool call: id, type and the function wrapper around name and arguments.
TOOL_CALL_OVERHEAD_TOKENS = 8
_MEMO_MAX_ENTRIES = 65_536
_MEMO_MIN_CHARS = 64  # below this a lookup costs about as much as encoding

_O200K_PREFIXES = (
    "gpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "chatgpt-4o",
    "gpt-oss",
)


# Encodings whose pre-tokenizer never joins a line break to the character after it when that is
# neither white space nor (o200k) a slash: there the tokens of ``a + b``, ``a`` ending in a line
# break, are the tokens of ``a`` followed by those of ``b``. (Their patterns end a run of white
# space at its last line break, or take line breaks only after punctuation; GPT-2's older
# pattern splits a run of white space before its last character instead, so it is not here.)
_SPLITS_AFTER_LINE_BREAK = frozenset({"cl100k_base", "o200k_base", "o200k_harmony"})


class Encoding(Protocol):
    name: str

    def encode_ordinary(self, text: str) -> list[int]: ...


def _counter_of(encoding: Encoding) -> Callable[[str], int]:
    """The encoding's own ``count_ordinary`` when it has one (no list of ids), else len(encode)."""
    count: Callable[[str], int] | None = getattr(encoding, "count_ordinary", None)
    if count is not None:
        return count
    encode = encoding.encode_ordinary
    return lambda text: len(encode(text))


def encoding_name_for_model(model: str | None) -> str:
    """o200k_base for the GPT-4o/4.1/5 and o-series families, cl100k_base for everything else."""
    bare = (model or "").lower().rsplit("/", 1)[-1]
    return "o200k_base" if bare.startswith(_O200K_PREFIXES) else "cl100k_base"


# Counts of our own fixed texts (prompt paragraphs, the summary prefix), per encoding object,
# shared by the counters of a process: a worker encodes them once, not once per job. Each entry
# holds its encoding, so the id it is filed under cannot be reused while it exists.
_FIXED_MAX_ENTRIES = 1_024
_fixed_counts: dict[int, tuple[Encoding, dict[str, int]]] = {}


def _fixed_memo(encoding: Encoding) -> dict[str, int]:
    entry = _fixed_counts.get(id(encoding))
    if entry is None or entry[0] is not encoding:
        entry = _fixed_counts[id(encoding)] = (encoding, {})
    return entry[1]


class TokenCounter:
    """Counts tokens of text and messages; each distinct long text is encoded once."""

    def __init__(self, encoding: Encoding) -> None:
        self.encoding = encoding
        self._memo: dict[str, int] = {}
        self._fixed = _fixed_memo(encoding)
        self._count = _counter_of(encoding)

    @property
    def encoding_name(self) -> str:
        return self.encoding.name

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if len(text) < _MEMO_MIN_CHARS:
            return self._count(text)
        cached = self._memo.get(text)
        if cached is None:
            cached = self._count(text)
            self._remember(text, cached)
        return cached

    def _remember(self, text: str, tokens: int) -> None:
        if len(self._memo) >= _MEMO_MAX_ENTRIES:
            self._memo.clear()
        self._memo[text] = tokens

    def count_fixed(self, text: str) -> int:
        """Tokens of one of our own fixed texts: encoded once per process and encoding."""
        cached = self._fixed.get(text)
        if cached is None:
            cached = self._count(text) if text else 0
            if len(self._fixed) >= _FIXED_MAX_ENTRIES:
                self._fixed.clear()
            self._fixed[text] = cached
        return cached

    def count_joined(
        self, parts: Sequence[str], sep: str, *, fixed: AbstractSet[str] = frozenset()
    ) -> int:
        """Tokens of ``sep.join(parts)``, counted a part at a time where that is exact.

        Parts in ``fixed`` (our own fixed paragraphs) are then encoded once per process, and a
        part counted already (a summary body) is not encoded again.
        """
        if not parts:
            return 0
        total = 0
        current, is_fixed = parts[0], parts[0] in fixed
        for part in parts[1:]:
            head = current + sep
            if self._splits(head, part):
                total += self.count_fixed(head) if is_fixed else self._count_ending(current, sep)
                current, is_fixed = part, part in fixed
            else:
                current, is_fixed = head + part, False
        return total + (self.count_fixed(current) if is_fixed else self.count_text(current))

    def _count_ending(self, text: str, end: str) -> int:
        """Tokens of ``text + end``; ``text``'s own count is then known too.

        Both are counted in two pieces, cut after ``text``'s last line break where the encoding
        splits exactly: the long first piece is encoded once for both. (A summary body is
        counted inside its message, followed by a separator, and then on its own.)
        """
        cut = self._last_split(text)
        if cut is None:
            return self.count_text(text + end)
        first, last = text[:cut], text[cut:]
        first_tokens = self.count_text(first)
        if len(text) >= _MEMO_MIN_CHARS and text not in self._memo:
            self._remember(text, first_tokens + self.count_text(last))
        return first_tokens + self.count_text(last + end)

    def _last_split(self, text: str) -> int | None:
        """The last index where ``text[:i]`` and ``text[i:]`` can be counted apart exactly."""
        if self.encoding.name not in _SPLITS_AFTER_LINE_BREAK:
            return None
        at = text.rfind("\n")
        while at >= 0:  # the conditions of _splits, read in place
            after = text[at + 1 : at + 2]
            if after and not after.isspace() and after != "/":
                return at + 1
            at = text.rfind("\n", 0, at)
        return None

    def _splits(self, head: str, tail: str) -> bool:
        return (
            head.endswith("\n")
            and tail[:1] != ""
            and not tail[0].isspace()
            and tail[0] != "/"
            and self.encoding.name in _SPLITS_AFTER_LINE_BREAK
        )

    def count_message(self, msg: Message, *, text_tokens: int | None = None) -> int:
        """A message's tokens; ``text_tokens``: its text's count, when the caller has it."""
        if text_tokens is None:
            text_tokens = self.count_text(content_text(msg.content))
        tokens = MESSAGE_OVERHEAD_TOKENS + text_tokens
        tokens += IMAGE_TOKENS * image_count(msg.content)
        if msg.name:
            tokens += self.count_text(msg.name) + 1
        for call in msg.tool_calls:
            tokens += TOOL_CALL_OVERHEAD_TOKENS
            tokens += self.count_text(call.name) + self.count_text(call.arguments)
        return tokens

    def count_messages(self, msgs: Sequence[Message]) -> list[int]:
        return [self.count_message(m) for m in msgs]
