"""The lines of a tool's output that a developer would quote as its error: the one rule set.

An output's error is rarely its last line: make ends with ``make: *** [...] Error 1``, pytest
with a ``=== 1 failed ===`` banner, npm with ``npm ERR! A complete log...``. Lines are sorted
into three ranks: *specific* errors in the shapes toolchains print them (an exception, a
compiler or linter diagnostic, a failed test, ``fatal: ...``), *worded* ones (any other line
that says something failed, was refused, could not be done..., or a line the command's own
program prefixed with its name: the fallback for toolchains no pattern knows), and *trailers*
(banners and counts that only say the run failed). A reader takes them in that order, each
in order of appearance.

The scan is linear and cheap on clean output: a handful of substring tests decide that a text
holds no error (most outputs); otherwise only the lines around each trigger are looked at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from worker.compressor.cues import Cue
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
    "efused",
    "ould not",
    "unreachable",
    # worded errors (the fallback rank) and shapes without an error word
    "ailed",
    "ailure",
    "ejected",
    "CONFLICT",
    "annot",
    "an't",
    "nable to",
    "no space left",
    "ndefined",
    "xceeds",
    "not satisf",
    "not running",
    "o such",
    ") test ",
    "\ne: ",
    "(warning):",
    "(error):",
    '"detail":',
    '"message":',
)
_MAX_CANDIDATES = 2_000
# What a tool put before a line: deepagents' stderr tag, BuildKit's step number and time,
# Terraform's box.
_PREFIX = re.compile(r"\[stderr\] |#\d+ (?:\d+\.\d+ )?|[│┃] *")
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
    | (?:panic:\ |thread\ '.*'\ panicked\ at\ ).+                # go, rust
    | \S.*:\ (?:command\ not\ found|No\ such\ file\ or\ directory|Permission\ denied|not\ found)
    | Segmentation\ fault.*|Killed|Aborted.*|Bus\ error.*
    | \s*●\ .+                                                   # jest: ● Suite > test
    | npm\ (?:ERR!|error)\ (?!code\ |errno\ |path\ |syscall\ |\ |A\ complete\ log|Log\ files
        |This\ is\ probably|Failed\ at\ the|Exit\ status|command\ |signal\ |/).+
    | (?:\S+\ +){0,3}\[?(?:ERROR|FATAL|CRITICAL)\]?:?\ .+       # log lines: 12:00:01 ERROR ...
    | \s*\d+:\d+\ +error\ +.+                                     # eslint: 12:5  error  msg  rule
    | \s*//\S+\ +(?:FAILED|TIMEOUT)\ in\ .+                           # bazel: //pkg:t FAILED in 3s
    | e:\ \S+:\d+:\d+\ .+                                         # kotlinc: e: file:///x.kt:3:9 msg
    | CONFLICT\ \([^)]*\):\ .+                                     # git merge, rebase, cherry-pick
    | \s*!\ \[(?:remote\ )?rejected\]\ .+                          # git push
    | \s*\d+\)\ test\ .+                                            # ExUnit: 1) test name (Module)
    | PHP\ (?:Fatal|Parse)\ error:\ .+
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
    | FAILURE:\ Build\ failed.*|BUILD\ FAILED.*|>\ Task\ \S+\ FAILED  # Gradle, Ant
    | error:\ failed\ to\ push\ some\ refs.*                         # git, after ! [rejected]
    | \w+:\ Error\ is\ not\ recoverable:\ exiting\ now            # tar, cpio
    | Execution\ failed\ for\ task\ .+|>\ A\ failure\ occurred\ while\ executing\ .+
    | >\ Compilation\ (?:error|failed).*                         # Gradle's "What went wrong"
    | Your\ requirements\ could\ not\ be\ resolved\ .+            # composer, before the problems
    """,
    re.VERBOSE,
)
# Trailers that may sit anywhere in a line: searched for where their literal part is found.
_EXITED_WITH = re.compile(r"\b(?:exited|failed) with (?:exit )?(?:code|status) -?\d")
_STEP_FAILED = " did not complete successfully"  # BuildKit: a step failed
# Source code that merely names an error: a cat of a file, a grep hit, a diff line.
# (A diff's line starts at its first column; a bazel target, "//pkg:t", is not a comment.)
_CODE = re.compile(
    r"[+-]\s|\s*(?:raise|except|throw|class|def|import|from|return|catch|if|elif|assert|#|//\s|\*)"
)
# A line in no known shape that still says something went wrong: the fallback rank. (Words in
# any case: a ``Cue`` finds them in one pass over the lower-cased line.)
_WORDED = Cue(
    "error errors fail failed fails failing failure failures fatal panic panicked exception "
    "refused denied rejected conflict aborted not_found could_not cannot can't unable_to "
    "no_space_left timed_out not_satisfy not_satisfied undefined exceeds not_running no_such"
)
# An HTTP API's error body, as httpie or curl prints it: "detail": "...".
_JSON_ERROR = re.compile(r'\s*"(?:detail|error|error_description|message)":\s*"')
# A count of errors or failures (a summary, ranked as a trailer).
_COUNTED = re.compile(
    r"\b\d+ (?:\w+ )?(?:errors?|failures?|failed|FAILED|failing|problems?)\b"
    r"|\b(?:[Ee]rrors?|[Ff]ailures?|[Ff]ailed|FAILED|FAILURES?|ERRORS?)[:=]?\s*\d"
)
# A linter's coded diagnostic (path:line:col: F841 ...), found by shape: it holds no error word.
_CODED = re.compile(r":\d+:\d+:? [A-Z]{1,4}\d{2,5}\b")
_SEVERITY_CODE = re.compile(r"\b[A-Z]{1,4}\d{3,5} \((?:error|warning)\): ")
_EXCEPTION_NAME = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?::\s.*)?")


