"""``compaction compress FILE``: compact one transcript file offline; print messages + report.

The file holds a JSON list of messages, or ``{"messages": [...]}`` (plus ``"system"`` for
``anthropic.messages``), plain or gzip-compressed, in the wire format ``--format`` names
(``openai.chat`` by default); the result is written in the same format. The summarizer is the one the settings describe (the LLM when
``COMPACTION_LLM_BASE_URL`` is set, else the extractive one), so this runs exactly what a worker
would, minus the queue and the database. With ``--out`` a one-line summary goes to stderr; a
result that does not fit the window, or is larger than ``--target-tokens`` asked for, is still
written, with a warning.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zlib
from datetime import date
from pathlib import Path
from typing import Any

HELP = "compact one transcript file offline and print messages + report"
DEFAULT_CONTEXT_LENGTH = 128_000
DEFAULT_FORMAT = "openai.chat"  # an unknown one is refused by the core (formats.check_format)
GZIP_MAGIC = b"\x1f\x8b"


class UsageError(Exception):
    """A problem with the input the user gave us: reported in one line, exit code 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", type=Path, metavar="FILE", help="transcript JSON file (may be gzip-compressed)"
    )
    parser.add_argument(
        "--context-length",
        type=int,
        default=DEFAULT_CONTEXT_LENGTH,
        metavar="N",
        help=f"the main model's window in tokens ({DEFAULT_CONTEXT_LENGTH:,})",
    )
    parser.add_argument(
        "--target-tokens",
        type=int,
        metavar="N",
        help="the size to compact to, in tokens, at most the context length "
        "(default: COMPACTION_TARGET_RATIO of it)",
    )
    parser.add_argument(
        "--format",
        default=DEFAULT_FORMAT,
        metavar="F",
        help="the transcript's wire format: openai.chat (the default), anthropic.messages "
        "(system beside the messages) or openai.responses; the result is in the same one",
    )
    parser.add_argument("--focus", metavar="TOPIC", help="favour this topic in the summary")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the result here")
    parser.add_argument(
        "--model", metavar="M", help="the main model: picks the token encoding (settings)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        result = compact_file(
            args.file, context_length=args.context_length, target_tokens=args.target_tokens,
            focus=args.focus, model=args.model, fmt=args.format,
        )  # fmt: skip
        write_result(result, args.out)
    except UsageError as exc:
        print(f"compaction compress: error: {exc}", file=sys.stderr)
        return 2
    report = result["report"]
    if args.out is not None:  # stdout holds no result: say what was written
        print(f"compaction compress: wrote {args.out}: {summary(report)}", file=sys.stderr)
    if report["tokens_after"] > args.context_length:
        print(
            f"compaction compress: warning: the result ({report['tokens_after']:,} tokens) does "
            f"not fit the {args.context_length:,}-token window: the model cannot take it as it is",
            file=sys.stderr,
        )
    elif args.target_tokens is not None and report["tokens_after"] > args.target_tokens:
        print(
            f"compaction compress: warning: the result ({report['tokens_after']:,} tokens) is "
            f"larger than the {args.target_tokens:,} tokens asked for (--target-tokens)",
            file=sys.stderr,
        )
    return 0


def summary(report: dict[str, Any]) -> str:
    """``203 -> 28 messages, 43,994 -> 9,574 tokens (78.2% saved), extractive summary``"""
    if report["noop_reason"] is not None or report["aborted"]:
        return f"unchanged ({report['noop_reason'] or report['error_class'] or 'aborted'})"
    fallback = "; the LLM failed, the fallback stood in" if report["fallback_used"] else ""
    return (
        f"{report['messages_before']} -> {report['messages_after']} messages, "
        f"{report['tokens_before']:,} -> {report['tokens_after']:,} tokens "
        f"({report['savings_pct']:.1f}% saved), {report['summarizer']} summary{fallback}"
    )


def compact_file(
    path: Path,
    *,
    context_length: int,
    target_tokens: int | None,
    focus: str | None,
    model: str | None,
    fmt: str = DEFAULT_FORMAT,
) -> dict[str, Any]:
    """Read, compact and return ``{"messages", "report"}`` (and ``"system"`` in
    ``anthropic.messages``) for one transcript file in the wire format ``fmt``."""
    from worker.compressor import formats
    from worker.compressor.compress import compress
    from worker.compressor.config import CompressConfig
    from worker.compressor.errors import InvalidTranscriptError
    from worker.encodings import counter_for_model
    from worker.settings import get_settings
    from worker.summarizers import build_summarizer, close_summarizer

    if context_length < 1:
        raise UsageError(
            f"--context-length must be a positive number of tokens, not {context_length}"
        )
    check_target(target_tokens, context_length)
    try:
        known = formats.check_format(fmt)
    except InvalidTranscriptError as exc:
        raise UsageError(f"--format: {exc}") from exc
    try:
        doc = read_json(path)
        messages = formats.read(known, _messages_of(doc, path), _system_of(doc))
    except InvalidTranscriptError as exc:
        raise UsageError(f"{path}: invalid transcript: {exc}") from exc
    settings = get_settings()
    config = CompressConfig(
        context_length=context_length,
        target_ratio=settings.target_ratio,
        target_tokens=target_tokens,
        summarizer_context_tokens=settings.summary_context_length,
        min_messages=settings.min_messages,
        ineffective_savings_pct=settings.ineffective_savings_pct,
        thrash_strikes=settings.thrash_strikes,
    )
    summarizer = build_summarizer(settings)
    try:
        result = compress(
            messages,
            config=config,
            summarizer=summarizer,
            counter=counter_for_model(model or settings.main_model),
            today=date.today(),
            focus_topic=focus,
        )
    finally:
        close_summarizer(summarizer)
    written = formats.write(known, result.messages)
    out: dict[str, Any] = {"messages": written.messages}
    if known == formats.ANTHROPIC:
        out["system"] = written.system
    return out | {"report": result.report.to_dict()}


def check_target(target_tokens: int | None, context_length: int) -> None:
    """A size asked for is a positive number of tokens within the window."""
    if target_tokens is None:
        return
    if target_tokens < 1:
        raise UsageError(
            f"--target-tokens must be a positive number of tokens, not {target_tokens}"
        )
    if target_tokens > context_length:
        raise UsageError(
            f"--target-tokens must be at most the context length ({context_length:,} tokens), "
            f"not {target_tokens:,}"
        )


def read_json(path: Path) -> object:
    """The JSON document in ``path``, plain or gzip-compressed (told by its first bytes)."""
    raw = _text(_read_bytes(path), path)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise UsageError(
            f"{path}: JSON nested too deeply to parse (objects and arrays inside each other)"
        ) from exc


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise UsageError(f"{path}: is a directory, not a transcript file") from exc
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise UsageError(f"{path}: looks gzip-compressed but cannot be unpacked: {exc}") from exc


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
            "expected a JSON transcript, plain or gzip-compressed"
        ) from exc


def _messages_of(doc: object, path: Path) -> object:
    """The message list of a document: the list itself, or its ``messages`` key."""
    if isinstance(doc, dict):
        if "messages" not in doc:
            raise UsageError(f'{path}: expected a JSON list of messages or {{"messages": [...]}}')
        return doc["messages"]
    return doc


def _system_of(doc: object) -> object:
    """An Anthropic transcript's system prompt, given beside its messages."""
    return doc.get("system") if isinstance(doc, dict) else None


def write_result(result: dict[str, Any], out: Path | None) -> None:
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if out is None:
        print(text)
        return
    try:
        out.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {exc}") from exc
