"""The lines of a tool's output that a developer would quote as its error: the one rule set.

An output's error is rarely its last line: make ends with ``make: *** [...] Error 1``, pytest
with a ``=== 1 failed ===`` banner, npm with ``npm ERR! A complete log...``. Lines are sorted
into *specific* errors (an exception, a compiler diagnostic, a failed test, ``fatal: ...``) and
*trailers* (those banners); a reader takes the specific ones first, in order of appearance.

The scan is linear and cheap on clean output: a handful of substring tests decide that a text
holds no error (most outputs); otherwise only the lines around each trigger are looked at.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from worker.compressor.needle_screen import Needles

MAX_ERROR_LINES = 8  # per output: the first ones of each rank
MAX_LINE_CHARS = 1_000  # a longer "line" is data (minified code, a blob), not an error message

# A text without any of these holds no error line. Ordered by how often they hit, so that an
# output with an error is answered early; a clean one pays every test (each a fast C search).
_TRIGGERS = (
    "rror",
    "RROR",
    "FAIL",
    "atal",
    "ATAL",
    "xception",
    "not found",
    "No such file",
    "denied",
    "anic",
    "●",
    "Killed",
    "fault",
    "Abort",
    ".go:",
    "\nE  ",
    "Traceback",
    "ERR!",
    "undefined reference",
    "Assertion",
    "timed out",
    "onnection refused",
    "Could not resolve",
    "unreachable",
)
_MAX_CANDIDATES = 2_000
_STDERR_TAG = "[stderr] "
_TRACEBACK = "Traceback (most recent call last):"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

_SPECIFIC = re.compile(
    r"""
      \s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::\s.*)?  # ValueError: x
    | \s*Exception\ in\ thread\ .+                               # Java
    | E\ {2,}\S.*                                                # pytest's E   lines
    | (?:FAILED|ERROR)\ +\S+(?:\ +-\ .*)?                        # pytest: FAILED tests/x.py::t - ...
    | (?:FAIL|ERROR):\ +\w+\ +\([\w.]+\).*                       # unittest: FAIL: test_x (pkg.T)
    | \s*\S+\.go:\d+(?::\d+)?:\ .+                               # go build, go test details
    | ---\ FAIL:\ .+                                             # go test
    | (?:error|fatal)(?:\[\w+\])?:\ .+                           # rustc, git, kubectl, many CLIs
    | (?:FATAL|ERROR|PANIC):\ .+                                 # psql, loggers
    | \s*Error:\ .+                                              # node and many CLIs
    | (?:panic:\ |thread\ '.*'\ panicked\ at\ ).+                # go, rust
    | \S.*:\ (?:command\ not\ found|No\ such\ file\ or\ directory|Permission\ denied|not\ found)
    | Segmentation\ fault.*|Killed|Aborted.*|Bus\ error.*
    | \s*●\ .+                                                   # jest: ● Suite > test
    | npm\ (?:ERR!|error)\ (?!code\ |errno\ |path\ |syscall\ |\ |A\ complete\ log|Log\ files
        |This\ is\ probably|Failed\ at\ the|Exit\ status|command\ |signal\ |/).+
    | (?:\S+\ +){0,3}\[?(?:ERROR|FATAL|CRITICAL)\]?:?\ .+       # log lines: 12:00:01 ERROR ...
    """,
    re.VERBOSE,
)
# Diagnostics that may sit anywhere in a line (behind a build tool's "pkg:build: " prefix, a
# program name, a path): searched for, where the patterns above must match the whole line.
# Each starts with a literal character, so the search skips through a line quickly.
_DIAGNOSTIC = re.compile(r"(?::\d+(?::\d+)?:\ *(?:fatal\ )?|\(\d+,\d+\):\ *)error\b")  # gcc, tsc
_JOB_KILLED = re.compile(r": line \d+: +\d+ (?:Killed|Segmentation fault|Aborted)")  # bash
# "program: message" with an error word in the message (ssh: ..., curl: (22) ...).
_PROGRAM = re.compile(r"[\w./@-]+: ")
_ERROR_WORD = re.compile(
    r"\b(?:[Ee]rror|[Ff]ailed|refused|denied|timed out|[Cc]ould not|[Cc]annot|[Uu]nable to"
    r"|unreachable)\b"
)
_TRAILER = re.compile(
    r"""
      make(?:\[\d+\])?:\ \*\*\*\ .+                              # make: *** [Makefile:3: all] Error 2
    | npm\ (?:ERR!|error)(?:\ (?:code|errno|path|syscall|A\ complete\ log|Log\ files|This\ is
        \ probably|Failed\ at\ the|Exit\ status|command|signal)\b.*|\s+/.*|\s*)   # npm's boilerplate
    | error:\ (?:could\ not\ compile|aborting\ due\ to)\ .+      # cargo's closing lines
    | collect2:\ error:\ ld\ returned\ .+                        # gcc after a link error
    | =+\ .*\b(?:failed|errors?)\b.*=+                           # pytest's summary banner
    | FAILED\ \(.+\)                                             # unittest: FAILED (failures=1)
    | FAIL(?:\s+\S+.*)?                                          # go: FAIL pkg 0.01s
    | Tests?:\ +\d+\ failed.*                                    # jest
    | .*\b(?:exited|failed)\ with\ (?:exit\ )?(?:code|status)\ -?\d+.*
    """,
    re.VERBOSE,
)
# Source code that merely names an error: a cat of a file, a grep hit, a diff line.
_CODE = re.compile(
    r"\s*(?:raise|except|throw|class|def|import|from|return|catch|if|elif|assert|#|//|\*|[+-]\s)"
)
_EXCEPTION_NAME = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?::\s.*)?")


class ErrorLine(NamedTuple):
    text: str  # the line, without trailing white space and terminal colour codes
    at: int  # its offset in the text it was found in
    specific: bool  # False for a trailer


# The signs nearly every error carries; asked alone of the output of a command that succeeded.
_COMMON_TRIGGERS = ("rror", "FAIL", "xception", "Traceback")
_ALL = Needles(_TRIGGERS)


def may_hold_errors(text: str, *, quick: bool = False) -> bool:
    """False when ``error_lines`` would find nothing in ``text``. ``quick``: ask only the
    common signs (False may then miss a rare kind of error line)."""
    if quick:  # four fast substring searches cost less than building the automaton's answer
        return any(trigger in text for trigger in _COMMON_TRIGGERS)
    return _ALL.any_in(text) or text.startswith("E  ")


def error_lines(text: str, *, limit: int = MAX_ERROR_LINES) -> list[ErrorLine]:
    """The error lines of a tool output: specific ones first, then trailers, each in order."""
    hits = _ALL.matches(text)
    if text.startswith("E  "):  # pytest's first E line at the very start: no line break before
        hits.insert(0, (0, 0, 1))
    if not hits:
        return []
    specific: dict[str, ErrorLine] = {}
    trailers: dict[str, ErrorLine] = {}
    for start, end in _candidate_lines(text, hits):
        line = text[start:end]
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        line = line.rstrip()
        if line.startswith(_STDERR_TAG):  # deepagents marks each line its command wrote there
            line = line[len(_STDERR_TAG) :]
            start += len(_STDERR_TAG)
        if not line or len(line) > MAX_LINE_CHARS or _CODE.match(line):
            continue
        if _TRAILER.fullmatch(line):
            trailers.setdefault(line.strip(), ErrorLine(line.strip(), start, False))
        elif _is_specific(line):
            specific.setdefault(line.strip(), ErrorLine(line.strip(), start, True))
        if len(specific) >= limit:
            break
    for found in _traceback_ends(text):
        specific.setdefault(found.text, found)
    ranked = sorted(specific.values(), key=lambda e: e.at)
    ranked += sorted(trailers.values(), key=lambda e: e.at)
    return ranked[:limit]


def _is_specific(line: str) -> bool:
    if _SPECIFIC.fullmatch(line):
        return True
    if "error" in line and _DIAGNOSTIC.search(line):
        return True
    if "undefined reference to " in line or ("Assertion " in line and " failed" in line):
        return True  # ld; C's assert()
    if ": line " in line and _JOB_KILLED.search(line):
        return True
    m = _PROGRAM.match(line)
    return m is not None and _ERROR_WORD.search(line, m.end()) is not None


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (stripped), or ""."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _candidate_lines(text: str, hits: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(start, end) of every line holding a trigger, in order, each once (at most
    ``_MAX_CANDIDATES``: a grep for "Error" over a code base holds thousands)."""
    spans: list[tuple[int, int]] = []
    last_end = -1
    for _, at, _ in sorted(hits, key=lambda hit: hit[1]):
        if at <= last_end:
            continue  # on the line taken last
        if text[at] == "\n":
            at += 1
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        last_end = end = len(text) if end < 0 else end
        spans.append((start, end))
        if len(spans) >= _MAX_CANDIDATES:
            break
    return spans


def _traceback_ends(text: str) -> list[ErrorLine]:
    """The line that ends each Python traceback, whatever the exception's name."""
    found: list[ErrorLine] = []
    at = text.find(_TRACEBACK)
    while at >= 0:
        pos = text.find("\n", at)
        end = None
        while pos >= 0:
            start = pos + 1
            nxt = text.find("\n", start)
            line = text[start : len(text) if nxt < 0 else nxt].rstrip()
            if line and not line[0].isspace():
                end = (start, line)
                break
            pos = nxt
        if end is None:
            break
        start, line = end
        if _EXCEPTION_NAME.fullmatch(line) and not line.startswith(_TRACEBACK):
            found.append(ErrorLine(line, start, True))
        at = text.find(_TRACEBACK, start)
    return found
