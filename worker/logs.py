"""Logs: one JSON object a line (or text on a terminal), with the ids of what each line is about,
and never a secret the redactor recognizes.

Every record carries the fields bound in its context: a worker binds ``job_id`` when a job's
task starts, then ``session_id``, ``trigger`` and ``attempt`` as the job learns them (see
``bind``); the API binds ``request_id`` per request (``api/request_context.py``). The fields are
context variables, so each job thread and each request sees only its own. The message and any
traceback pass through ``redact_text`` before they are written, whatever logged them (our code,
Celery, uvicorn, httpx): a provider's error text, a focus topic or a URL may quote a key.

``COMPACTION_LOG_FORMAT``: ``json``, ``text``, or ``auto`` (the default): text when stderr is a
terminal, JSON otherwise.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal, TextIO

from worker.compressor.redact import redact_text

LogFormat = Literal["json", "text"]

# In this order, after the message, in both formats.
CONTEXT_FIELDS = ("job_id", "session_id", "trigger", "attempt", "request_id")

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "compaction_log_context", default=_EMPTY
)

# Libraries whose INFO lines repeat every request's URL (a callback URL may carry a token in its
# query): their warnings and errors still show.
_QUIET_LIBRARIES = ("httpx", "httpcore")


def bind(**fields: Any) -> None:
    """Add ``fields`` to every record logged from here on in this context (None removes one)."""
    merged = {**_context.get(), **fields}
    _context.set(MappingProxyType({k: v for k, v in merged.items() if v is not None}))


def clear() -> None:
    """Forget every bound field (a pool thread between two tasks)."""
    _context.set(_EMPTY)


@contextlib.contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """``fields`` bound for the ``with`` block only."""
    token = _context.set(MappingProxyType({**_context.get(), **fields}))
    try:
        yield
    finally:
        _context.reset(token)


def context_fields() -> Mapping[str, Any]:
    """What is bound now."""
    return _context.get()


def redacted(text: str) -> str:
    """``text`` with every secret the redactor recognizes replaced, also after a ": ".

    The redactor reads ``NAME: value`` as an assignment only where the name opens a line (YAML,
    headers); a log line often quotes outside text after a colon ("RuntimeError: <message>",
    "provider said: <message>"), so each such tail is read again as if it opened a line.
    """
    lines = redact_text(text).text.split("\n")
    for n, line in enumerate(lines):
        at = line.find(": ")
        while at != -1:
            tail = at + 2
            line = line[:tail] + redact_text(line[tail:]).text
            at = line.find(": ", tail)
        lines[n] = line
    return "\n".join(lines)


def _timestamp(record: logging.LogRecord) -> str:
    stamp = datetime.fromtimestamp(record.created, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", <bound ids>, "exception"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": redacted(record.getMessage()),
        }
        bound_now = context_fields()
        line.update((k, bound_now[k]) for k in CONTEXT_FIELDS if k in bound_now)
        if record.exc_info:
            line["exception"] = redacted(self.formatException(record.exc_info))
        if record.stack_info:
            line["stack"] = redacted(self.formatStack(record.stack_info))
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``2025-01-01T12:00:00.000Z INFO worker.compaction [job_id=… session_id=…] message``."""

    def format(self, record: logging.LogRecord) -> str:
        bound_now = context_fields()
        ids = " ".join(f"{k}={bound_now[k]}" for k in CONTEXT_FIELDS if k in bound_now)
        head = f"{_timestamp(record)} {record.levelname} {record.name}"
        line = f"{head} [{ids}] " if ids else f"{head} "
        line += redacted(record.getMessage())
        if record.exc_info:
            line += "\n" + redacted(self.formatException(record.exc_info))
        if record.stack_info:
            line += "\n" + redacted(self.formatStack(record.stack_info))
        return line


def resolve_format(setting: str, stream: TextIO) -> LogFormat:
    """``auto``: text for a person at a terminal, JSON for everything that collects logs."""
    if setting in ("json", "text"):
        return setting  # type: ignore[return-value]  # narrowed by the test above
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def configure(
    setting: str, *, level: int | str = logging.INFO, stream: TextIO | None = None
) -> None:
    """This process's logging: one handler on the root logger, our formatter, ``level``.

    Args:
        setting: ``COMPACTION_LOG_FORMAT`` (``json``, ``text`` or ``auto``).
        stream: stderr by default (the one the process started with: Celery may later replace
            ``sys.stderr`` with a proxy that logs, which must not feed back into the log).
    """
    out = stream or sys.__stderr__ or sys.stderr
    handler = logging.StreamHandler(out)
    fmt = resolve_format(setting, out)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(_level(level))
    for name in _QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    logging.captureWarnings(True)  # a library's warnings become records of the same shape


def _level(level: int | str) -> int:
    if isinstance(level, int):
        return level
    named = logging.getLevelName(level.upper())
    return named if isinstance(named, int) else logging.INFO


# ---------------------------------------------------------------------------------------------
# Celery: worker and beat


def install_celery_hooks() -> None:
    """Celery leaves the root logger to ``configure``; each job's task binds its job id."""
    from celery.signals import setup_logging, task_postrun, task_prerun

    setup_logging.connect(_celery_setup_logging, weak=False, dispatch_uid="compaction.logs")
    task_prerun.connect(_task_started, weak=False, dispatch_uid="compaction.logs")
    task_postrun.connect(_task_ended, weak=False, dispatch_uid="compaction.logs")


def _celery_setup_logging(loglevel: int | str | None = None, **_: Any) -> None:
    # A receiver of setup_logging makes Celery skip its own logging setup (and its redirection
    # of stdout and stderr into the log).
    from worker.settings import get_settings

    configure(get_settings().log_format, level=loglevel or logging.INFO)


def _task_started(task: Any = None, args: Any = None, **_: Any) -> None:
    from worker import keys

    clear()  # a pool thread runs one task after another
    if getattr(task, "name", None) in (keys.COMPACT_TASK, keys.CALLBACK_TASK) and args:
        bind(job_id=str(args[0]))


def _task_ended(**_: Any) -> None:
    clear()
