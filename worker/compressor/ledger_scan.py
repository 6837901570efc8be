"""Scanners that pull exact artifacts out of message text: the ledger's raw material.

Each function takes one text and returns what it found, in order of appearance. They are pure
and deterministic, and they stay cheap on large tool outputs (a few precompiled passes each).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from worker.compressor import jsonvalue
from worker.compressor.shell_words import shell_tokens

# ---------------------------------------------------------------------------------------------
# Exit codes of shell tool results

_RETURNCODE_TAG = re.compile(r"<returncode>\s*(-?\d{1,5})\s*</returncode>")
_JSON_EXIT = re.compile(
    r"\"(?:exit_code|exitCode|returncode|return_code|exit_status)\"\s*:\s*(-?\d{1,5})"
)
_TEXT_EXIT = re.compile(
    r"(?i)\b(?:exit(?:ed)?(?: with)?(?: code| status)|return ?code|exit_code)\s*[:=]?\s*(-?\d{1,5})\b"
)
# Plain "exit code N" is only trusted near the start or the end: in the middle it is more likely
# the program's own output talking about some other process.
_TEXT_WINDOW_CHARS = 300


def exit_code(result: str) -> int | None:
    """The exit code a shell tool reported in its result, if it reported one."""
    for pattern in (_RETURNCODE_TAG, _JSON_EXIT):
        m = pattern.search(result)
        if m:
            return int(m.group(1))
    head, tail = result[:_TEXT_WINDOW_CHARS], result[-_TEXT_WINDOW_CHARS:]
    for part in (tail, head):
        found = _TEXT_EXIT.findall(part)
        if found:
            return int(found[-1])
    return None


# ---------------------------------------------------------------------------------------------
# Error lines

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ERROR_LINE = re.compile(
    r"""
      [A-Za-z_][\w.]*(?:Error|Exception)(?::\s.*)?          # ValueError: bad value
    | (?:FAILED|ERROR)\s+\S+\.py\S*(?:\s.*)?                 # pytest: FAILED tests/x.py::t - ...
    | (?:FAIL|ERROR):\s+\w+\s+\([\w.]+\)(?:\s.*)?             # unittest: FAIL: test_x (pkg.Tests)
    | (?:error|fatal)(?:\[\w+\])?:\s.+                        # error: ..., fatal: ..., error[E0425]: ...
    | \S+:\d+(?::\d+)?:\s(?:error|fatal\ error):\s.+        # compilers, mypy: f.c:3:1: error: ...
    """,
    re.VERBOSE,
)
_TRACEBACK = "Traceback (most recent call last):"
# The line that ends a traceback: [module.]ExceptionName[: message], where the name reads as an
# exception (ValueError, re.error, SystemExit, django...ImproperlyConfigured), not as prose.
_EXCEPTION_LINE = re.compile(
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z][a-z0-9]+[A-Z]\w*|\w*(?:Error|error|Exception|Exit|Interrupt))"
    r"(?::\s.*)?"
)


def may_hold_errors(text: str) -> bool:
    """False when ``error_lines`` would find nothing in ``text`` or in any part of it."""
    return "rror" in text or "FAIL" in text or "atal" in text or _TRACEBACK in text


def error_lines(text: str) -> list[str]:
    """Exact error lines: exception lines, the last line of each traceback, failed tests."""
    if not may_hold_errors(text):
        return []  # the common case, decided without splitting the text
    found: list[str] = []
    in_traceback = False
    for raw in _ANSI.sub("", text).splitlines():
        line = raw.rstrip()
        if line.startswith(_TRACEBACK):
            in_traceback = True
            continue
        if in_traceback and line and not line[0].isspace():
            in_traceback = False
            if _EXCEPTION_LINE.fullmatch(line):
                found.append(line)  # the exception that ended the traceback, whatever its class
                continue
        if line and not line[0].isspace() and _ERROR_LINE.fullmatch(line):
            found.append(line)
    return found


# ---------------------------------------------------------------------------------------------
# URLs and identifiers

# A redaction marker may sit inside a URL (https://user:[REDACTED]@host/...).
_URL = re.compile(r"\bhttps?://(?:[^\s'\"<>()\[\]{}\\`|^]|\[REDACTED\])+")
_URL_TRAILING = ".,;:!?*_'\""


def may_hold_urls(text: str) -> bool:
    """False when ``urls`` would find nothing in ``text`` or in any part of it."""
    return "://" in text


def urls(text: str) -> list[str]:
    if not may_hold_urls(text):
        return []
    return [m.group(0).rstrip(_URL_TRAILING) for m in _URL.finditer(text)]


# Patterns start with a literal or a character class, and boundaries are checked afterwards:
# a leading look-behind would make the engine try every position of every tool output.
_FULL_SHA = re.compile(r"[0-9a-f]{40}(?![0-9A-Za-z])")
# Short SHAs only where git put them: "commit 3f78685", "[main 3f78685]", "HEAD is now at 3f78685",
# "git show 3f78685", and ranges "3f78685..9fceb02" (not a diff's "index" line: blob ids).
_GIT_CONTEXT_SHA = re.compile(
    r"(?:commit|HEAD is now at|git (?:show|checkout|revert|cherry-pick|reset --hard|rebase|log|diff|switch))"
    r"\s+(?P<sha>[0-9a-f]{7,12})(?![0-9A-Za-z])"
)
_BRANCH_SHA = re.compile(r"\[[\w./-]+ (?P<sha>[0-9a-f]{7,12})\]")  # git commit's "[main 3f78685]"
_SHA_RANGE = re.compile(r"(?P<a>[0-9a-f]{7,12})\.\.\.?(?P<b>[0-9a-f]{7,12})(?![0-9A-Za-z.])")
_HASH_NUMBER = re.compile(r"#(?P<n>\d{1,7})(?![\w#])")
_REPO_BEFORE = re.compile(r"(?<![\w.-])[A-Za-z0-9][\w.-]{0,38}/[\w.-]{1,100}\Z")
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z-])"
)
_HEX_DIGIT_AND_LETTER = re.compile(r"(?=.*[0-9])(?=.*[a-f])")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


# Hex runs are rare in prose and code, but the patterns above start with a character class, so
# the engine tries each of them at every hex digit of every text. One byte translation shows
# where runs of hex could be (a hex digit becomes x, A-F becomes X, "." and "-" stay, the rest is
# a space), and each pattern runs only on text that holds the run it needs.
_HEX_SHAPE = bytes(
    ord("x")
    if c in b"0123456789abcdef"
    else ord("X")
    if c in b"ABCDEF"
    else c
    if c in b".-"
    else ord(" ")
    for c in range(256)
)
_FULL_SHA_SHAPE = b"x" * 40
_SHORT_SHA_SHAPE = b"x" * 7
_RANGE_SHAPE = b"x" * 7 + b".."
_UUID_SHAPE = b"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"


_HASH_DIGIT = re.compile(r"#\d")


def may_hold_identifiers(text: str) -> bool:
    """False when ``identifiers`` would find nothing in ``text`` or in any part of it.

    Every identifier pattern needs seven hex digits in a row (a UUID's first group has eight)
    or a ``#`` before a digit.
    """
    if _HASH_DIGIT.search(text):
        return True
    return _SHORT_SHA_SHAPE in text.encode("utf-8", "surrogatepass").translate(_HEX_SHAPE)


def identifiers(text: str) -> list[str]:
    """Git SHAs, issue and PR references, UUIDs: strings a summary must not paraphrase."""
    shape = text.encode("utf-8", "surrogatepass").translate(_HEX_SHAPE)
    found: list[tuple[int, str]] = []
    if _FULL_SHA_SHAPE in shape:
        for m in _FULL_SHA.finditer(text):
            if _free_start(text, m.start()) and _is_sha(m.group(0)):
                found.append((m.start(), m.group(0)))
    if _SHORT_SHA_SHAPE in shape:
        found.extend(_git_context_shas(text, ranges=_RANGE_SHAPE in shape))
    if "#" in text:
        found.extend(_issue_refs(text))
    if b"-" in shape and _UUID_SHAPE in shape.replace(b"X", b"x"):
        found.extend(
            (m.start(), m.group(0))
            for m in _UUID.finditer(text)
            if _free_start(text, m.start(), "-")
        )
    return [value for _, value in sorted(found)]


def _git_context_shas(text: str, *, ranges: bool) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    if "commit" in text or "HEAD" in text or "git " in text:
        found.extend(_shas(_GIT_CONTEXT_SHA, text))
    if "[" in text:
        found.extend(_shas(_BRANCH_SHA, text))
    if ranges:
        for m in _SHA_RANGE.finditer(text):
            start = m.start()
            if _free_start(text, start, ".") and not text.endswith("index ", 0, start):
                found.extend((m.start(g), m.group(g)) for g in ("a", "b") if _is_sha(m.group(g)))
    return found


def _shas(pattern: re.Pattern[str], text: str) -> list[tuple[int, str]]:
    return [
        (m.start("sha"), m.group("sha")) for m in pattern.finditer(text) if _is_sha(m.group("sha"))
    ]


def _issue_refs(text: str) -> list[tuple[int, str]]:
    """owner/repo#12 with any number; a bare #1234 needs two digits and a free start."""
    found: list[tuple[int, str]] = []
    for m in _HASH_NUMBER.finditer(text):
        start = m.start()
        repo = _REPO_BEFORE.search(text, max(0, start - 140), start)
        if repo is not None:
            found.append((repo.start(), text[repo.start() : m.end()]))
        elif len(m.group("n")) >= 2 and _free_start(text, start, "/#&"):
            found.append((start, m.group(0)))
    return found


def _free_start(text: str, i: int, extra: str = "") -> bool:
    return i == 0 or (text[i - 1] not in _WORD_CHARS and text[i - 1] not in extra)


def _is_sha(value: str) -> bool:
    return _HEX_DIGIT_AND_LETTER.match(value) is not None


# ---------------------------------------------------------------------------------------------
# Files written by shell commands

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w]*)\1")
_MAY_WRITE = re.compile(r">|\b(?:g?sed|perl|tee|touch|truncate|cp|mv|install|ln)\b")
_COMMAND_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "-"})
# A written file as commands name it: a relative or absolute path with a "/" or an extension.
_PATH_RE = re.compile(r"(?=[^/]*[A-Za-z])[\w.~/+-]*[/.][\w.~/+-]*")


