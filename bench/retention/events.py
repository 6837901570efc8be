"""What happens in a session, independent of the agent that writes it down.

A session script is a list of turns; each renderer in ``bench/retention/formats/`` turns them
into OpenAI chat messages the way one agent records them (its tool names, argument shapes and
result envelopes, learned from that agent's source). The corpus plants artifacts into the
events; the renderers never know what is planted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias


@dataclass(frozen=True, slots=True)
class Shell:
    """A shell command and what it printed (stdout and stderr interleaved as a terminal shows)."""

    command: str
    output: str
    exit_code: int
    cwd: str = "/workspace"


@dataclass(frozen=True, slots=True)
class Read:
    """A file read through a file tool (not through the shell)."""

    path: str
    content: str  # the file's text (the renderer adds line numbers if its agent does)
    offset: int | None = None  # 1-based first line, when only part was read


@dataclass(frozen=True, slots=True)
class Write:
    """A whole file written (created or overwritten) through a file tool."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class Edit:
    """An exact-string replacement in one file through a file tool."""

    path: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Search:
    """A content search (grep-like): matches as ``path:line:text``."""

    pattern: str
    path: str | None
    matches: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FindFiles:
    """A file-name search (glob-like)."""

    pattern: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Fetch:
    """A web page fetched (its text as the tool returns it)."""

    url: str
    content: str


@dataclass(frozen=True, slots=True)
class Plan:
    """A to-do list written or updated: (item, status) with status pending/in_progress/completed."""

    items: tuple[tuple[str, str], ...]


Event: TypeAlias = Shell | Read | Write | Edit | Search | FindFiles | Fetch | Plan


@dataclass(frozen=True, slots=True)
class Say:
    """A plain message without tool use."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class Act:
    """One assistant turn that uses tools: optional prose, then one or more calls (in parallel
    when several), each followed by its result."""

    events: tuple[Event, ...]
    thought: str | None = None


Turn: TypeAlias = Say | Act


@dataclass
class Ids:
    """Tool-call ids in the style of the agent's provider, numbered through a session."""

    prefix: str = "call_"
    n: int = 0
    taken: list[str] = field(default_factory=list)

    def next(self) -> str:
        self.n += 1
        value = f"{self.prefix}{self.n:04d}"
        self.taken.append(value)
        return value


class Renderer(Protocol):
    """How one agent writes a session down (OpenAI chat format, as a gateway stores it)."""

    name: str  # "hermes", "openhands", "codex", "claude_code", "deepagents", "mini_swe_agent"

    def system_prompt(self) -> str: ...

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        """The assistant message with its tool_calls, then one tool message per call."""
        ...


def render_session(renderer: Renderer, turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The whole session as wire messages: the agent's system prompt first."""
    ids = Ids()
    out: list[dict[str, Any]] = [{"role": "system", "content": renderer.system_prompt()}]
    for turn in turns:
        if isinstance(turn, Say):
            out.append({"role": turn.role, "content": turn.text})
        else:
            out.extend(renderer.render(turn, ids))
    return out
