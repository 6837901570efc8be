"""The retention corpus: long sessions in several agent formats, with planted artifacts.

    python -m bench.retention.corpus --write     # regenerate bench/retention/corpus/*.json.gz
    python -m bench.retention.corpus --check     # the files match what the generator makes
    python -m bench.retention.corpus --stats     # sizes and artifacts per kind and format
    python -m bench.retention.corpus --corpus heldout --write   # the held-out corpus (below)

How a session is made (all from one seeded generator per session):

1. Filler: tasks one after another until the session is about its target size. A task is a
   user request, steps and a closing message. Python tasks replay real mini-SWE-agent sessions
   (their issue text, commands, outputs and the agent's thoughts); the other tasks are synthetic
   (TypeScript, Rust, Go, C, Python services, SQL migrations, docs fetched from the web).
2. Plants: several of each kind, each at a target depth spread over 10-60% of the session; a
   plant goes in between two steps of whatever task is running there and fits it (a cargo
   failure in a Rust task...). A fixed failure gets its fix and successful re-run a few steps
   later; an open one is never re-run and the task's closing message says it is blocked. Every
   needle is checked to appear nowhere else in the session.
3. The turns are rendered by the format's renderer (``formats/<name>.py``); then each
   artifact's message index is where its needle first appears, and the session is checked:
   valid transcript (``bench/invariants.py``), every needle where it was planted and nowhere
   else, depths within 8-65%.

Long chats (format ``long_chat``, thousands of messages) are made the same way from other
filler and one more plant: topic talk in the content's languages between runs of templated
gateway chatter (``bench/chatter.py``, in more languages), and value updates (``updates``,
``heldout_updates``): a subject's value said once and replaced later, the later one planted as
``current_value``, the earlier said some way before it.

Two corpora share this machinery and differ only in their content generators (a ``Content``):
the dev corpus (``corpus/``, made by ``plants``, ``failures``, ``synth``, ``texts`` and
``chat_texts``) and the held-out corpus (``corpus-heldout/``, made by ``heldout``), written
separately so that a score on it is not a score on text the compressor was tuned on.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any, Protocol

from bench import chatter, invariants
from bench.retention import chat_texts, heldout, plants, synth, texts, updates
from bench.retention.events import (
    Act,
    Edit,
    Event,
    Fetch,
    FindFiles,
    Ids,
    Plan,
    Read,
    Renderer,
    Say,
    Search,
    Shell,
    Turn,
    Write,
)
from bench.retention.filler import RealTask, as_event, real_tasks
from bench.retention.plants import Artifact, Plant
from bench.retention.score import collapse, message_text, result_digest
from bench.retention.score import strings_in as score_strings

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
HELDOUT_DIR = Path(__file__).resolve().parent / "corpus-heldout"
DEPTH_RANGE = (0.10, 0.60)  # where plants are aimed
VALUE_DEPTH_RANGE = (0.25, 0.60)  # where value updates are (their first statement is earlier)
DEPTH_LIMITS = (0.08, 0.65)  # where they must land


@dataclass(frozen=True, slots=True)
class LongChat:
    """What a long chat is made of, besides its size."""

    topics: tuple[str, ...]  # languages of the content's chat topics (and of what is said there)
    chatter: tuple[tuple[str, int], ...]  # the chatter's languages, by weight
    updates: tuple[str, ...]  # languages the value updates are said in
    chatter_share: float = 0.6  # of the filler's runs


@dataclass(frozen=True, slots=True)
class Spec:
    name: str
    format: str  # a renderer: "hermes", ..., "codex_text" (codex's RENDERER_TEXT), "chat"
    language: str  # "en", "es", "zh", "pt", "fr", "de"; a chat's mix: "mixed", "pt+fr", "de+en"
    size: int  # target number of messages
    corpus: str = "dev"  # whose content generators make it: "dev" or "heldout"
    long: LongChat | None = None  # a long chat (format "long_chat"): how it is made


CHAT_FORMATS = ("chat", "long_chat")


def is_chat(spec: Spec) -> bool:
    return spec.format in CHAT_FORMATS


AGENT_FORMATS = (
    "hermes",
    "openhands",
    "codex",
    "codex_text",
    "claude_code",
    "deepagents",
    "mini_swe_agent",
)
_SIZES = {
    "hermes": (160, 520, 1300),
    "openhands": (170, 480, 1250),
    "codex": (165, 560, 1350),
    "codex_text": (165, 500, 1400),
    "claude_code": (180, 450, 1200),
    "deepagents": (160, 540, 1450),
    "mini_swe_agent": (165, 510, 1320),
}
SIZE_LIMITS = (150, 1500)  # every session's message count lands in here (checked)
LONG_SIZE_LIMITS = (1500, 5000)  # a long chat's
_LANGUAGE = {"hermes-2": "es", "claude_code-1": "zh", "codex_text-2": "zh", "deepagents-3": "es"}
SPECS: tuple[Spec, ...] = (
    *(
        Spec(f"{fmt}-{i + 1}", fmt, _LANGUAGE.get(f"{fmt}-{i + 1}", "en"), size)
        for fmt in AGENT_FORMATS
        for i, size in enumerate(_SIZES[fmt])
    ),
    Spec("chat-1", "chat", "es", 1300),
    Spec("chat-2", "chat", "zh", 520),
    Spec("chat-3", "chat", "mixed", 170),
    Spec(
        "longchat-1",
        "long_chat",
        "es+de",
        2400,
        long=LongChat(("es",), (("es", 50), ("de", 30), ("en", 20)), ("es", "de")),
    ),
    Spec(
        "longchat-2",
        "long_chat",
        "zh+ja",
        2000,
        long=LongChat(("zh",), (("zh", 50), ("ja", 30), ("en", 20)), ("zh", "ja")),
    ),
    Spec(
        "longchat-3",
        "long_chat",
        "mixed",
        3200,
        long=LongChat(
            ("es", "zh", "en"),
            (("en", 40), ("es", 15), ("de", 15), ("fr", 10), ("zh", 10), ("ja", 10)),
            updates.LANGS,
        ),
    ),
)
# The held-out corpus: two sessions per agent format, (size, language) each, and two chats that
# switch languages.
_HELDOUT = {
    "hermes": ((190, "en"), (1150, "pt")),
    "openhands": ((420, "de"), (1400, "en")),
    "codex": ((160, "fr"), (880, "en")),
    "codex_text": ((650, "en"), (1250, "es")),
    "claude_code": ((300, "en"), (1000, "zh")),
    "deepagents": ((540, "en"), (1450, "fr")),
    "mini_swe_agent": ((230, "de"), (760, "pt")),
}
HELDOUT_SPECS: tuple[Spec, ...] = (
    *(
        Spec(f"{fmt}-{i + 1}", fmt, lang, size, "heldout")
        for fmt in AGENT_FORMATS
        for i, (size, lang) in enumerate(_HELDOUT[fmt])
    ),
    Spec("chat-1", "chat", "pt+fr", 640, "heldout"),
    Spec("chat-2", "chat", "de+en", 260, "heldout"),
    Spec(
        "longchat-1",
        "long_chat",
        "fr+ja",
        2800,
        "heldout",
        LongChat(("fr",), (("fr", 45), ("ja", 35), ("en", 20)), ("fr", "ja")),
    ),
    Spec(
        "longchat-2",
        "long_chat",
        "de+es+zh",
        2200,
        "heldout",
        LongChat(
            ("de", "en"), (("de", 40), ("es", 20), ("zh", 20), ("en", 20)), ("de", "es", "zh")
        ),
    ),
)
CORPORA: dict[str, tuple[Path, tuple[Spec, ...]]] = {
    "dev": (CORPUS_DIR, SPECS),
    "heldout": (HELDOUT_DIR, HELDOUT_SPECS),
}

# Which module and attribute render each format; others write all but two of them.
RENDERERS = {
    "hermes": ("hermes", "RENDERER"),
    "openhands": ("openhands", "RENDERER"),
    "codex": ("codex", "RENDERER"),
    "codex_text": ("codex", "RENDERER_TEXT"),
    "claude_code": ("claude_code", "RENDERER"),
    "deepagents": ("deepagents", "RENDERER"),
    "mini_swe_agent": ("mini_swe_agent", "RENDERER"),
    "chat": ("chat", "RENDERER"),
    "long_chat": ("chat", "RENDERER"),
}


class MissingRenderer(Exception):
    """The format's renderer is not there (yet): its sessions are skipped."""


