"""Hypothesis strategies: valid transcripts with tool groups, images, secrets, other languages.

A transcript is a system prompt, then turns: a user message, zero or more tool rounds (an
assistant message with one to three parallel calls, then their results) and usually an
assistant reply. The last turn may stop anywhere a gateway could post it: after the user
message, after tool results, or inside an open tool group whose results have not arrived.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from worker.compressor.markers import SUMMARY_TAG
from worker.compressor.messages import Message, ToolCall, content_text

# Each is recognized by the redactor (tests/unit/test_properties.py checks that they are).
SECRETS: tuple[str, ...] = (
    "sk-proj-Zq8Xk2LmN4pQ7rS9tUvWxYz0123456789AbCd",
    "ghp_Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKk",
    "AKIAQWERTYUIOPASDFGH",
    "xoxb-4815162342-trustno1xyzabc",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.Sfl4KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
)
SECRET_CONTEXTS: tuple[str, ...] = (
    "export OPENAI_API_KEY={s}",
    "the token is {s}",
    "Authorization: Bearer {s}",
    '{{"api_key": "{s}"}}',
    "DATABASE_URL=postgres://admin:{s}@db:5432/app",
)
TOOL_NAMES = ("bash", "read_file", "search_files", "write_file", "browser_snapshot")
WORDS = ("parser", "retry", "cache", "token", "deploy", "schema", "index", "queue", "fix", "test")
FOREIGN = (
    "Bitte behebe den Fehler im Modul und führe die Tests aus.",
    "Por favor, revisa el archivo de configuración.",
    "请检查配置文件并修复错误",
    "設定ファイルを確認してください",
    "Пожалуйста, исправь ошибку в парсере.",
)
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo" + "A" * 64}}


@dataclass
class _State:
    """What one transcript draws from: structure from hypothesis, text from a seeded RNG.

    Text content needs no shrinking, and drawing every word through hypothesis would make
    generation, not compaction, the cost of these tests.
    """

    rng: random.Random
    secrets_on: bool
    # Ids numbered afresh in every assistant message (call_0, call_1...), as some providers do:
    # unique only within a message.
    ids_per_turn: bool = False
    calls: int = 0
    outputs: list[str] = field(default_factory=list)  # earlier outputs, to repeat some
    secrets: list[str] = field(default_factory=list)  # every secret placed in the transcript

    def text(self, *, min_words: int = 1, max_words: int = 12) -> str:
        """A sentence, sometimes in another language, sometimes carrying a secret."""
        rng = self.rng
        if rng.randrange(10) == 0:
            base = rng.choice(FOREIGN)
        else:
            base = " ".join(rng.choice(WORDS) for _ in range(rng.randint(min_words, max_words)))
        if self.secrets_on and rng.randrange(6) == 0:
            secret = rng.choice(SECRETS)
            self.secrets.append(secret)
            base += " " + rng.choice(SECRET_CONTEXTS).format(s=secret)
        return base

    def tool_output(self) -> str:
        rng = self.rng
        if self.outputs and rng.randrange(5) == 0:
            return rng.choice(self.outputs)  # a repeated output: dedupe material
        size = rng.choice((1, 3, 20, 60))
        lines = [self.text() for _ in range(min(size, 3))]
        body = "\n".join(lines * (size // len(lines)))
        out = f"<returncode>{rng.choice((0, 0, 1, 2))}</returncode>\n<output>\n{body}\n</output>"
        self.outputs.append(out)
        return out

    def tool_call(self, index: int) -> ToolCall:
        rng = self.rng
        self.calls += 1
        name = rng.choice(TOOL_NAMES)
        arg = self.text()
        if rng.randrange(2):
            arg = " ".join([arg] * rng.randint(1, 30))  # long arguments: shrink material
        key = {"bash": "command", "search_files": "pattern"}.get(name, "path")
        args = {key: arg, "content": arg} if name == "write_file" else {key: arg}
        number = index if self.ids_per_turn else self.calls
        return ToolCall(id=f"call_{number}", name=name, arguments=json.dumps(args))

    def tool_round(self, width: int, *, answered: int | None = None) -> list[Message]:
        """An assistant message with ``width`` parallel calls, then ``answered`` results."""
        calls = [self.tool_call(i) for i in range(width)]
        intro = self.text() if self.rng.randrange(2) else None
        out: list[Message] = [Message(role="assistant", content=intro, tool_calls=tuple(calls))]
        for call in calls[: width if answered is None else answered]:
            out.append(Message(role="tool", content=self.tool_output(), tool_call_id=call.id))
        return out

    def user(self, *, images: bool) -> Message:
        text = self.text(min_words=3)
        if self.rng.randrange(12) == 0:
            text = f"{SUMMARY_TAG} {text}"  # a person pasting a summary: theirs, not ours
        if images and self.rng.randrange(4) == 0:
            return Message(role="user", content=({"type": "text", "text": text}, IMAGE))
        return Message(role="user", content=text)


@dataclass(frozen=True)
class Transcript:
    messages: list[Message]
    secrets: tuple[str, ...]  # the secrets placed in it (each one the redactor recognizes)

    def __repr__(self) -> str:
        # Short enough for hypothesis to print a failing example in full.
        lines = []
        for i, m in enumerate(self.messages):
            calls = ",".join(c.id for c in m.tool_calls)
            text = content_text(m.content).replace("\n", " ")[:60]
            lines.append(f"  {i} {m.role} {m.tool_call_id or calls} {text!r}")
        return "Transcript(\n" + "\n".join(lines) + "\n)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis' pretty-printer would spell out every field


@st.composite
def transcripts(
    draw: st.DrawFn,
    *,
    max_turns: int = 10,
    images: bool = True,
    secrets: bool = True,
) -> Transcript:
    """A valid transcript; see the module docstring for its shape."""
    state = _State(
        random.Random(draw(st.integers(0, 2**32))),
        secrets_on=secrets,
        ids_per_turn=draw(st.booleans()),
    )
    msgs = [Message(role="system", content=f"You are a coding agent. {state.text(min_words=5)}")]
    turns = draw(st.integers(1, max_turns))
    for turn in range(turns):
        msgs.append(state.user(images=images))
        for width in draw(st.lists(st.integers(1, 3), max_size=3)):
            msgs.extend(state.tool_round(width))
        last = turn == turns - 1
        ending = draw(st.sampled_from(("reply", "reply", "stop", "open"))) if last else "reply"
        if ending == "reply":
            echo = f"{SUMMARY_TAG} " if state.rng.randrange(12) == 0 else ""  # a model echoing
            msgs.append(Message(role="assistant", content=echo + state.text()))
        elif ending == "open":
            width = draw(st.integers(1, 3))
            msgs.extend(state.tool_round(width, answered=draw(st.integers(0, width - 1))))
        # "stop": the transcript ends after the user message or the last tool results.
    return Transcript(msgs, tuple(state.secrets))
