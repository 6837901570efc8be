"""Every rule for finding file paths: in tool arguments, patches, diffs, shell commands and prose.

One module decides what a path looks like, so that the one-line accounts, the ledger and the
extractive summary name the same files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet

from worker.compressor.needle_screen import Needles
from worker.compressor.shell_words import shell_tokens

# Argument keys that hold a path (or a list of paths), in every agent we read.
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
        "dir_path",
        "dir",
        "directory",
        "paths",
        "files",
        "absolute_path",
        "relative_path",
        "workdir",
    }
)
# Keys that name where a command runs, not a file it touches.
_WHERE_KEYS = frozenset({"workdir", "directory", "dir_path", "dir"})


def looks_like_path(value: str) -> bool:
    """A path, not prose or content passed under a path-like key (a path may hold a space)."""
    return (
        0 < len(value) <= 240 and "\n" not in value and "://" not in value and value.count(" ") <= 2
    )


def argument_paths(args: Mapping[str, object], *, places: bool = False) -> list[str]:
    """Paths named by a tool call's arguments, in key order.

    ``places``: also the directories a call works in (``workdir``); off for what a call touches.
    """
    found: list[str] = []
    for key, item in args.items():
        name = key.lower()
        if name not in PATH_KEYS or (name in _WHERE_KEYS and not places):
            continue
        for candidate in item if isinstance(item, list) else [item]:
            if isinstance(candidate, str) and looks_like_path(candidate):
                found.append(candidate)
    return found


# ---------------------------------------------------------------------------------------------
# Patches and diffs

# The apply_patch envelope (Codex, and the V4A patches other agents take): one header per file.
_PATCH_HEADER = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE
)
_DIFF_HEADER = re.compile(
    r"^(?:diff --git a/\S+ b/(\S+)|\+\+\+ (?:b/)?(\S+)|--- a/(\S+))", re.MULTILINE
)


def patch_files(text: str) -> list[str]:
    """Files an apply_patch-style patch or a unified diff touches, in order, each once."""
    found: list[str] = []
    if "*** " in text:
        found += [a or b for a, b in _PATCH_HEADER.findall(text)]
    if "diff --git" in text or "+++ " in text:
        found += [a or b or c for a, b, c in _DIFF_HEADER.findall(text)]
    return _unique(f for f in found if f != "/dev/null")


# ---------------------------------------------------------------------------------------------
# Paths in prose and commands

# A path as people write it: with a directory part (``app/(tabs)/settings.tsx``, ``~/.ssh``,
# ``./run.sh``, ``src/[id]/page.tsx``) or a bare file name with a known extension.
_SEGMENT = r"[\w.@+~()\[\]{}$%=,-]+"
_EXT = (
    r"py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|vue|svelte|json|jsonl|ya?ml|toml|ini|cfg|conf|env|md|"
    r"mdx|rst|txt|csv|tsv|sh|bash|zsh|ps1|rs|go|java|kt|kts|scala|swift|m|mm|c|h|cc|cpp|cxx|hpp|"
    r"cs|fs|rb|php|pl|lua|r|dart|ex|exs|erl|hs|ml|clj|html?|css|scss|sass|less|sql|proto|"
    r"graphql|gql|lock|xml|gradle|tf|tfvars|hcl|dockerfile|mk|cmake|log|pem|crt|key|pdf|png|"
    r"jpe?g|gif|svg|zip|tar|gz|whl|wasm|so|dll|a|o|bin|db|sqlite|ipynb|patch|diff"
)
_PATH_TOKEN = re.compile(
    rf"(?<![\w/.@~:-])(?:(?:~|\.{{1,2}})?/(?:{_SEGMENT}/)*|(?:{_SEGMENT}/)+){_SEGMENT}"
    rf"|(?<![\w/.@~:-])[\w@+-][\w.@+-]*\.(?:{_EXT})\b(?![/\w])",
    re.IGNORECASE,
)
_NUMBERS = re.compile(r"[\d./:,-]+")  # dates (2024/05/01), ratios (1/2), versions
_HAS_EXTENSION = re.compile(rf"\.(?:{_EXT})$", re.IGNORECASE)
_SED_SCRIPT = re.compile(r"s/[^/]*/[^/]*/[gimpI\d]*")  # sed's s/old/new/g
_TRAILING = ".,;:!?'\"`"


def text_paths(text: str, *, prose: bool = True) -> list[str]:
    """Paths mentioned in free text, in order, each once. ``prose``: the text is what a person
    wrote (where "and/or" and "TCP/IP" are words), not a command line."""
    if "/" not in text and "." not in text:
        return []
    found = []
    # Word by word: the pattern's look-behind would otherwise be tried at every character.
    for word in text.split():
        if ("/" not in word and "." not in word) or len(word) > _MAX_WORD:
            continue
        for m in _PATH_TOKEN.finditer(word):
            start, end = m.span()
            if (
                word.startswith("://", end)
                or (start and word[start - 1] in "*?")
                or (end < len(word) and word[end] in "*?")
            ):
                continue  # a URL's scheme, a glob's part
            token = _trimmed(m.group(0))
            if token and _is_path_token(token, prose=prose):
                found.append(token)
    return _unique(found)


_MAX_WORD = 400


def _trimmed(token: str) -> str:
    token = token.rstrip(_TRAILING)
    for close, opening in ((")", "("), ("]", "["), ("}", "{")):
        while token.endswith(close) and token.count(close) > token.count(opening):
            token = token[:-1].rstrip(_TRAILING)
    return token.lstrip("(")


def _is_path_token(token: str, *, prose: bool) -> bool:
    if _NUMBERS.fullmatch(token) or "//" in token or len(token) < 3 or len(token) > 240:
        return False
    if _SED_SCRIPT.fullmatch(token):
        return False
    if "/" in token:
        parts = [p for p in token.split("/") if p not in ("", ".", "..", "~")]
        if not parts or not any(any(c.isalpha() for c in p) for p in parts):
            return False  # "1/2", "/"
        # Prose writes "and/or", "TCP/IP", "I/O": a bare a/b needs an extension, a root
        # ("/", "./", "~/") or a third part to read as a path.
        rooted = token[0] in "/.~" or token.endswith("/")
        plain = len(parts) < 3 and _HAS_EXTENSION.search(parts[-1]) is None
        return not (prose and plain and not rooted)
    return True


# ---------------------------------------------------------------------------------------------
# Files written by shell commands

_FEEDS_PROGRAM = re.compile(
    r"\b(?:python[\d.]*|node|deno|bun|ruby|perl|php|apply_patch|bash|sh|zsh)\b[^\n]*<<"
    r"|<<[^\n]*\|\s*(?:python[\d.]*|node|ruby|perl|apply_patch|bash|sh)\b"
)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w]*)\1")
# Editor commands an agent installs on the PATH (SWE-agent's): the subcommands that write, and
# where the file stands among the arguments (``str_replace_editor create /x.py --file_text
# ...``, ``create x.py``).
_EDITORS: dict[str, frozenset[str] | None] = {
    "str_replace_editor": frozenset({"create", "str_replace", "insert", "undo_edit"}),
    "create": None,  # no subcommand: the file comes first
}
# Words of the commands that write files; a line holding none of them (nor a ">") writes none.
_WRITERS = frozenset(
    {"sed", "gsed", "perl", "tee", "touch", "truncate", "cp", "mv", "install", "ln", *_EDITORS}
)  # (and git's mv: "mv" is one of its words)
# sed and perl write only in place (-i); the others by name. Spaces keep the hints specific
# ("sed" alone is in every "used"; a match list that long costs what the hints save).
# ("-pi", "-Ei": in-place flags joined with others, as perl and sed users write them.)
_WRITER_HINTS = frozenset(
    {"-i", "-pi", "-Ei", "-ri", "tee ", "touch ", "truncate ", "cp ", "mv ", "install ", "ln "}
    | {f"{editor} " for editor in _EDITORS}
)
_NODE_HINTS = frozenset({"writeFile", "appendFile", "createWriteStream"})
_SCRIPT_HINTS = frozenset({"Path(", "open(", *_NODE_HINTS})
# Every substring the writing rules start from, found in one pass over a command.
_HINTS = Needles(sorted({"apply_patch", "*** Begin Patch", *_SCRIPT_HINTS, *_WRITER_HINTS}))
_IN_PLACE_ONLY = frozenset({"sed", "gsed", "perl"})
_COMMAND_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "-"})
# A written file as commands name it: a relative or absolute path with a "/" or an extension.
# A space inside comes from quotes (``'docs/On-call handover.md'``): words are split already.
_WRITTEN_RE = re.compile(r"(?=.*[A-Za-z])(?=.*[/.])(?! )[\w.~/+@()\[\] -]+(?<! )")


def shell_written_files(command: str) -> list[str]:
    """Files a shell command writes: redirections, ``sed -i``, ``tee``, ``touch``, ``cp``/``mv``,
    a patch applied through the shell (``apply_patch <<'EOF' ...``) and a script it runs that
    writes a file (``python3 - <<'PY' ... Path('x').write_text(...)``)."""
    lines = _without_heredoc_bodies(command) if "<<" in command else None
    # A here-document's body is data (a file being written) unless the command feeds it to a
    # program that runs it (python, node, apply_patch): only then is the body read for hints.
    outside = command if lines is None else "\n".join(lines)
    if outside is not command and _FEEDS_PROGRAM.search(outside):
        outside = command
    hints = {_HINTS.needles[i] for i, _, _ in _HINTS.matches(outside)}  # one pass, not twenty
    found: list[str] = []
    if "apply_patch" in hints or "*** Begin Patch" in hints:
        found += patch_files(command)
    if not hints.isdisjoint(_SCRIPT_HINTS):
        found += script_written_files(command, hints)
    if ">" not in outside and hints.isdisjoint(_WRITER_HINTS):
        return found  # most commands write nothing
    source = command.split("\n") if lines is None else lines
    for at, line in enumerate(source):
        if not _may_write(line):
            continue  # tokenizing is slow; most lines write nothing
        tokens = _tokens(line)
        if tokens is None:  # a quote left open: a string that goes on over the next lines
            tokens = _tokens_across_lines(source, at)
        if tokens is None:
            continue  # a quote never closed: not something to parse
        for words, targets in _simple_commands(tokens):
            found.extend(targets)
            found.extend(_files_written_by(words))
    return _unique(f for f in found if f not in _NOT_FILES and _WRITTEN_RE.fullmatch(f))


_MAX_QUOTED_LINES = 400


def _tokens_across_lines(lines: list[str], at: int) -> list[str] | None:
    """The words of the command that starts on ``lines[at]`` and whose quoted argument closes on
    a later line (``str_replace_editor create x.py --file_text 'import os`` and the file's
    lines after it); None when no line within reach closes it."""
    text = lines[at]
    closing = _open_quote(text)
    pieces = [text]
    for line in lines[at + 1 : at + 1 + _MAX_QUOTED_LINES]:
        pieces.append(line)
        if any(q in line for q in closing):  # only the quote left open can close the string
            tokens = shell_tokens("\n".join(pieces))
            if tokens is not None:
                return tokens
    return None


def _open_quote(line: str) -> str:
    """The quote mark a shell line leaves open at its end (either, when it cannot tell)."""
    quote = ""
    escaped = False
    for c in line:
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
    return quote or "'\""


_PLAIN_TOKEN = re.compile(r"[();<>|&]+|[^ \t\r\n();<>|&]+")
_QUOTING = frozenset("'\"\\#`")


def _tokens(line: str) -> list[str] | None:
    """``shell_tokens(line)``, without its quote-aware tokenizer when nothing needs it: a
    here-document's quoted delimiter is all the quoting most writing lines hold."""
    if "<<" in line:
        line = _HEREDOC.sub("<< EOF", line)  # its operand is skipped: only its quotes go
    if _QUOTING.isdisjoint(line):
        return _PLAIN_TOKEN.findall(line)
    return shell_tokens(line)


