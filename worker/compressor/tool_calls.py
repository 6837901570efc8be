"""What a tool call asks for, read from its name and arguments, whatever agent made it.

Agents name the same tools differently (``bash``, ``execute_bash``, ``terminal``, ``shell``,
``Bash``, ``exec_command``...) and shape their arguments differently (a command string, an
argv list, an editor's ``command: "view"``, a raw apply_patch text). Each call is sorted into a
kind by its tool name (tables below, written from each agent's published tool definitions; see
docs/tool-formats/) and, for a name we do not know, by its argument keys.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal, NamedTuple, TypeAlias

from worker.compressor import jsonvalue
from worker.compressor.paths import (
    argument_paths,
    command_words,
    patch_files,
    script_written_files,
    shell_written_files,
    text_paths,
)

Kind: TypeAlias = Literal[
    "shell", "code", "read", "write", "edit", "search", "fetch", "plan", "task", "other"
]
KINDS: tuple[Kind, ...] = (
    "shell",
    "code",
    "read",
    "write",
    "edit",
    "search",
    "fetch",
    "plan",
    "task",
    "other",
)


class CallFacts(NamedTuple):  # one per distinct call: a tuple is cheaper to build
    """What one call asks for. Strings are as the agent wrote them (not redacted, not cut)."""

    tool: str  # the tool's name as called
    kind: Kind
    command: str | None = None  # shell: the command line; code: the code
    paths: tuple[str, ...] = ()  # files and directories the call names
    written: tuple[str, ...] = ()  # files it creates, writes or edits
    query: str | None = None
    url: str | None = None

    @property
    def writes(self) -> bool:
        return bool(self.written)


# Tool names, lower-cased without "_", "-", "." and spaces, by kind. An editor tool decides
# its kind per call from its own "command" argument (view, create, str_replace, ...).
_NAMES: dict[str, Kind] = {}
for _kind, _names in (
    (
        "shell",
        "bash shell terminal executebash shellcommand execcommand localshell runcommand "
        "runterminalcmd execute runshellcommand powershell cmd exec runinterminal "
        "containerexec sh zsh executecommand runbash bashtool commandexecution writestdin",
    ),
    (
        "code",
        "executeipythoncell executecode python runpython codeinterpreter ipython "
        "executepython runcode jupyter",
    ),
    ("read", "read readfile viewfile openfile view cat readmanyfiles getfilecontents fileread"),
    ("write", "write writefile createfile writetofile savefile filewrite create"),
    (
        "edit",
        "edit multiedit editfile strreplace replaceinfile patch applypatch notebookedit "
        "searchreplace insertcontent filepatch editnotebook replace",
    ),
    (
        "search",
        "grep search searchfiles glob findfiles ls listdir listdirectory listfiles "
        "codebasesearch filesearch ripgrep rg find websearch searchweb googlesearch "
        "sessionsearch grepsearch filesearchtool",
    ),
    (
        "fetch",
        "webfetch fetch fetchurl webextract httprequest browsernavigate webread browse "
        "browser readurl navigate curl openurl",
    ),
    ("plan", "todowrite writetodos updateplan todo tasktracker think plan todoread"),
    ("task", "task delegatetask dispatchagent subagent agent spawnagent"),
):
    for _name in _names.split():
        _NAMES[_name] = _kind  # type: ignore[assignment]
_EDITORS = frozenset({"strreplaceeditor", "fileeditor", "texteditor", "strreplacebasededittool"})
_EDITOR_COMMANDS: dict[str, Kind] = {
    "view": "read",
    "create": "write",
    "str_replace": "edit",
    "insert": "edit",
    "undo_edit": "edit",
    "edit": "edit",
    "write": "write",
    "append": "edit",
    "delete": "edit",
}
_COMMAND_KEYS = ("command", "cmd", "commands", "script", "input", "chars")
_CODE_KEYS = ("code", "source", "cell", "command")
_QUERY_KEYS = ("query", "pattern", "regex", "q", "search", "search_term", "search_query", "glob")
_URL_KEYS = ("url", "uri", "href", "link", "urls")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_PATCH_KEYS = ("input", "patch", "diff", "content")
_PATCH_START = "*** Begin Patch"


def read_call(
    name: str, arguments: str, args: Mapping[str, Any], *, light: bool = False
) -> CallFacts:
    """What a call asks for; ``args`` is ``arguments`` parsed ({} when not a JSON object).
    ``light``: its kind and shell command only (enough to tell a later success)."""
    key = normalized(name)
    kind = _NAMES.get(key)
    if key in _EDITORS:
        kind = _EDITOR_COMMANDS.get(str(args.get("command", "")), "edit")
    if not args and arguments[:1] == '"':
        arguments = _freeform_input(arguments)
    if kind is None:
        kind = _kind_from_arguments(args, arguments)
    if light and kind not in ("write", "edit"):  # a write's files tell a later fix: read them
        command = shell_command(args) if kind == "shell" and args else None
        return CallFacts(name, kind, command=command)
    reader = _READERS.get(kind, _read_other)
    return reader(name, arguments, args, kind)


def _freeform_input(arguments: str) -> str:
    """A freeform tool's raw input (Codex's apply_patch patch text), which some gateways keep as
    a JSON string: the text it encodes; ``arguments`` itself when it is not one."""
    try:
        value = jsonvalue.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, str) else arguments


def named_paths(facts: CallFacts) -> tuple[str, ...]:
    """Every file a call names: for a shell command, the paths on its first line too (``cat
    src/a.py``), which are read only on demand (the words of every command cost time)."""
    if facts.kind != "shell" or not facts.command:
        return facts.paths
    return _merged(text_paths(_first_line(facts.command, 500), prose=False), facts.paths)


@lru_cache(maxsize=1024)
def normalized(name: str) -> str:
    """A tool name without namespaces and separators, lower-cased: ``mcp__fs__read_file`` and
    ``functions.Read`` read as ``readfile`` and ``read``."""
    base = name.rsplit("__", 1)[-1].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    return "".join(c for c in base.lower() if c.isalnum())


def _kind_from_arguments(args: Mapping[str, Any], arguments: str) -> Kind:
    """The kind of a tool we do not know by name, from the arguments it was given."""
    if arguments.lstrip().startswith(_PATCH_START):
        return "edit"
    command = _first(args, ("command", "cmd"))
    has_path = bool(argument_paths(args))
    if command is not None and not (has_path and _is_word(command)):
        return "shell"
    if _first(args, ("code",)) is not None:
        return "code"
    if has_path and ("old_string" in args or "old_str" in args or "edits" in args):
        return "edit"
    if has_path and ("content" in args or "file_text" in args):
        return "write"
    if _first(args, _URL_KEYS) is not None:
        return "fetch"
    if _first(args, _QUERY_KEYS) is not None:
        return "search"
    if "todos" in args or "plan" in args:
        return "plan"
    return "other"


def _read_shell(name: str, arguments: str, args: Mapping[str, Any], kind: Kind) -> CallFacts:
    command = shell_command(args) if args else (arguments.strip() or None)
    if command is None:
        return CallFacts(name, kind)
    if command.startswith("apply_patch") and _PATCH_START in command:
        # Codex intercepts a patch given to its shell and applies it as an edit.
        return _patch_facts(name, command)
    written = tuple(shell_written_files(command))
    return CallFacts(name, kind, command=command, paths=written, written=written)


def _patch_facts(name: str, patch: str) -> CallFacts:
    files = tuple(patch_files(patch))
    adds_only = "*** Add File:" in patch and not _CHANGES_FILE.search(patch)
    return CallFacts(name, "write" if adds_only else "edit", paths=files, written=files)


_CHANGES_FILE = re.compile(r"^\*\*\* (?:Update|Delete) File:", re.MULTILINE)


def _read_code(name: str, arguments: str, args: Mapping[str, Any], kind: Kind) -> CallFacts:
    code = _first(args, _CODE_KEYS) if args else arguments.strip() or None
    written = tuple(script_written_files(code)) if code else ()
    return CallFacts(name, kind, command=code, paths=written, written=written)


def _read_file_tool(name: str, arguments: str, args: Mapping[str, Any], kind: Kind) -> CallFacts:
    paths = argument_paths(args)
    patch = _patch_text(arguments, args)
    if patch is not None and not paths and _PATCH_START in patch:
        return _patch_facts(name, patch)
    if patch is not None:
        paths = [*paths, *patch_files(patch)]
    paths = list(dict.fromkeys(paths))
    written = tuple(paths) if kind in ("write", "edit") else ()
    return CallFacts(name, kind, paths=tuple(paths), written=written)


def _read_search(name: str, arguments: str, args: Mapping[str, Any], kind: Kind) -> CallFacts:
    return CallFacts(
        name,
        kind,
        paths=tuple(argument_paths(args, places=True)),  # a search's directory is its target
        query=_first(args, _QUERY_KEYS),
        url=_first_url(args),
    )


def _read_fetch(name: str, arguments: str, args: Mapping[str, Any], kind: Kind) -> CallFacts:
    url = _first_url(args)
    if url is None and "://" in arguments:
        found = _URL_IN_TEXT.search(arguments)  # a browser tool's code: goto("http://...")
        url = found.group(0) if found else None
    return CallFacts(name, kind, url=url, query=_first(args, ("query",)))


_URL_IN_TEXT = re.compile(r"https?://[^\s'\"<>()\\]+")


def _read_other(name: str, arguments: str, args: Mapping[str, Any], kind: Kind) -> CallFacts:
    return CallFacts(
        name,
        kind,
        paths=tuple(argument_paths(args)),
        query=_first(args, _QUERY_KEYS),
        url=_first_url(args),
    )


_READERS = {
    "shell": _read_shell,
    "code": _read_code,
    "read": _read_file_tool,
    "write": _read_file_tool,
    "edit": _read_file_tool,
    "search": _read_search,
    "fetch": _read_fetch,
}


# Programs that only show what is there: their output is data (a file, a listing, grep hits),
# and their exit code 1 means "nothing found" or "they differ", not a failure.
_VIEWERS = frozenset(
    [
        "cat",
        "head",
        "tail",
        "nl",
        "less",
        "more",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "find",
        "ls",
        "tree",
        "wc",
        "file",
        "stat",
        "echo",
        "printf",
        "pwd",
        "cd",
        "which",
        "type",
        "diff",
        "cmp",
        "jq",
        "xxd",
        "od",
        "du",
        "df",
        "env",
        "printenv",
        "sort",
        "uniq",
        "cut",
        "tr",
        "awk",
        "sed",
        "column",
        "realpath",
        "basename",
        "dirname",
        "readlink",
        "test",
        "[",
    ]
)
_GIT_VIEWS = frozenset(
    ["diff", "show", "log", "status", "grep", "blame", "ls-files", "rev-parse", "branch"]
)
_SEGMENT_SPLIT = re.compile(r"\|\||&&|[;|\n]")


def only_views(command: str) -> bool:
    """Every simple command in ``command`` only shows something (``cd x && cat y | grep z``)."""
    seen = False
    for words in _simple_commands(command):
        seen = True
        program = words[0]
        if program == "git" and len(words) > 1 and words[1] in _GIT_VIEWS:
            continue
        if program not in _VIEWERS:
            return False
    return seen


@lru_cache(maxsize=4096)
def programs(command: str) -> tuple[str, ...]:
    """The programs a command line runs, by name (``cd x && tar -czf y | tee z``: cd, tar,
    tee), each once, and those ``xargs``, ``env``, ``timeout``, ... run for it."""
    out: list[str] = []
    for words in _simple_commands(command):
        for word in words:
            if word.startswith("-") or "=" in word or word[0].isdigit():
                continue  # a runner's options: timeout 60, nice -n 5, env A=1
            name = word.rsplit("/", 1)[-1]
            if name not in out:
                out.append(name)
            if name not in _RUNNERS:
                break
    return tuple(out)


_RUNNERS = frozenset({"xargs", "env", "timeout", "nice", "nohup", "stdbuf", "exec"})

# Programs whose exit status 1 is an answer, not a failure, and what it answers; the exit
# status xargs gives when a program it ran exited 1-125.
_REPLIES: dict[str, str] = {
    **dict.fromkeys(
        ("grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "pgrep", "git grep"), "no matches"
    ),
    **dict.fromkeys(("diff", "cmp", "colordiff", "git diff"), "they differ"),
    **dict.fromkeys(("test", "[", "[["), "false"),
    "which": "not found",
}
_XARGS_STATUS = 123
# Programs that pass on what comes down a pipe (and never fail on an empty one): a search
# piped through them still decides the status under ``pipefail``.
_FILTERS = frozenset({"head", "tail", "sort", "uniq", "wc", "cut", "tr", "cat", "column", "nl"})
# Programs that never fail: ``grep -q x f && echo found`` exits with grep's status.
_NEVER_FAIL = frozenset({"echo", "printf", "true", ":"})
_SEPARATORS = re.compile(r"(\|\||&&|[;|\n])")


def reply_of(command: str, exit_code: int | None, *, silent: bool = False) -> str | None:
    """What ``exit_code`` answers when the program that decided it uses it as a reply ("no
    matches" for ``rg -n foo src`` exiting 1, "they differ" for ``diff a b``); None for a
    failure or success. The deciding program is the last one of the command line (``cd x &&
    grep y``, ``pip list | grep z``), after a pipe's filters and a trailing ``&& echo``.
    ``silent``: the command printed nothing; with no exit code given (agents that report none,
    or none for grep's 1), a search that printed nothing found nothing."""
    if exit_code not in (1, _XARGS_STATUS, None):
        return None
    found = _deciding(command)
    if found is None:
        return None
    name, status, quiet = found
    if exit_code is None:
        searched = silent and not quiet and status == 1
        return "no matches" if searched and _REPLIES[name] == "no matches" else None
    return _REPLIES[name] if status == exit_code else None


@lru_cache(maxsize=1024)
def _deciding(command: str) -> tuple[str, int, bool] | None:
    """The program whose reply would be the command line's exit status, by the name
    ``_REPLIES`` knows it by, the status it replies with (xargs': 123) and whether it was asked
    to print nothing (``grep -q``); None when no such program decides it."""
    parts = _SEPARATORS.split(command.split("<<", 1)[0])
    seps = ["", *parts[1::2]]
    steps = [(sep, command_words(seg.split())) for sep, seg in zip(seps, parts[::2], strict=True)]
    steps = [(sep, words) for sep, words in steps if words]
    while len(steps) > 1 and steps[-1][0] == "&&" and _program(steps[-1][1]) in _NEVER_FAIL:
        steps.pop()
    if not steps:
        return None
    at = len(steps) - 1
    while at > 0 and steps[at][0] == "|" and _program(steps[at][1]) in _FILTERS:
        at -= 1  # ``rg foo | head``: under pipefail, rg's status
    sep, words = steps[at]
    if sep == "&&" and not all(_program(w) in _VIEWERS for _, w in steps[:at]):
        return None  # ``make && grep x log``: make's failure exits 1 as well
    status = 1
    if _program(words) == "xargs":
        at_program = next((i for i, w in enumerate(words) if _program([w]) in _REPLIES), None)
        if at_program is None:
            return None
        words, status = words[at_program:], _XARGS_STATUS
    name = _program(words)
    if name not in _REPLIES:
        return None
    quiet = any(w in _QUIET or (w[:1] == "-" and w[1:2] != "-" and "q" in w) for w in words[1:])
    return name, status, quiet


_QUIET = frozenset({"--quiet", "--silent"})


def _program(words: Sequence[str]) -> str:
    """A simple command's program as ``_REPLIES`` names it: ``git grep``, ``rg``."""
    name = words[0].rsplit("/", 1)[-1]
    if name == "git" and len(words) > 1:
        return f"git {words[1]}"
    return name


def _simple_commands(command: str) -> Iterator[list[str]]:
    """Each simple command's words, its program (without its directory) first; assignments
    and ``sudo``/``time`` before it left out. A heredoc's body is not looked at."""
    for segment in _SEGMENT_SPLIT.split(command.split("<<", 1)[0]):
        words = command_words(segment.split())
        if words:
            words[0] = words[0].rsplit("/", 1)[-1]
            yield words


def shell_command(args: Mapping[str, Any]) -> str | None:
    """The command line of a shell call: a string as given, an argv list as a shell shows it
    (``["bash", "-lc", "X"]`` is just X), a list of command strings joined with ``&&``."""
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return _argv_line(value)
    return None


def _argv_line(argv: Sequence[str]) -> str:
    program = argv[0].rsplit("/", 1)[-1]
    if program in _SHELLS and len(argv) == 3 and argv[1].startswith("-") and "c" in argv[1]:
        return argv[2].strip()
    if any(" " in a for a in argv) and all(" " in a or "=" in a for a in argv):
        return " && ".join(a.strip() for a in argv)  # a list of whole command lines
    return shlex.join(argv)


def _patch_text(arguments: str, args: Mapping[str, Any]) -> str | None:
    if not args:
        return arguments if _PATCH_START in arguments or "+++ " in arguments else None
    for key in _PATCH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and (_PATCH_START in value or "\n+++ " in value):
            return value
    return None


def _first(args: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _first_url(args: Mapping[str, Any]) -> str | None:
    for key in _URL_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value and isinstance(value[0], str):
            value = value[0]
        if isinstance(value, str) and "://" in value:
            return value.strip()
    return None


def _is_word(text: str) -> bool:
    return text.replace("_", "").isalpha()


def _first_line(text: str, limit: int) -> str:
    end = text.find("\n")
    return (text if end < 0 else text[:end])[:limit]


def _merged(*groups: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p for group in groups for p in group))
