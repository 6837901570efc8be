"""A small Dockerfile reader (instructions, stages, build args) and .dockerignore matching, enough
to check our own Dockerfile without a Docker engine."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, RUN, COPY…
    value: str  # the rest of the instruction, continuation lines joined
    stage: int  # index of the FROM it belongs to; -1 before the first FROM
    line: int  # 1-based line of the keyword

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form CMD/ENTRYPOINT/HEALTHCHECK, else None (shell form)."""
        text = re.sub(r"^(?:--\S+\s+)*", "", self.value)
        if self.keyword == "HEALTHCHECK":
            text = text.removeprefix("CMD").strip()
        if not text.startswith("["):
            return None
        parsed = json.loads(text)
        assert isinstance(parsed, list) and all(isinstance(p, str) for p in parsed)
        return parsed

    def flags(self) -> dict[str, str]:
        """Leading `--name=value` options (COPY --from=builder, RUN --mount=…)."""
        return dict(re.findall(r"(?:^|\s)--([a-z-]+)=(\S+)", self.value.split(" [", 1)[0]))

    def words(self) -> list[str]:
        """Shell-form arguments without leading options."""
        return [w for w in self.value.split() if not w.startswith("--")]


@dataclass
class Dockerfile:
    instructions: list[Instruction]
    global_args: dict[str, str] = field(default_factory=dict)

    def stages(self) -> list[list[Instruction]]:
        count = 1 + max(i.stage for i in self.instructions)
        return [[i for i in self.instructions if i.stage == n] for n in range(count)]

    def base_image(self, stage: int) -> str:
        """The FROM image of a stage with global ARG defaults substituted."""
        words = self.stages()[stage][0].words()
        return re.sub(r"\$\{?(\w+)\}?", lambda m: self.global_args[m[1]], words[0])

    def of(self, keyword: str, stage: int | None = None) -> list[Instruction]:
        return [
            i
            for i in self.instructions
            if i.keyword == keyword and (stage is None or i.stage == stage)
        ]


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; drop comments and blank lines."""
    out: list[tuple[int, str]] = []
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not buffer):
            continue  # a comment inside a continuation does not end it
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1].strip())
            continue
        buffer.append(stripped)
        out.append((start, " ".join(p for p in buffer if p)))
        buffer = []
    if buffer:
        raise ValueError(f"line {start}: continuation runs past the end of the file")
    return out


def parse_dockerfile(path: Path) -> Dockerfile:
    instructions: list[Instruction] = []
    global_args: dict[str, str] = {}
    stage = -1
    for number, line in _logical_lines(path.read_text(encoding="utf-8")):
        keyword, _, value = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        elif keyword == "ARG" and stage == -1:
            name, _, default = value.partition("=")
            global_args[name.strip()] = default.strip()
        instructions.append(Instruction(keyword, value.strip(), stage, number))
    return Dockerfile(instructions, global_args)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker's .dockerignore glob (Go filepath.Match plus `**`) as a regex."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out.append(pattern[i : end + 1].replace("[!", "[^"))
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class _Rule:
    exception: bool  # a `!pattern` line: re-include
    pattern: str
    regex: re.Pattern[str]


@dataclass(frozen=True)
class DockerIgnore:
    rules: tuple[_Rule, ...]

    @classmethod
    def read(cls, path: Path) -> DockerIgnore:
        rules = []
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            exception = line.startswith("!")
            cleaned = str(PurePosixPath(line.lstrip("!").strip().lstrip("/")))
            rules.append(_Rule(exception, cleaned, _pattern_regex(cleaned)))
        return cls(tuple(rules))

    def excludes(self, relpath: str) -> bool:
        """Docker's rule: the last pattern matching the path or one of its parents wins."""
        parts = PurePosixPath(relpath).parts
        candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        excluded = False
        for rule in self.rules:
            if any(rule.regex.match(c) for c in candidates):
                excluded = not rule.exception
        return excluded

    def prunes(self, reldir: str) -> bool:
        """True when nothing below an excluded directory can be re-included by an exception."""
        return self.excludes(reldir) and not any(
            r.exception and (r.pattern.startswith(reldir + "/") or "*" in r.pattern)
            for r in self.rules
        )


def build_context(root: Path, ignore: DockerIgnore) -> list[str]:
    """Relative paths of the files a `docker build` of root would send to the builder."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        reldir = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if reldir == "." else reldir + "/"
        dirnames[:] = sorted(d for d in dirnames if not ignore.prunes(prefix + d))
        files += [prefix + f for f in sorted(filenames) if not ignore.excludes(prefix + f)]
    return files