def load_renderer(fmt: str) -> Renderer:
    module_name, attr = RENDERERS[fmt]
    try:
        module = importlib.import_module(f"bench.retention.formats.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"bench.retention.formats.{module_name}":
            raise
        raise MissingRenderer(f"bench/retention/formats/{module_name}.py does not exist") from None
    renderer = getattr(module, attr, None)
    if renderer is None:
        raise MissingRenderer(f"bench/retention/formats/{module_name}.py has no {attr}")
    return renderer  # type: ignore[no-any-return]


def per_kind(size: int) -> int:
    """How many plants of each group a session of this size gets."""
    return 3 if size < 300 else 5 if size < 900 else 8


def size_limits(spec: Spec) -> tuple[int, int]:
    """Where the session's message count must land (checked)."""
    return LONG_SIZE_LIMITS if spec.long is not None else SIZE_LIMITS


# --- building blocks ----------------------------------------------------------------------------


@dataclass
class Segment:
    """A run of turns that stays together: a request, a step, a plant, a closing message."""

    kind: str  # "request", "step", "wrap", "plant", "followup"
    task: int
    turns: list[Turn]
    plant: int | None = None


def _estimate(turns: Iterable[Turn]) -> int:
    return sum(1 if isinstance(t, Say) else 1 + len(t.events) for t in turns)


def _event_texts(event: Event) -> list[str]:
    if isinstance(event, Shell):
        return [event.command, event.output]
    if isinstance(event, Read | Write):
        return [event.path, event.content]
    if isinstance(event, Edit):
        return [event.path, event.old, event.new]
    if isinstance(event, Search):
        return [event.pattern, event.path or "", *event.matches]
    if isinstance(event, FindFiles):
        return [event.pattern, *event.files]
    if isinstance(event, Fetch):
        return [event.url, event.content]
    if isinstance(event, Plan):
        return [item for item, _ in event.items]
    raise TypeError(type(event).__name__)


def turn_texts(turn: Turn) -> list[str]:
    if isinstance(turn, Say):
        return [turn.text]
    return [turn.thought or "", *(s for e in turn.events for s in _event_texts(e))]


class Haystack:
    """All text of the session so far, to keep every needle unique."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._joined: str | None = None

    def add(self, turns: Iterable[Turn]) -> None:
        for turn in turns:
            self._parts.extend(collapse(t) for t in turn_texts(turn))
        self._joined = None

    def __contains__(self, needle: object) -> bool:
        if self._joined is None:
            self._joined = "\n".join(self._parts)
        return isinstance(needle, str) and collapse(needle) in self._joined


def _visible(renderer: Renderer) -> plants.Visible:
    def visible(act: Act, needles: Sequence[str]) -> bool:
        rendered = renderer.render(act, Ids(prefix="probe_"))
        text = "\n".join(message_text(m) for m in rendered)
        return all(collapse(n) in text for n in needles)

    return visible


# --- content -------------------------------------------------------------------------------------


class Content(Protocol):
    """What a corpus writes: the filler's words and tasks, and the plants. The machinery here
    (sizing, placing, rendering, checking) is the same for every corpus."""

    real_share: float  # the share of filler tasks that replay a real mini-SWE-agent session

    def real_request(self, rng: Random, lang: str, task: RealTask) -> str: ...

    def real_wrap_up(self, rng: Random, lang: str) -> str: ...

    def synthetic_task(
        self, rng: Random, lang: str, *, n_steps: int, file_tools: bool
    ) -> synth.Task: ...

    def nudge(self, rng: Random, lang: str) -> tuple[str, str]:
        """The user checking in, and the agent's answer."""
        ...

    def chat_language(self, spec_language: str, current: str | None, rng: Random) -> str:
        """The language of a chat's next topic (``current`` is None for the first)."""
        ...

    def chat_exchanges(self, lang: str, rng: Random) -> list[tuple[str, str]]:
        """One chat topic: (user, assistant) exchanges, the first one opening it."""
        ...

    def blocked(self, rng: Random, lang: str) -> str:
        """Added to the closing message of a task whose failure stays open."""
        ...

    def plant(
        self,
        group: str,
        rng: Random,
        *,
        lang: str,
        task: synth.Task,
        used: set[str],
        taken: Callable[[str], bool],
        visible: plants.Visible,
        file_tools: bool,
        chat: bool,
    ) -> Plant: ...

    def value_plant(
        self, rng: Random, *, lang: str, used: set[str], taken: Callable[[str], bool]
    ) -> Plant:
        """A value stated in a long chat and replaced later (``updates``)."""
        ...


class DevContent:
    """The dev corpus: ``plants``, ``failures``, ``synth``, ``texts``, ``chat_texts``."""

    real_share = 0.4

    def real_request(self, rng: Random, lang: str, task: RealTask) -> str:
        return rng.choice(texts.REAL_REQUEST[lang]).format(repo=task.repo, issue=task.issue)

    def real_wrap_up(self, rng: Random, lang: str) -> str:
        return rng.choice(texts.WRAP_UP[lang])

    def synthetic_task(
        self, rng: Random, lang: str, *, n_steps: int, file_tools: bool
    ) -> synth.Task:
        eco = rng.choices(synth.ECOSYSTEMS, weights=synth.WEIGHTS)[0]
        return synth.synthetic_task(eco, rng, lang, n_steps=n_steps, file_tools=file_tools)

    def nudge(self, rng: Random, lang: str) -> tuple[str, str]:
        nudge = rng.choice(texts.NUDGES[lang])
        return nudge, rng.choice(texts.NUDGE_REPLIES[lang])

    def chat_language(self, spec_language: str, current: str | None, rng: Random) -> str:
        if spec_language != "mixed":
            return spec_language
        if current is None:
            return "es"
        if rng.random() < 0.15:
            # mostly Spanish and Chinese, some English
            return rng.choices(("es", "zh", "en"), weights=(45, 40, 15))[0]
        return current

    def chat_exchanges(self, lang: str, rng: Random) -> list[tuple[str, str]]:
        return chat_texts.exchanges(lang, rng)

    def blocked(self, rng: Random, lang: str) -> str:
        return rng.choice(texts.BLOCKED[lang])

    def plant(
        self,
        group: str,
        rng: Random,
        *,
        lang: str,
        task: synth.Task,
        used: set[str],
        taken: Callable[[str], bool],
        visible: plants.Visible,
        file_tools: bool,
        chat: bool,
    ) -> Plant:
        return _make_plant(
            group,
            rng,
            lang=lang,
            task=task,
            used=used,
            taken=taken,
            visible=visible,
            file_tools=file_tools,
            chat=chat,
        )

    def value_plant(
        self, rng: Random, *, lang: str, used: set[str], taken: Callable[[str], bool]
    ) -> Plant:
        return updates.value_plant(rng, lang=lang, used=used, taken=taken)


CONTENTS: dict[str, Content] = {"dev": DevContent(), "heldout": heldout.CONTENT}


# --- filler -------------------------------------------------------------------------------------


def _real_task(
    task: RealTask, rng: Random, lang: str, content: Content, *, n_steps: int, file_tools: bool
) -> synth.Task:
    steps: list[list[Turn]] = []
    for step in task.steps[:n_steps]:
        thought = step.thought.strip() or None
        steps.append([Act((as_event(step, rng, file_tools=file_tools),), thought)])
    request = content.real_request(rng, lang, task)
    return synth.Task("python-real", request, steps, content.real_wrap_up(rng, lang), "/testbed")


def _agent_filler(
    spec: Spec, rng: Random, target: int, content: Content, *, file_tools: bool
) -> list[synth.Task]:
    lang = "en" if spec.language == "mixed" else spec.language
    pool = list(real_tasks())
    rng.shuffle(pool)
    tasks: list[synth.Task] = []
    count = 1
    while count < target:
        remaining = max((target - count) // 2, 4)
        longest = 22 if spec.size < 300 else 45 if spec.size < 900 else 60
        n_steps = min(remaining, rng.randint(8, longest))
        if pool and rng.random() < content.real_share:
            task = _real_task(
                pool.pop(), rng, lang, content, n_steps=n_steps, file_tools=file_tools
            )
        else:
            task = content.synthetic_task(rng, lang, n_steps=n_steps, file_tools=file_tools)
        steps: list[list[Turn]] = []
        for step in task.steps:
            if rng.random() < 0.05:  # the user checks in now and then
                nudge, reply = content.nudge(rng, lang)
                steps.append([Say("user", nudge), Say("assistant", reply)])
            steps.append(step)
        task.steps = steps
        tasks.append(task)
        count += 2 + sum(_estimate(s) for s in task.steps)
    return tasks


def _chat_filler(
    spec: Spec, rng: Random, target: int, content: Content
) -> tuple[list[synth.Task], list[str]]:
    """A chat as one 'task' per topic: its first exchange (kept as the request and the
    answer), its follow-up exchanges as steps; and the language of each topic."""
    tasks: list[synth.Task] = []
    langs: list[str] = []
    count = 1
    lang = content.chat_language(spec.language, None, rng)
    while count < target:
        lang = content.chat_language(spec.language, lang, rng)
        (ask, answer), *more = content.chat_exchanges(lang, rng)
        steps: list[list[Turn]] = [[Say("user", q), Say("assistant", a)] for q, a in more]
        tasks.append(synth.Task("chat", ask, steps, answer, ""))
        langs.append(lang)
        count += 2 + 2 * len(more)
    return tasks, langs


def _long_chat_filler(
    spec: Spec, rng: Random, target: int, content: Content
) -> tuple[list[synth.Task], list[str]]:
    """A long chat's filler: runs of templated chatter between the content's chat topics. Each
    run or topic is one 'task' (its first exchange kept as the request and the answer); a run of
    chatter takes the language of the topic before it, which is what a plant there is said in."""
    assert spec.long is not None
    long = spec.long
    lines = chatter.chatter(f"{spec.corpus}/{spec.name}", languages=dict(long.chatter))
    tasks: list[synth.Task] = []
    langs: list[str] = []
    count = 1
    lang = long.topics[0]
    while count < target:
        if rng.random() < long.chatter_share:
            run = [next(lines) for _ in range(rng.randint(1, 8))]
            pairs = [(e.user, e.assistant) for e in run]
        else:
            if len(long.topics) > 1 and rng.random() < 0.25:
                lang = rng.choice([t for t in long.topics if t != lang])
            pairs = content.chat_exchanges(lang, rng)
        (ask, answer), *more = pairs
        steps: list[list[Turn]] = [[Say("user", q), Say("assistant", a)] for q, a in more]
        tasks.append(synth.Task("chat", ask, steps, answer, ""))
        langs.append(lang)
        count += 2 * len(pairs)
    return tasks, langs


# --- planting ------------------------------------------------------------------------------------


@dataclass
class Placed:
    plant: Plant
    task: int


@dataclass
class Layout:
    segments: list[Segment] = field(default_factory=list)
    placed: list[Placed] = field(default_factory=list)


def _segments(tasks: Sequence[synth.Task], *, chat: bool) -> list[Segment]:
    out: list[Segment] = []
    for i, task in enumerate(tasks):
        if chat:
            out.append(
                Segment("request", i, [Say("user", task.request), Say("assistant", task.wrap_up)])
            )
            out.extend(Segment("step", i, list(step)) for step in task.steps)
            continue
        out.append(Segment("request", i, [Say("user", task.request)]))
        out.extend(Segment("step", i, list(step)) for step in task.steps)
        out.append(Segment("wrap", i, [Say("assistant", task.wrap_up)]))
    return out


def _plan(spec: Spec, rng: Random) -> list[tuple[str, float]]:
    """(group, target depth) for every plant, sorted by depth; each group spread over the range."""
    k = per_kind(spec.size)
    if spec.long is not None:
        counts = dict.fromkeys(plants.LONG_CHAT_GROUPS, k)
    elif spec.format == "chat":
        counts = dict.fromkeys(plants.CHAT_GROUPS, k)
    else:
        counts = dict.fromkeys(plants.GROUPS, k)
        counts["open_failure"] = max(2, k // 2)
    out = []
    for group, n in counts.items():
        lo, hi = VALUE_DEPTH_RANGE if group == "value_update" else DEPTH_RANGE
        for i in range(n):
            out.append((group, lo + (hi - lo) * (i + rng.random()) / n))
    return sorted(out, key=lambda pair: pair[1])


def _insert_at(segments: list[Segment], target: int, *, chat: bool) -> int:
    """The first position at or after message ``target`` where a plant may go: before a step
    or a closing message of a task (in a chat, between any two exchanges)."""
    count = 1
    for pos, seg in enumerate(segments):
        allowed = pos > 0 and (chat or seg.kind in ("step", "wrap"))
        if count >= target and allowed:
            return pos
        count += _estimate(seg.turns)
    return len(segments)


def _followup_at(segments: list[Segment], plant_pos: int, task: int, steps_later: int) -> int:
    """A few steps after the plant, but never past its task's closing message."""
    pos = plant_pos + 1
    while pos < len(segments) and steps_later > 0:
        seg = segments[pos]
        if seg.task != task or seg.kind in ("wrap", "request"):
            break
        pos += 1
        steps_later -= 1
    return pos


def _place(
    spec: Spec,
    tasks: list[synth.Task],
    langs: list[str],
    rng: Random,
    renderer: Renderer,
    planted_estimate: int,
    content: Content,
) -> Layout:
    chat = is_chat(spec)
    file_tools = spec.format not in ("mini_swe_agent", *CHAT_FORMATS)
    segments = _segments(tasks, chat=chat)
    hay = Haystack()
    for seg in segments:
        hay.add(seg.turns)
    layout = Layout(segments)
    used: set[str] = set()

    def taken(needle: str) -> bool:
        return needle in hay

    needles: list[str] = []
    visible = _visible(renderer)
    planned = _plan(spec, rng)
    total = sum(_estimate(s.turns) for s in segments) + 1 + planted_estimate
    for group, depth in planned:
        pos = _insert_at(layout.segments, round(depth * total), chat=chat)
        task_i = layout.segments[min(pos, len(layout.segments) - 1)].task
        task = tasks[task_i]
        lang = langs[task_i]
        for _ in range(50):
            if group == "value_update":
                assert spec.long is not None
                plant = content.value_plant(
                    rng, lang=rng.choice(spec.long.updates), used=used, taken=taken
                )
            else:
                plant = content.plant(
                    group,
                    rng,
                    lang=lang,
                    task=task,
                    used=used,
                    taken=taken,
                    visible=visible,
                    file_tools=file_tools,
                    chat=chat,
                )
            # nor may it contain a needle planted before it
            said = plant.turns + plant.followup + plant.before
            text = "\n".join(collapse(t) for turn in said for t in turn_texts(turn))
            if not any(collapse(n) in text for n in needles):
                break
        else:
            raise CorpusError(f"{spec.name}: no {group} plant free of earlier needles")
        needles.extend(plant.needles())
        plant_id = len(layout.placed)
        layout.placed.append(Placed(plant, task_i))
        hay.add(plant.turns)
        hay.add(plant.followup)
        hay.add(plant.before)
        layout.segments.insert(pos, Segment("plant", task_i, list(plant.turns), plant_id))
        if plant.followup:
            at = _followup_at(layout.segments, pos, task_i, rng.randint(1, 4))
            layout.segments.insert(at, Segment("followup", task_i, list(plant.followup), plant_id))
        if plant.before:
            earlier = round(max(depth - plant.before_gap, 0.02) * total)
            at = min(_insert_at(layout.segments, earlier, chat=chat), pos)
            owner = layout.segments[at].task
            layout.segments.insert(at, Segment("before", owner, list(plant.before), plant_id))
        if plant.blocked_note:
            for seg in layout.segments:
                if seg.kind == "wrap" and seg.task == task_i:
                    wrap = seg.turns[-1]
                    assert isinstance(wrap, Say)
                    seg.turns[-1] = Say(
                        "assistant", wrap.text + "\n\n" + content.blocked(rng, lang)
                    )
    return layout


def _make_plant(
    group: str,
    rng: Random,
    *,
    lang: str,
    task: synth.Task,
    used: set[str],
    taken: Callable[[str], bool],
    visible: plants.Visible,
    file_tools: bool,
    chat: bool,
) -> Plant:
    if group in ("failure", "open_failure"):
        fix_files = [(p, c) for p, c in _task_files(task)]
        return plants.failure_plant(
            rng,
            ecosystem=task.ecosystem,
            lang=lang,
            is_open=group == "open_failure",
            cwd=task.root or "/workspace",
            visible=visible,
            taken=taken,
            fix_files=fix_files,
            file_tools=file_tools,
        )
    if group == "file_edited":
        return plants.file_edited_plant(
            rng,
            lang=lang,
            root=task.root,
            used=used,
            file_tools=file_tools,
            taken=taken,
            ecosystem=task.ecosystem,
        )
    if group == "file_named":
        return plants.file_named_plant(
            rng, lang=lang, root=task.root, used=used, file_tools=file_tools, taken=taken
        )
    if group == "constraint":
        if chat:
            return plants.constraint_plant(
                rng,
                lang=lang,
                used=used,
                taken=taken,
                pool=chat_texts.CHAT_CONSTRAINTS[lang],
                acks=chat_texts.ACKS[lang],
            )
        return plants.constraint_plant(rng, lang=lang, used=used, taken=taken)
    if group == "user_fact":
        if chat:
            return plants.user_fact_plant(
                rng, lang=lang, taken=taken, fact=chat_texts.chat_fact, acks=chat_texts.ACKS[lang]
            )
        return plants.user_fact_plant(rng, lang=lang, taken=taken)
    if group == "decision":
        if chat:
            return plants.chat_decision_plant(rng, lang=lang, used=used, taken=taken)
        return plants.decision_plant(rng, lang=lang, used=used, taken=taken)
    raise ValueError(group)


def _task_files(task: synth.Task) -> list[tuple[str, str]]:
    """(path, content) a fix may touch: files the task read or wrote."""
    out: list[tuple[str, str]] = []
    for step in task.steps:
        for turn in step:
            if isinstance(turn, Act):
                for event in turn.events:
                    if isinstance(event, Read | Write) and event.content.count("\n") > 2:
                        out.append((event.path, event.content))
    return out[:12]


# --- flattening and rendering --------------------------------------------------------------------


@dataclass
class Flat:
    turns: list[Turn] = field(default_factory=list)
    owners: list[set[tuple[int, str]]] = field(default_factory=list)  # (plant id, "own"/"followup")

    def add(self, turn: Turn, owner: tuple[int, str] | None) -> None:
        """Append, merging where a transcript cannot have two turns of one role in a row."""
        mark = {owner} if owner else set()
        if self.turns:
            last = self.turns[-1]
            if isinstance(last, Say) and isinstance(turn, Say) and last.role == turn.role:
                self.turns[-1] = Say(last.role, last.text + "\n\n" + turn.text)
                self.owners[-1] |= mark
                return
            if isinstance(last, Say) and last.role == "assistant" and isinstance(turn, Act):
                thought = last.text if not turn.thought else last.text + "\n\n" + turn.thought
                self.turns[-1] = Act(turn.events, thought)
                self.owners[-1] |= mark
                return
        self.turns.append(turn)
        self.owners.append(mark)


def flatten(layout: Layout) -> Flat:
    flat = Flat()
    for seg in layout.segments:
        owner = None
        if seg.plant is not None:
            owner = (seg.plant, "own" if seg.kind == "plant" else "followup")
        for turn in seg.turns:
            flat.add(turn, owner)
    return flat


def render(renderer: Renderer, flat: Flat) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """The wire messages, and each turn's span of message indices [start, end)."""
    ids = Ids()
    out: list[dict[str, Any]] = [{"role": "system", "content": renderer.system_prompt()}]
    spans = []
    for turn in flat.turns:
        start = len(out)
        if isinstance(turn, Say):
            out.append({"role": turn.role, "content": turn.text})
        else:
            out.extend(renderer.render(turn, ids))
        spans.append((start, len(out)))
    return out, spans


# --- truth -----------------------------------------------------------------------------------------


class CorpusError(Exception):
    pass


def _truth(
    spec: Spec,
    layout: Layout,
    flat: Flat,
    msgs: list[dict[str, Any]],
    spans: list[tuple[int, int]],
    langs: list[str],
) -> list[dict[str, Any]]:
    own: dict[int, set[int]] = defaultdict(set)
    follow: dict[int, set[int]] = defaultdict(set)
    for turn_i, marks in enumerate(flat.owners):
        for plant_id, role in marks:
            (own if role == "own" else follow)[plant_id].update(range(*spans[turn_i]))
    texts_by_msg = [message_text(m) for m in msgs]
    truth = []
    for plant_id, placed in enumerate(layout.placed):
        mine, later = own[plant_id], follow[plant_id]
        call: _Call | None = None
        for artifact in placed.plant.artifacts:
            probe = artifact.related["command"] if artifact.kind == "exit_code" else artifact.needle
            where = _occurrences(spec, artifact, probe, mine, later, texts_by_msg)
            related = {
                **artifact.related,
                # a plant said in a language of its own says so (a value update)
                "language": artifact.related.get("language", langs[placed.task]),
                "occurrences": len(where),
            }
            if "superseded" in artifact.related:
                related["superseded_index"] = _superseded_at(spec, artifact, later, texts_by_msg)
            index = where[0]
            if artifact.kind in ("failing_command", "exit_code", "error_line", "open_error"):
                command = (
                    artifact.related["command"]
                    if artifact.kind != "failing_command"
                    else artifact.needle
                )
                call = call or _call_of(msgs, mine, command)
                related["call_id"] = call.call_id
            if artifact.kind == "failing_command":
                rerun = [i for i in where if i in later]
                related["rerun_index"] = rerun[0] if rerun else None
            if artifact.kind == "exit_code" and call is not None and call.result_index is not None:
                index = call.result_index
                related["result_digest"] = result_digest(call.result_text)
            truth.append(_entry(spec, artifact, index, len(msgs), related))
    truth.sort(key=lambda t: (t["message_index"], plants.KINDS.index(t["kind"])))
    return truth


def _occurrences(
    spec: Spec,
    artifact: Artifact,
    probe: str,
    mine: set[int],
    later: set[int],
    texts_by_msg: list[str],
) -> list[int]:
    """Where the needle is; it must first be where it was planted, and nowhere unexpected."""
    wanted = collapse(probe)
    where = [i for i, text in enumerate(texts_by_msg) if wanted in text]
    if not where or where[0] not in mine:
        raise CorpusError(
            f"{spec.name}: {artifact.kind} {probe!r} first seen at {where[:3]}, planted at {sorted(mine)}"
        )
    stray = [i for i in where if i not in mine and i not in later]
    if stray:
        raise CorpusError(f"{spec.name}: {artifact.kind} {probe!r} also at messages {stray[:5]}")
    return where


def _superseded_at(
    spec: Spec, artifact: Artifact, earlier: set[int], texts_by_msg: list[str]
) -> int:
    """Where a value update's old value was said: only in its first statement, before the
    update."""
    first = len(texts_by_msg)
    for old in artifact.related["superseded"]:
        wanted = collapse(old)
        where = [i for i, text in enumerate(texts_by_msg) if wanted in text]
        if not where or any(i not in earlier for i in where):
            raise CorpusError(f"{spec.name}: superseded {old!r} at {where[:5]}, said at {earlier}")
        first = min(first, where[0])
    return first


def _entry(
    spec: Spec, artifact: Artifact, index: int, n: int, related: dict[str, Any]
) -> dict[str, Any]:
    depth = index / n
    lo, hi = DEPTH_LIMITS
    if not lo <= depth <= hi:
        raise CorpusError(f"{spec.name}: {artifact.kind} {artifact.needle!r} at depth {depth:.3f}")
    return {
        "kind": artifact.kind,
        "needle": artifact.needle,
        "depth": round(depth, 4),
        "message_index": index,
        "related": related,
    }


@dataclass(frozen=True, slots=True)
class _Call:
    call_id: str | None
    result_index: int | None
    result_text: str


def _call_of(msgs: list[dict[str, Any]], candidates: set[int], command: str) -> _Call:
    """The planted failing call: the tool call (among the plant's messages) that ran
    ``command``, and its result. A format that writes calls as text has no call id."""
    wanted = collapse(command)
    for i in sorted(candidates):
        msg = msgs[i]
        if msg.get("role") != "assistant":
            continue
        for call in msg.get("tool_calls") or []:
            if wanted not in message_text({"tool_calls": [call]}):
                continue
            call_id = str(call.get("id"))
            for j in range(i + 1, len(msgs)):
                if msgs[j].get("role") != "tool":
                    break
                if str(msgs[j].get("tool_call_id")) == call_id:
                    text = "\n".join(score_strings(msgs[j].get("content")))
                    return _Call(call_id, j, text)
            return _Call(call_id, None, "")
    return _Call(None, None, "")


# --- one session -----------------------------------------------------------------------------------


_PLANT_MESSAGES = {
    "failure": 5,
    "open_failure": 2,
    "file_edited": 2,
    "file_named": 3,
    "constraint": 2,
    "user_fact": 2,
    "decision": 2,
    "value_update": 4,
}


def build_session(spec: Spec) -> dict[str, Any]:
    """One session with its truth. The filler is sized in two passes: the first pass aims by
    estimate, the second corrects by what the first rendered (renderers and merges differ)."""
    renderer = load_renderer(spec.format)
    estimate = sum(_PLANT_MESSAGES[g] for g, _ in _plan(spec, Random(0)))
    doc = _build(spec, renderer, spec.size - estimate, estimate)
    off = spec.size - len(doc["messages"])
    if abs(off) > spec.size * 0.03:
        doc = _build(spec, renderer, spec.size - estimate + off, estimate)
    lo, hi = size_limits(spec)
    if not lo <= len(doc["messages"]) <= hi:
        raise CorpusError(f"{spec.name}: {len(doc['messages'])} messages, outside {lo}-{hi}")
    return doc


def _build(spec: Spec, renderer: Renderer, target: int, estimate: int) -> dict[str, Any]:
    seed = "retention" if spec.corpus == "dev" else f"retention-{spec.corpus}"
    rng = Random(f"{seed}/{spec.name}")
    content = CONTENTS[spec.corpus]
    if spec.long is not None:
        tasks, langs = _long_chat_filler(spec, rng, target, content)
    elif spec.format == "chat":
        tasks, langs = _chat_filler(spec, rng, target, content)
    else:
        file_tools = spec.format != "mini_swe_agent"
        tasks = _agent_filler(spec, rng, target, content, file_tools=file_tools)
        langs = [spec.language] * len(tasks)
    layout = _place(spec, tasks, langs, rng, renderer, estimate, content)
    flat = flatten(layout)
    msgs, spans = render(renderer, flat)
    violations = invariants.check_transcript(msgs, msgs)
    if violations:
        raise CorpusError(f"{spec.name}: invalid transcript: {violations[:3]}")
    truth = _truth(spec, layout, flat, msgs, spans, langs)
    return {
        "name": spec.name,
        "format": spec.format,
        "language": spec.language,
        "messages": msgs,
        "truth": truth,
    }


# --- files -------------------------------------------------------------------------------------------


def path_for(name: str, directory: Path = CORPUS_DIR) -> Path:
    return directory / f"{name}.json.gz"


def encode(doc: dict[str, Any]) -> bytes:
    raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return gzip.compress(raw, compresslevel=9, mtime=0)


def load_session(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return doc


def load_corpus(
    directory: Path = CORPUS_DIR, pattern: str = "*", specs: Sequence[Spec] = SPECS
) -> list[dict[str, Any]]:
    """Every session file, in spec order (then any other files by name)."""
    order = {spec.name: i for i, spec in enumerate(specs)}
    paths = sorted(
        directory.glob(f"{pattern}.json.gz"),
        key=lambda p: (order.get(p.name.removesuffix(".json.gz"), len(order)), p.name),
    )
    return [load_session(p) for p in paths]


def _each(
    specs: Iterable[Spec], log: Callable[[str], None]
) -> Iterable[tuple[Spec, dict[str, Any]]]:
    for spec in specs:
        try:
            doc = build_session(spec)
        except MissingRenderer as exc:
            log(f"skip {spec.name}: {exc}")
            continue
        yield spec, doc


def write(
    specs: Sequence[Spec], directory: Path = CORPUS_DIR, log: Callable[[str], None] = print
) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    for spec, doc in _each(specs, log):
        data = encode(doc)
        path_for(spec.name, directory).write_bytes(data)
        log(
            f"wrote {spec.name}: {len(doc['messages'])} messages, {len(doc['truth'])} artifacts, {len(data) / 1e6:.2f} MB"
        )
        n += 1
    return n


def check(
    specs: Sequence[Spec], directory: Path = CORPUS_DIR, log: Callable[[str], None] = print
) -> bool:
    ok = True
    for spec, doc in _each(specs, log):
        path = path_for(spec.name, directory)
        if not path.exists():
            log(f"MISSING {path.name} (run --write)")
            ok = False
        elif load_session(path) != doc:
            log(f"DIFFERS {path.name}: the generator makes something else now (run --write)")
            ok = False
        else:
            log(f"ok {spec.name}")
    return ok


def stats(docs: Sequence[dict[str, Any]]) -> str:
    kinds = Counter(t["kind"] for d in docs for t in d["truth"])
    lines = [
        f"{len(docs)} sessions, {sum(len(d['messages']) for d in docs):,} messages, {sum(kinds.values())} artifacts",
        "",
        "| session | format | language | messages | artifacts |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {d['name']} | {d['format']} | {d['language']} | {len(d['messages']):,} | {len(d['truth'])} |"
        for d in docs
    ]
    fmts = list(dict.fromkeys(d["format"] for d in docs))
    lines += ["", "| kind | " + " | ".join(fmts) + " | all |", "|---" * (len(fmts) + 2) + "|"]
    for kind in plants.KINDS:
        row = [
            sum(1 for d in docs if d["format"] == f for t in d["truth"] if t["kind"] == kind)
            for f in fmts
        ]
        lines.append(f"| {kind} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help="regenerate the session files")
    g.add_argument("--check", action="store_true", help="the files match the generator")
    g.add_argument("--stats", action="store_true", help="describe the files")
    p.add_argument("--sessions", default="*", help="only sessions whose name matches (fnmatch)")
    p.add_argument(
        "--corpus", choices=sorted(CORPORA), default="dev", help="which corpus (default: dev)"
    )
    args = p.parse_args(argv)
    from fnmatch import fnmatch

    directory, all_specs = CORPORA[args.corpus]
    specs = [s for s in all_specs if fnmatch(s.name, args.sessions)]
    if args.write:
        write(specs, directory)
        return 0
    if args.check:
        return 0 if check(specs, directory) else 1
    print(stats(load_corpus(directory, args.sessions, all_specs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
