"""Exact token counting with tiktoken, plus fixed costs for what tiktoken cannot see.

The encoding is passed in (``worker.encodings`` provisions it offline), so this module reads no
files and no environment. Images cost a fixed ``IMAGE_TOKENS`` each, never their base64 length.
"""

from __future__ import annotations

from collections.abc import Sequence
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


class Encoding(Protocol):
    name: str

    def encode_ordinary(self, text: str) -> list[int]: ...


def encoding_name_for_model(model: str | None) -> str:
    """o200k_base for the GPT-4o/4.1/5 and o-series families, cl100k_base for everything else."""
    bare = (model or "").lower().rsplit("/", 1)[-1]
    return "o200k_base" if bare.startswith(_O200K_PREFIXES) else "cl100k_base"


class TokenCounter:
    """Counts tokens of text and messages; each distinct long text is encoded once."""

    def __init__(self, encoding: Encoding) -> None:
        self.encoding = encoding
        self._memo: dict[str, int] = {}

    @property
    def encoding_name(self) -> str:
        return self.encoding.name

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if len(text) < _MEMO_MIN_CHARS:
            return len(self.encoding.encode_ordinary(text))
        cached = self._memo.get(text)
        if cached is None:
            cached = len(self.encoding.encode_ordinary(text))
            if len(self._memo) >= _MEMO_MAX_ENTRIES:
                self._memo.clear()
            self._memo[text] = cached
        return cached

    def count_message(self, msg: Message) -> int:
        tokens = MESSAGE_OVERHEAD_TOKENS + self.count_text(content_text(msg.content))
        tokens += IMAGE_TOKENS * image_count(msg.content)
        if msg.name:
            tokens += self.count_text(msg.name) + 1
        for call in msg.tool_calls:
            tokens += TOOL_CALL_OVERHEAD_TOKENS
            tokens += self.count_text(call.name) + self.count_text(call.arguments)
        return tokens

    def count_messages(self, msgs: Sequence[Message]) -> list[int]:
        return [self.count_message(m) for m in msgs]