def shell_written_files(command: str) -> list[str]:
    """Files a shell command writes: redirections, ``sed -i``, ``tee``, ``touch``, ``cp``/``mv``."""
    found: list[str] = []
    for line in _without_heredoc_bodies(command):
        if _MAY_WRITE.search(line) is None:
            continue  # tokenizing is slow; most lines write nothing
        tokens = shell_tokens(line)
        if tokens is None:
            continue  # an unbalanced quote: a multi-line string, not something to parse
        for words, targets in _simple_commands(tokens):
            found.extend(targets)
            found.extend(_files_written_by(words))
    return [f for f in found if f not in _NOT_FILES and _PATH_RE.fullmatch(f)]


def _without_heredoc_bodies(command: str) -> Iterator[str]:
    """The command's lines, minus the bodies of here-documents (they are data, not commands)."""
    lines = iter(command.splitlines())
    for line in lines:
        yield line
        for m in _HEREDOC.finditer(line):
            delimiter = m.group(2)
            for body in lines:
                if body.strip() == delimiter:
                    break


def _simple_commands(tokens: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """Split tokens into simple commands: (words, redirection targets)."""
    words: list[str] = []
    targets: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _COMMAND_SEPARATORS:
            yield words, targets
            words, targets = [], []
        elif token in (">", ">>", ">|", "&>", "&>>"):
            if i + 1 < len(tokens):
                targets.append(tokens[i + 1])
            i += 1
        elif token in ("<", "<<", "<<-", "<<<", "<&", ">&"):
            i += 1  # an input redirection or a descriptor: its operand is no file we write
        else:
            words.append(token)
        i += 1
    yield words, targets


def _files_written_by(words: list[str]) -> list[str]:
    while words and ("=" in words[0] or words[0] in ("sudo", "env", "command", "time")):
        words = words[1:]  # VAR=value cmd, sudo cmd
    if not words:
        return []
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program in ("sed", "gsed", "perl") and any(_is_in_place(a) for a in args):
        return _sed_files(args)
    if program in ("tee", "touch", "truncate"):
        return [a for a in args if not a.startswith("-")]
    if program in ("cp", "mv", "install", "ln"):
        positional = [a for a in args if not a.startswith("-")]
        return positional[-1:] if len(positional) >= 2 else []
    return []


def _is_in_place(arg: str) -> bool:
    return (
        arg == "--in-place"
        or (arg.startswith("-i") and not arg.startswith("--"))
        or (
            arg.startswith("-")
            and not arg.startswith("--")
            and "i" in arg[1:]
            and "e" not in arg[1:]
        )
    )


def _sed_files(args: list[str]) -> list[str]:
    """Files of ``sed -i``: positionals after the script (or all of them with -e/-f)."""
    positional: list[str] = []
    has_script_option = False
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-e", "--expression", "-f", "--file"):
            has_script_option, skip = True, True
        elif (arg.startswith("-") and len(arg) > 1) or not arg:
            continue  # an option, or BSD sed's empty backup suffix (-i '')
        else:
            positional.append(arg)
    return positional if has_script_option else positional[1:]


# ---------------------------------------------------------------------------------------------
# Files in tool-call arguments and diffs

PATH_KEYS = frozenset(
    {
        "path",
        "file_path",
        "filepath",
        "filename",
        "file",
        "target_file",
        "target_path",
        "source_path",
        "destination",
        "dest",
        "old_path",
        "new_path",
        "notebook_path",
        "paths",
        "files",
    }
)
_DIFF_HEADER = re.compile(r"^(?:diff --git a/\S+ b/(\S+)|\+\+\+ b/(\S+))", re.MULTILINE)


def json_object(arguments: str) -> dict[str, object] | None:
    """Tool-call arguments as a JSON object, or None when they are not one."""
    try:
        value = jsonvalue.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def argument_files(value: dict[str, object]) -> list[str]:
    """Paths named by a tool call's arguments (``path``, ``file_path``, ``target_file``, ...)."""
    found: list[str] = []
    for key, item in value.items():
        if key.lower() not in PATH_KEYS:
            continue
        for candidate in item if isinstance(item, list) else [item]:
            if isinstance(candidate, str) and _looks_like_path(candidate):
                found.append(candidate)
    return found


def diff_files(text: str) -> list[str]:
    """Files named by unified-diff headers (``diff --git a/x b/x``, ``+++ b/x``)."""
    if "diff --git" not in text and "+++ b/" not in text:
        return []
    return [m.group(1) or m.group(2) for m in _DIFF_HEADER.finditer(text)]


def _looks_like_path(value: str) -> bool:
    """A path, not prose or content passed under a path-like key (a path may hold a space)."""
    return (
        0 < len(value) <= 240 and "\n" not in value and "://" not in value and value.count(" ") <= 2
    )
