"""Hypothesis strategies: valid transcripts with tool groups, images, secrets, other languages.

A transcript is a system prompt, then turns: a user message, zero or more tool rounds (an
assistant message with one to three parallel calls, then their results) and usually an
assistant reply. The last turn may stop anywhere a gateway could post it: after the user
message, after tool results, or inside an open tool group whose results have not arrived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from hypothesis import strategies as st

from worker.compressor.messages import Message, ToolCall

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
    calls: int = 0
    outputs: list[str] = field(default_factory=list)  # earlier outputs, to repeat some
    secrets: list[str] = field(default_factory=list)  # every secret placed in the transcript


@st.composite
def texts(draw: st.DrawFn, *, secrets: bool, state: _State, min_words: int = 1) -> str:
    """A sentence or a long paragraph, sometimes in another language, sometimes with a secret."""
    if draw(st.integers(0, 9)) == 0:
        base = draw(st.sampled_from(FOREIGN))
    else:
        words = draw(st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=40))
        base = " ".join(words) or "ok"
    if secrets and draw(st.integers(0, 5)) == 0:
        secret = draw(st.sampled_from(SECRETS))
        state.secrets.append(secret)
        base += " " + draw(st.sampled_from(SECRET_CONTEXTS)).format(s=secret)
    return base


@st.composite
def tool_output(draw: st.DrawFn, *, secrets: bool, state: _State) -> str:
    if state.outputs and draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(state.outputs))  # a repeated output: dedupe material
    size = draw(st.sampled_from((1, 3, 40, 200)))
    lines = [draw(texts(secrets=secrets, state=state)) for _ in range(min(size, 3))]
    body = "\n".join(lines * (size // len(lines)))
    code = draw(st.sampled_from((0, 0, 1, 2)))
    out = f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>"
    state.outputs.append(out)
    return out


@st.composite
def tool_round(
    draw: st.DrawFn, *, secrets: bool, state: _State, open_group: bool = False
) -> list[Message]:
    """An assistant message with parallel calls, then their results (some missing if open)."""
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        state.calls += 1
        name = draw(st.sampled_from(TOOL_NAMES))
        arg = draw(texts(secrets=secrets, state=state))
        if draw(st.booleans()):
            arg = arg * draw(st.integers(1, 60))  # long arguments: shrink material
        key = {"bash": "command", "search_files": "pattern"}.get(name, "path")
        args = {key: arg, "content": arg} if name == "write_file" else {key: arg}
        calls.append(ToolCall(id=f"call_{state.calls}", name=name, arguments=json.dumps(args)))
    intro = draw(st.one_of(st.none(), texts(secrets=secrets, state=state)))
    out: list[Message] = [Message(role="assistant", content=intro, tool_calls=tuple(calls))]
    answered = draw(st.integers(0, len(calls) - 1)) if open_group else len(calls)
    for call in calls[:answered]:
        output = draw(tool_output(secrets=secrets, state=state))
        out.append(Message(role="tool", content=output, tool_call_id=call.id))
    return out


@st.composite
def user_message(draw: st.DrawFn, *, images: bool, secrets: bool, state: _State) -> Message:
    text = draw(texts(secrets=secrets, state=state, min_words=3))
    if images and draw(st.integers(0, 3)) == 0:
        return Message(role="user", content=({"type": "text", "text": text}, IMAGE))
    return Message(role="user", content=text)


@dataclass(frozen=True)
class Transcript:
    messages: list[Message]
    secrets: tuple[str, ...]  # the secrets placed in it (each one the redactor recognizes)


@st.composite
def transcripts(
    draw: st.DrawFn,
    *,
    max_turns: int = 10,
    images: bool = True,
    secrets: bool = True,
) -> Transcript:
    """A valid transcript; see the module docstring for its shape."""
    state = _State()
    system = draw(texts(secrets=False, state=state, min_words=5))
    msgs = [Message(role="system", content=f"You are a coding agent. {system}")]
    turns = draw(st.integers(1, max_turns))
    for turn in range(turns):
        msgs.append(draw(user_message(images=images, secrets=secrets, state=state)))
        last = turn == turns - 1
        for _ in range(draw(st.integers(0, 3))):
            msgs.extend(draw(tool_round(secrets=secrets, state=state)))
        ending = draw(st.sampled_from(("reply", "reply", "stop", "open"))) if last else "reply"
        if ending == "reply":
            text = draw(texts(secrets=secrets, state=state))
            msgs.append(Message(role="assistant", content=text))
        elif ending == "open":
            msgs.extend(draw(tool_round(secrets=secrets, state=state, open_group=True)))
        # "stop": the transcript ends after the user message or the last tool results.
    return Transcript(msgs, tuple(state.secrets))
