"""Deterministic, realistic transcripts for tests and the benchmark.

``make_transcript`` writes an agent session in OpenAI wire format: a system prompt, then turns
of a user ask, zero or more tool rounds (parallel calls, then their results, in the shapes our
real transcripts have: ``bash`` with ``<returncode>`` envelopes, file reads, searches, writes)
and an assistant reply. The same arguments always give the same transcript.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from typing import Any

from worker.compressor.messages import Message, parse_messages

Wire = dict[str, Any]

SYSTEM_PROMPT = (
    "You are a careful software engineering agent working in a Linux shell on the user's "
    "repository. Use the tools to inspect files, run commands and make changes. Explain what "
    "you changed and why. Run the tests after every change. Never commit credentials. Ask "
    "before deleting files or rewriting history. Keep answers short and precise."
)
MODULES = ("parser", "scheduler", "billing", "auth", "storage", "cache", "router", "metrics")
ASKS = (
    "The test tests/test_{m}.py::test_roundtrip fails with a KeyError. Please find and fix it.",
    "Add type hints to src/{m}.py and make mypy pass.",
    "Why is {m} so slow on large inputs? Profile it and suggest a fix.",
    "Refactor src/{m}.py so that the retry logic lives in one function.",
    "Can you check whether src/{m}.py handles empty input? Don't change the public API.",
    "Update the docs for {m} and keep the examples runnable.",
)
FOREIGN_ASKS = (
    "Por favor, corrige el error en src/{m}.py y ejecuta las pruebas.",
    "Bitte prüfe src/{m}.py auf Randfälle und schreibe Tests dafür.",
    "请修复 src/{m}.py 中的错误，并运行测试。",  # noqa: RUF001 (Chinese punctuation is the point)
    "src/{m}.py のバグを直して、テストを実行してください。",
)
REPLIES = (
    "Fixed: the lookup in src/{m}.py now falls back to the default; all tests pass.",
    "Done. I added the hints and mypy reports no errors in src/{m}.py.",
    "The hot loop in {m} re-parsed the header on every row; caching it makes it 8x faster.",
    "I moved the retries into `with_retries()` in src/{m}.py; behaviour is unchanged.",
)
SECRETS = (
    "export OPENAI_API_KEY=sk-proj-{tok40}",
    "GITHUB_TOKEN=ghp_{tok36}",
    "DATABASE_URL=postgres://admin:{tok16}@db.internal:5432/app",
    "aws_access_key_id = AKIA{upper16}",
    "Authorization: Bearer {tok40}",
)
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def make_transcript(
    turns: int = 40,
    tools: bool = True,
    images: bool = False,
    secrets: bool = False,
    seed: int = 0,
    *,
    messages: int | None = None,
) -> list[Wire]:
    """A valid agent session in wire format.

    ``turns`` user turns (each about 7 messages with tools), or exactly ``messages`` messages
    when that is given (turns are added until it is reached; the end stays valid).
    """
    gen = _Generator(random.Random(seed), tools=tools, images=images, secrets=secrets)
    out: list[Wire] = [{"role": "system", "content": SYSTEM_PROMPT}]
    if messages is None:
        for _ in range(turns):
            out.extend(gen.turn())
        return out
    for block in gen.blocks():
        if len(out) + len(block) > messages:
            break
        out.extend(block)
    out.extend(gen.filler(out[-1]["role"], messages - len(out)))
    return out


def make_messages(*args: Any, **kwargs: Any) -> list[Message]:
    """``make_transcript`` parsed into typed messages."""
    return parse_messages(make_transcript(*args, **kwargs))


class _Generator:
    def __init__(self, rng: random.Random, *, tools: bool, images: bool, secrets: bool) -> None:
        self.rng = rng
        self.tools = tools
        self.images = images
        self.secrets = secrets
        self.calls = 0
        self.reads: dict[str, str] = {}  # path -> content, so re-reads repeat their output

    def blocks(self) -> Iterator[list[Wire]]:
        """Valid pieces in order: a user ask, tool rounds, a reply; forever."""
        while True:
            yield [self.user()]
            for _ in range(self.rng.randint(1, 3) if self.tools else 0):
                yield self.tool_round()
            yield [self.reply()]

    def turn(self) -> list[Wire]:
        out = [self.user()]
        for _ in range(self.rng.randint(1, 3) if self.tools else 0):
            out.extend(self.tool_round())
        out.append(self.reply())
        return out

    def filler(self, last_role: str, count: int) -> list[Wire]:
        """``count`` short alternating messages that continue validly after ``last_role``."""
        out: list[Wire] = []
        role = "user" if last_role == "assistant" else "assistant"
        for _ in range(count):
            text = "Thanks, continue." if role == "user" else "Continuing with the next step."
            out.append({"role": role, "content": text})
            role = "assistant" if role == "user" else "user"
        return out

    def module(self) -> str:
        return self.rng.choice(MODULES)

    def user(self) -> Wire:
        m = self.module()
        pool = FOREIGN_ASKS if self.rng.random() < 0.15 else ASKS
        text = self.rng.choice(pool).format(m=m)
        if self.secrets and self.rng.random() < 0.3:
            text += f"\nUse this to reproduce: {self.secret()}"
        if self.images and self.rng.random() < 0.3:
            payload = base64.b64encode(self.rng.randbytes(1500)).decode()
            url = f"data:image/png;base64,{payload}"
            return {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
        return {"role": "user", "content": text}

    def reply(self) -> Wire:
        return {"role": "assistant", "content": self.rng.choice(REPLIES).format(m=self.module())}

    def tool_round(self) -> list[Wire]:
        calls = [self.call() for _ in range(self.rng.choice((1, 1, 1, 2, 3)))]
        intro = self.rng.choice((None, "Let me look at the code.", "Running the tests now."))
        assistant: Wire = {
            "role": "assistant",
            "content": intro,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for call_id, name, args, _ in calls
            ],
        }
        results = [
            {"role": "tool", "tool_call_id": call_id, "content": output}
            for call_id, _, _, output in calls
        ]
        return [assistant, *results]

    def call(self) -> tuple[str, str, dict[str, Any], str]:
        self.calls += 1
        call_id = f"call_{self.calls:05d}"
        kind = self.rng.choice(("bash", "bash", "read_file", "search_files", "write_file"))
        m = self.module()
        if kind == "read_file":
            path = f"src/{m}.py"
            output = self.reads.setdefault(path, self.source(m))
            return call_id, kind, {"path": path}, output
        if kind == "search_files":
            pattern = self.rng.choice(("def ", "TODO", "raise ", "import "))
            lines = [
                f"src/{self.module()}.py:{self.rng.randint(1, 400)}: {pattern}x"
                for _ in range(self.rng.randint(3, 40))
            ]
            return call_id, kind, {"pattern": pattern, "path": "src"}, "\n".join(lines)
        if kind == "write_file":
            content = self.source(m)
            args = {"path": f"src/{m}.py", "content": content}
            return call_id, kind, args, f"Wrote {len(content)} bytes to src/{m}.py"
        return call_id, kind, *self.command(m)

    def command(self, m: str) -> tuple[dict[str, Any], str]:
        if self.rng.random() < 0.5:
            cmd = f"python -m pytest tests/test_{m}.py -x -q"
            code, body = self.pytest_output(m)
        else:
            cmd = f"grep -n 'def ' src/{m}.py | head -50"
            code, body = (
                0,
                "\n".join(f"{i * 7}:def f_{i}(x):" for i in range(self.rng.randint(5, 50))),
            )
        if self.secrets and self.rng.random() < 0.2:
            body = f"{self.secret()}\n{body}"
        return {"command": cmd}, f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>"

    def pytest_output(self, m: str) -> tuple[int, str]:
        n = self.rng.randint(5, 60)
        if self.rng.random() < 0.5:
            return 0, f"{'.' * n}\n{n} passed in 0.{self.rng.randint(10, 99)}s"
        trace = "\n".join(
            f'  File "src/{m}.py", line {self.rng.randint(1, 300)}, in f_{i}' for i in range(6)
        )
        return 1, (
            f"{'.' * (n - 1)}F\n=================== FAILURES ===================\n"
            f"Traceback (most recent call last):\n{trace}\nKeyError: 'row_id'\n"
            f"FAILED tests/test_{m}.py::test_roundtrip - KeyError: 'row_id'\n1 failed, {n - 1} passed"
        )

    def source(self, m: str) -> str:
        lines = []
        for i in range(self.rng.randint(8, 50)):
            lines.append(f"def {m}_step_{i}(value, *, retries=3):")
            lines.append(f'    """Step {i} of the {m} pipeline."""')
            lines.append(f"    return value * {self.rng.randint(2, 9)} + {i}")
        return "\n".join(lines)

    def secret(self) -> str:
        template = self.rng.choice(SECRETS)
        return template.format(
            tok40=self.token(40, _ALNUM),
            tok36=self.token(36, _ALNUM),
            tok16=self.token(16, _ALNUM),
            upper16=self.token(16, _UPPER),
        )

    def token(self, n: int, alphabet: str) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))
