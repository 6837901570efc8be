"""A developer's archived sessions, made up deterministically, for the archive search benchmark.

Each message is one of the things a coding agent's transcript holds: a user's request (one in
twelve in Russian or Japanese), an assistant's answer, a tool call (a shell command, a file
read) or a tool result (a JSON result with a log or a traceback). Every session also gets a few
needles at known places: a unique request id, a path and an error line that occur nowhere
else, which the benchmark then searches for.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

WORDS = [
    "the",
    "build",
    "fails",
    "again",
    "after",
    "the",
    "migration",
    "because",
    "the",
    "worker",
    "cannot",
    "reach",
    "the",
    "database",
    "and",
    "the",
    "retry",
    "loop",
    "gives",
    "up",
    "too",
    "early",
    "so",
    "we",
    "need",
    "to",
    "check",
    "the",
    "connection",
    "pool",
    "settings",
    "then",
    "rerun",
    "the",
    "tests",
    "with",
    "more",
    "logging",
    "enabled",
    "while",
    "the",
    "queue",
    "keeps",
    "growing",
    "under",
    "load",
    "please",
    "look",
    "at",
    "the",
    "config",
    "file",
    "and",
    "tell",
    "me",
    "which",
    "value",
    "controls",
    "the",
    "timeout",
    "for",
    "requests",
    "deploy",
    "rollback",
    "cache",
    "invalidation",
    "schema",
    "index",
    "query",
    "plan",
    "latency",
    "budget",
    "memory",
    "leak",
]
RUSSIAN = (
    "Почему упала сборка после миграции? Проверь конфигурацию базы данных и журнал ошибок.",
    "Сервер не отвечает, посмотри логи воркера и настройки пула соединений.",
)
JAPANESE = (
    "データベースの設定を確認して、接続プールのタイムアウトを教えてください。",
    "テストが失敗しました。ログを見て原因を調べてください。",
)
MODULES = ("worker/tasks.py", "api/routes/sessions.py", "worker/store/jobs.py", "api/ingest.py")
ERRORS = (
    "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) database is locked",
    "ConnectionRefusedError: [Errno 111] Connection refused",
    "KeyError: 'session_id'",
    "TypeError: 'NoneType' object is not subscriptable",
)
COMMANDS = (
    "pytest tests/unit -x -q --maxfail=1",
    'grep -rn "def write_back" worker/',
    "git log --oneline -n 20",
    "docker compose logs worker --tail 200",
)


@dataclass(frozen=True, slots=True)
class Needles:
    """Strings that occur once in their session, and the seqs that hold them."""

    request_id: str
    path: str
    error_line: str
    seqs: tuple[int, int, int]


def session_messages(
    session: int, count: int, *, seed: int = 7
) -> tuple[list[dict[str, Any]], Needles]:
    """``count`` messages of session number ``session``, and its needles."""
    rng = random.Random(seed * 1_000_003 + session)
    needles = Needles(
        request_id=f"req-{session:06d}-{rng.getrandbits(48):012x}",
        path=f"/srv/tenants/t{session:06d}/releases/{rng.getrandbits(32):08x}/settings.toml",
        error_line=f"ValueError: shard s{session}-{rng.getrandbits(24):06x} has no leader (term 7)",
        seqs=(count // 5 + 1, count // 2 + 1, count - count // 7),
    )
    out = [_message(rng, seq) for seq in range(1, count + 1)]
    for seq, needle in zip(needles.seqs, _needle_texts(needles), strict=True):
        out[seq - 1] = needle
    return out, needles


def _needle_texts(n: Needles) -> Iterator[dict[str, Any]]:
    yield {"role": "user", "content": f"The gateway logged {n.request_id} before the timeout."}
    yield _call("read_file", {"path": n.path})
    yield _result(
        {"output": f"Traceback (most recent call last):\n{n.error_line}\n", "exit_code": 1}
    )


def _message(rng: random.Random, seq: int) -> dict[str, Any]:
    kind = seq % 4
    if kind == 1:
        return {"role": "user", "content": _user_text(rng)}
    if kind == 2:
        return _call("terminal", {"command": rng.choice(COMMANDS)})
    if kind == 3:
        return _result(_tool_output(rng))
    return {"role": "assistant", "content": _sentence(rng, 40)}


def _user_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(RUSSIAN)
    if roll < 0.08:
        return rng.choice(JAPANESE)
    return _sentence(rng, 25)


def _tool_output(rng: random.Random) -> dict[str, Any]:
    lines = [_sentence(rng, 12) for _ in range(4)]
    if rng.random() < 0.3:
        module = rng.choice(MODULES)
        lines += [
            "Traceback (most recent call last):",
            f'  File "/app/{module}", line {rng.randint(10, 900)}, in run',
            rng.choice(ERRORS),
        ]
    return {"output": "\n".join(lines), "exit_code": int(rng.random() < 0.3)}


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {
        "name": name, "arguments": json.dumps(arguments),
    }}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _result(output: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(output)}