def _may_write(line: str) -> bool:
    """False when ``line`` cannot write a file: no redirection to a file, no writing program."""
    arrows = line.count(">")
    if arrows and arrows > line.count(">&") + line.count(">/dev/null") + line.count("> /dev/null"):
        return True
    words = line.split()
    found = _WRITERS.intersection(words)
    if found and found <= _IN_PLACE_ONLY:
        return any(_is_in_place(w) for w in words)  # sed -n '1,9p' f: reads only
    return bool(found)


# Files a script writes (Python and Node): the first argument of a writing call, a string
# literal or a name bound to one (``file = "x"``, ``p = Path("x")``). Each pattern starts with
# a literal (a fast scan); what stands before it is checked where it matched.
def _quoted(group: str) -> str:
    return rf"(?P<q{group}>['\"`])(?P<{group}>[^'\"`\n]{{1,240}})(?P=q{group})"


_NAME = r"[A-Za-z_]\w*"
_TARGET = rf"(?:{_quoted('path')}|(?P<name>{_NAME}))"
_PY_OPEN = re.compile(rf"open\(\s*{_TARGET}\s*,\s*(?:mode\s*=\s*)?['\"][rbt]*[wax]")
_PY_PATH = re.compile(  # Path("x").write_text(...), p.write_text(...), p.open("w")
    rf"(?:Path\(\s*{_TARGET}\s*\)|(?P<var>{_NAME}))\s*\.(?:write_text|write_bytes|open\(\s*['\"][wax])"
)
_NODE_WRITE = re.compile(rf"(?:File(?:Sync)?|WriteStream)\(\s*{_TARGET}\s*[,)]")
_NODE_CALLS = ("writeFile", "writeFileSync", "appendFile", "appendFileSync", "createWriteStream")


