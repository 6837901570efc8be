"""The conformance kit's own sessions, probes and budget benchmark, served over a pipe. Runs
under ``bench/.kit-venv`` (``compaction-conformance-kit``; ``bench/kit_env.py`` makes it):

    python kit_side.py        # JSON lines: requests on stdin, answer lines on stdout

The first line is ``{}``; the answer is ``{"kit_version"}``. Then:

* ``{"op": "session", "corpus": "seeded"|"random"|"generated", "seed", "strip_labels"}``: the
  kit's session as ``{"key", "turns": [{"role", "text", "canary_id"}], "canaries": [...]}``
  (each canary with its type and token lists); the canaries are kept here under ``key``.
* ``{"op": "score", "key", "texts": [...]}``: each text probed with the kit's own probe
  (``runner._probe_all``) against that session's canaries, and the kit's own stale measure (a
  superseded token anywhere in the text): ``{"scores": [{"survived", "stale_present"}]}``.
* ``{"op": "budget", "compactors": {name: takes_budget}, "budgets", "seeds", "rounds",
  "strip_labels"}``: the kit's ``run_budget_benchmark`` with one compactor per name whose
  ``compact(...)`` asks the bench: this side writes ``{"op": "compact", "compactor",
  "round_num", "budget_chars", "turns"}`` and reads ``{"text"}`` back, as often as the kit
  compacts; then it answers ``{"op": "done", "payload", "markdown"}``. A compactor that does
  not take the budget has the kit's two-argument ``compact`` and is reported as the kit reports
  any such compactor.

With ``strip_labels`` every turn's leading all-caps label (``FACT: ``, ``HARD CONSTRAINT: ``)
is removed before anything else sees it: the session builders are replaced here, inside the
kit's process, by ones that strip the turns they build. The canaries are unchanged (their
tokens never include a label). This file imports nothing of ours: the kit venv has nothing else.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# One to three all-caps words and a colon, opening the text: a type label.
_LABEL = re.compile(r"^[A-Z]{2,}(?: [A-Z]{2,}){0,2}:[ \t]*")
_BUILDERS = (  # (module, function): every session builder the benchmark and we call
    ("session", "build_seeded_session"),
    ("corpus", "build_random_session"),
    ("generated", "build_generated_session"),
    ("semantic_corpus", "build_semantic_session"),
    ("semantic_corpus", "build_semantic_heldout_session"),
)


def strip_label(text: str) -> str:
    """The text without its leading type label, if it opens with one."""
    rest = _LABEL.sub("", text, count=1)
    return rest if rest else text


def kit(module: str = "") -> Any:
    """The kit or one of its modules (imported by name: it exists only in the kit venv)."""
    return importlib.import_module(f"compaction_kit.{module}" if module else "compaction_kit")


def _strip_session(session: Any) -> Any:
    turns = tuple(dataclasses.replace(t, text=strip_label(t.text)) for t in session.turns)
    return dataclasses.replace(session, turns=turns)


def _stripping(builder: Callable[..., Any]) -> Callable[..., Any]:
    def build(*args: Any, **kwargs: Any) -> Any:
        built = builder(*args, **kwargs)
        if isinstance(built, tuple):  # (session, canaries[, meta])
            return (_strip_session(built[0]), *built[1:])
        return _strip_session(built)

    return build


@contextmanager
def labels_stripped(enabled: bool) -> Iterator[None]:
    """While open, every kit session builder (where the kit's own modules look it up) strips
    the type labels of the turns it builds."""
    if not enabled:
        yield
        return
    patched: list[tuple[Any, str, Any]] = []
    for module_name, name in _BUILDERS:
        original: Callable[..., Any] = getattr(kit(module_name), name)
        for holder in (kit(module_name), kit("benchmark"), kit()):
            if getattr(holder, name, None) is original:
                patched.append((holder, name, original))
                setattr(holder, name, _stripping(original))
    try:
        yield
    finally:
        for holder, name, original in patched:
            setattr(holder, name, original)


def _canary_doc(canary: Any) -> dict[str, Any]:
    return {
        "id": canary.id,
        "type": canary.type.value,
        "content": canary.content,
        "required_tokens": list(canary.required_tokens),
        "superseded_tokens": list(canary.superseded_tokens),
        "behavior_required_tokens": list(canary.behavior_required_tokens),
        "exact_use_required_tokens": list(canary.exact_use_required_tokens),
    }


def _turn_doc(turn: Any) -> dict[str, Any]:
    return {"role": turn.role, "text": turn.text, "canary_id": turn.canary_id}


def build_session(corpus: str, seed: int | None) -> tuple[Any, list[Any]]:
    """The kit's session and canaries (looked up at call time, so a patched builder is used)."""
    if corpus == "seeded":
        return kit("session").build_seeded_session(), kit("canaries").seeded_canaries()
    if corpus == "random":
        session, canaries = kit("corpus").build_random_session(seed)
        return session, canaries
    if corpus == "generated":
        session, canaries = kit("generated").build_generated_session(seed)
        return session, canaries
    raise ValueError(f"unknown corpus {corpus!r}")


class Server:
    def __init__(self, requests: TextIO, answers: TextIO) -> None:
        self.requests = requests
        self.answers = answers
        self.canaries: dict[str, list[Any]] = {}

    def session(self, request: dict[str, Any]) -> dict[str, Any]:
        corpus, seed, strip = request["corpus"], request.get("seed"), bool(request["strip_labels"])
        with labels_stripped(strip):
            session, canaries = build_session(corpus, seed)
        key = f"{corpus}-{seed}-{'stripped' if strip else 'kept'}"
        self.canaries[key] = canaries
        return {
            "key": key,
            "turns": [_turn_doc(t) for t in session.turns],
            "canaries": [_canary_doc(c) for c in canaries],
        }

    def score(self, request: dict[str, Any]) -> dict[str, Any]:
        canaries = self.canaries[request["key"]]
        probe_all = kit("runner")._probe_all
        scores = []
        for text in request["texts"]:
            lower = text.lower()
            stale = {
                c.id: any(t.lower() in lower for t in c.superseded_tokens)
                for c in canaries
                if c.superseded_tokens
            }
            scores.append({"survived": probe_all(canaries, text), "stale_present": stale})
        return {"scores": scores}

    def budget(self, request: dict[str, Any]) -> dict[str, Any]:
        factories = {
            name: self._factory(name, bool(takes_budget))
            for name, takes_budget in request["compactors"].items()
        }
        bench = kit("benchmark")
        with labels_stripped(bool(request["strip_labels"])):
            payload = bench.run_budget_benchmark(
                factories,
                budgets=tuple(request["budgets"]),
                seeds=tuple(request["seeds"]),
                rounds=int(request["rounds"]),
            )
        for entry in payload["entries"]:
            entry.pop("runtime_seconds", None)  # the bench's time too, not the compactor's
        return {
            "op": "done",
            "payload": payload,
            "markdown": bench.budget_benchmark_to_markdown(payload),
        }

    def _factory(self, name: str, takes_budget: bool) -> Callable[[], Any]:
        return lambda: (BudgetedRemote if takes_budget else PlainRemote)(name, self)

    def compact_remotely(
        self, name: str, turns: list[Any], round_num: int, budget_chars: int | None
    ) -> Any:
        _answer(
            self.answers,
            {
                "op": "compact",
                "compactor": name,
                "round_num": round_num,
                "budget_chars": budget_chars,
                "turns": [_turn_doc(t) for t in turns],
            },
        )
        reply = json.loads(self.requests.readline())
        return kit("compacted").CompactedContext(
            text=reply["text"], compactor_name=name, round_num=round_num
        )


class BudgetedRemote:
    """A kit compactor that takes the benchmark's budget and asks the bench to compact."""

    def __init__(self, name: str, server: Server) -> None:
        self.name = name
        self._server = server

    def compact(self, turns: list[Any], round_num: int = 1, budget_chars: int | None = None) -> Any:
        return self._server.compact_remotely(self.name, turns, round_num, budget_chars)


class PlainRemote:
    """The same with the kit's original two-argument ``compact``: it is told no budget."""

    def __init__(self, name: str, server: Server) -> None:
        self.name = name
        self._server = server

    def compact(self, turns: list[Any], round_num: int = 1) -> Any:
        return self._server.compact_remotely(self.name, turns, round_num, None)


def serve(requests: TextIO, answers: TextIO) -> None:
    json.loads(requests.readline())  # the header: nothing to set
    _answer(answers, {"kit_version": kit("versioning").kit_version()})
    server = Server(requests, answers)
    handlers = {"session": server.session, "score": server.score, "budget": server.budget}
    # readline, not iteration: a budget run reads the bench's replies from the same stream.
    while line := requests.readline():
        request = json.loads(line)
        _answer(answers, handlers[request["op"]](request))


def _answer(answers: TextIO, doc: dict[str, Any]) -> None:
    answers.write(json.dumps(doc, ensure_ascii=False) + "\n")
    answers.flush()


def main() -> int:
    answers = sys.stdout
    # Anything printed goes to stderr, so stdout carries only answer lines.
    sys.stdout = sys.stderr
    serve(sys.stdin, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