class ErrorLine(NamedTuple):
    text: str  # the line, without trailing white space and terminal colour codes
    at: int  # its offset in the text it was found in
    specific: bool  # False for a trailer (a banner or a count that only says the run failed)


# The signs nearly every error carries; asked alone of the output of a command that succeeded.
_COMMON_TRIGGERS = ("rror", "FAIL", "xception", "Traceback")
_ALL = Needles(_TRIGGERS)


def may_hold_errors(text: str, *, quick: bool = False) -> bool:
    """False when ``error_lines`` would find nothing in ``text``. ``quick``: ask only the
    common signs (False may then miss a rare kind of error line)."""
    if quick:  # four fast substring searches cost less than building the automaton's answer
        return any(trigger in text for trigger in _COMMON_TRIGGERS)
    return _ALL.any_in(text) or text.startswith("E  ")


def error_lines(
    text: str, *, limit: int = MAX_ERROR_LINES, programs: Sequence[str] = ()
) -> list[ErrorLine]:
    """The error lines of a tool output: specific ones first, then worded ones, then trailers,
    each in order. ``programs``: the names of the programs the command ran (a line such a
    program prefixed with its name, ``tar: x: Cannot open``, is its own diagnostic)."""
    hits = _hits(text, programs)
    if not hits:
        return []
    specific: dict[str, ErrorLine] = {}
    trailers: dict[str, ErrorLine] = {}
    rest: list[tuple[int, str]] = []  # lines in no known shape: read for words if room is left
    for start, end in _candidate_lines(text, hits):
        line = text[start:end]
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        line = line.rstrip()
        prefix = _PREFIX.match(line)
        if prefix:  # deepagents' stderr tag, BuildKit's step and time, Terraform's box
            line = line[prefix.end() :]
            start += prefix.end()
        if not line or len(line) > MAX_LINE_CHARS or _CODE.match(line):
            continue
        if _is_trailer(line):
            trailers.setdefault(line.strip(), ErrorLine(line.strip(), start, False))
        elif _is_specific(line):
            specific.setdefault(line.strip(), ErrorLine(line.strip(), start, True))
            if len(specific) >= limit:
                break
        else:
            rest.append((start, line))
    for found in _traceback_ends(text):
        specific.setdefault(found.text, found)
    prefixes = tuple(f"{program}: " for program in programs)
    worded = _worded(rest, limit - len(specific), prefixes, trailers)
    ranked = sorted(specific.values(), key=lambda e: e.at)
    ranked += sorted(worded.values(), key=lambda e: e.at)
    ranked += sorted(trailers.values(), key=lambda e: e.at)
    return ranked[:limit]