def script_written_files(code: str, hints: AbstractSet[str] | None = None) -> list[str]:
    """Files a Python or Node script writes: ``Path('x').write_text``, ``p = Path('x')`` then
    ``p.write_text``, ``open('x', 'w')``, ``fs.writeFileSync('x', ...)``, each also through a
    name bound to the path (``const file = "x"; fs.writeFileSync(file, ...)``).

    Each pattern runs only on code that holds its literal part (``hints``: those ``_HINTS``
    found, when the caller has looked already): most commands hold none.
    """
    if hints is None:
        hints = {_HINTS.needles[i] for i, _, _ in _HINTS.matches(code)}
    calls: list[re.Match[str]] = []
    if "Path(" in hints and "write" in code:
        calls += _PY_PATH.finditer(code)
    if "open(" in hints:
        calls += (m for m in _PY_OPEN.finditer(code) if _call_starts(code, m.start()))
    if not hints.isdisjoint(_NODE_HINTS):
        calls += (
            m
            for m in _NODE_WRITE.finditer(code)
            if code.endswith(_NODE_CALLS, 0, m.start() + m.group(0).index("("))
        )
    found: list[str] = []
    for m in calls:
        path, name = m.group("path"), m.group("name") or m.groupdict().get("var")
        found += [path] if path else _bound_paths(code, name) if name else []
    return _unique(f for f in found if _WRITTEN_RE.fullmatch(f) and f not in _NOT_FILES)


