"""Benchmark results written into the docs: the text between two markers is replaced."""

from __future__ import annotations

from pathlib import Path


def replace_block(path: Path, begin: str, end: str, fragment: str) -> None:
    """Put ``fragment`` between the ``begin`` and ``end`` markers of ``path`` (each on a line of
    its own), in place of what stood there; a file without both markers is an error."""
    text = path.read_text(encoding="utf-8")
    head, found, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise SystemExit(f"{path} has no {begin} ... {end} block to replace")
    path.write_text(f"{head}{begin}\n{fragment}\n{end}{tail}", encoding="utf-8")