def _worded(
    lines: list[tuple[int, str]],
    room: int,
    prefixes: tuple[str, ...],
    trailers: dict[str, ErrorLine],
) -> dict[str, ErrorLine]:
    """The lines in no known shape that say something went wrong (at most ``room``: what
    follows would rank past the limit); a count found on the way joins ``trailers``."""
    worded: dict[str, ErrorLine] = {}
    for start, line in lines:
        if len(worded) >= room:
            break
        if _WORDED.search(line) or _JSON_ERROR.match(line) or line.startswith(prefixes):
            if _COUNTED.search(line):  # "12 examples, 1 failure": how many, not which
                trailers.setdefault(line.strip(), ErrorLine(line.strip(), start, False))
            elif len(line.split(None, 2)) > 2:  # not a heading ("Failures:", "Error Message:")
                worded.setdefault(line.strip(), ErrorLine(line.strip(), start, True))
    return worded


def _is_trailer(line: str) -> bool:
    if _TRAILER.fullmatch(line) or _STEP_FAILED in line:
        return True
    return " with " in line and _EXITED_WITH.search(line) is not None


def _hits(text: str, programs: Sequence[str]) -> list[tuple[int, int, int]]:
    """Where the lines worth a look are: the triggers (as the needle screen gives them), the
    linters' coded diagnostics and the lines a program of the command prefixed with its name."""
    hits = _ALL.matches(text)
    if text.startswith("E  "):  # pytest's first E line at the very start: no line break before
        hits.insert(0, (0, 0, 1))
    if ":" in text:
        hits += [(-1, m.start(), m.end()) for m in _CODED.finditer(text)]
        for program in programs:
            hits += _line_starts(text, f"{program}: ")
    return hits


def _line_starts(text: str, prefix: str) -> list[tuple[int, int, int]]:
    """Hits (as the needle screen gives them) where a line of ``text`` starts with ``prefix``."""
    found = [(-1, 0, 0)] if text.startswith(prefix) else []
    at = text.find("\n" + prefix)
    while at >= 0 and len(found) < _MAX_CANDIDATES:
        found.append((-1, at + 1, at + 1))
        at = text.find("\n" + prefix, at + 1)
    return found


def _is_specific(line: str) -> bool:
    if _SPECIFIC.fullmatch(line):
        return True
    if "error" in line and _DIAGNOSTIC.search(line):
        return True
    if "Error: " in line:  # node and many CLIs, also behind a prefix ("Module not found: Error:")
        return True
    if ":" in line and _CODED.search(line):  # ruff, flake8, pylint: p.py:1:2: F841 msg
        return True
    if "): " in line and _SEVERITY_CODE.search(line):  # shellcheck: SC2034 (warning): msg
        return True
    if "undefined reference to " in line or ("Assertion " in line and " failed" in line):
        return True  # ld; C's assert()
    if ": line " in line and _JOB_KILLED.search(line):
        return True
    m = _PROGRAM.match(line)
    return m is not None and _ERROR_WORD.search(line, m.end()) is not None


def _candidate_lines(text: str, hits: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(start, end) of every line holding a trigger, in order, each once (at most
    ``_MAX_CANDIDATES``: a grep for "Error" over a code base holds thousands)."""
    spans: list[tuple[int, int]] = []
    last_end = -1
    for _, at, _ in sorted(hits, key=lambda hit: hit[1]):
        if text[at] == "\n":  # a needle that starts with a line break: the line after it
            at += 1
        if at <= last_end:
            continue  # on the line taken last
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