def _call_starts(code: str, at: int) -> bool:
    """A call of its own at ``at`` (``open(``, not ``os.open(`` or ``reopen(``)."""
    return at == 0 or not (code[at - 1].isalnum() or code[at - 1] in "_.")


def _bound_paths(code: str, name: str) -> list[str]:
    """The paths ``name`` is bound to in ``code``: ``name = "x"`` alone on its line (``const``,
    ``let`` or ``var`` before it), or ``name = Path("x")``."""
    binding = re.compile(
        rf"(?<!\w)(?:(?:const|let|var)\s+)?{re.escape(name)}\s*=\s*"
        rf"(?:(?:pathlib\.)?Path\(\s*{_quoted('made')}\s*\)|{_quoted('literal')}\s*;?[ \t]*$)",
        re.MULTILINE,
    )
    return [m.group("made") or m.group("literal") for m in binding.finditer(code)]


def _without_heredoc_bodies(command: str) -> list[str]:
    """The command's lines, minus the bodies of here-documents (they are data, not commands)."""
    if "<<" not in command:
        return command.split("\n")
    lines: list[str] = []
    pos = 0
    while pos < len(command):
        end = command.find("\n", pos)
        end = len(command) if end < 0 else end
        line = command[pos:end]
        lines.append(line)
        pos = end + 1
        if "<<" in line:
            for m in _HEREDOC.finditer(line):
                pos = _after_line(command, m.group(2), pos)
    return lines


def _after_line(text: str, delimiter: str, pos: int) -> int:
    """Where the text continues after the first line from ``pos`` that is ``delimiter``."""
    at = pos
    while at < len(text):
        found = text.find(delimiter, at)
        if found < 0:
            return len(text)
        start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        if start >= pos and text[start:end].strip() == delimiter:
            return end + 1
        at = end + 1
    return len(text)


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


# Words that run the command after them: left out with assignments to find its program.
WRAPPERS = frozenset({"sudo", "time", "command", "then"})


def command_words(words: list[str], wrappers: AbstractSet[str] = WRAPPERS) -> list[str]:
    """A simple command's words from its program on (``A=1 sudo make x``: make x)."""
    i = 0
    while i < len(words) and ("=" in words[i] or words[i] in wrappers):
        i += 1
    return words[i:]


def _files_written_by(words: list[str]) -> list[str]:
    words = command_words(words, WRAPPERS | {"env"})  # env A=1 sed -i ...: sed writes
    if not words:
        return []
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program in ("sed", "gsed", "perl") and any(_is_in_place(a) for a in args):
        return _sed_files(args)
    if program in ("tee", "touch", "truncate"):
        return [a for a in args if not a.startswith("-")]
    if program == "git" and args[:1] == ["mv"]:
        program, args = "mv", args[1:]
    if program in ("cp", "mv", "install", "ln"):
        positional = [a for a in args if not a.startswith("-")]
        return positional[-1:] if len(positional) >= 2 else []
    if program in _EDITORS:
        writing = _EDITORS[program]
        if writing is not None:
            args = args[1:] if args[:1] and args[0] in writing else []
        return args[:1]
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


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
