"""Hermes Agent's real agent loop, one turn per request. Runs under the Hermes venv
(``bench/.hermes-venv``), never under ours:

    HERMES_HOME=... python hermes_driver.py    # JSON lines: requests on stdin, answers on stdout

``HERMES_HOME`` holds the ``config.yaml`` the test wrote (the model on a local fake
OpenAI-compatible server, the plugin enabled, ``context.engine`` selected). The first line is
``{"base_url", "model"}``: the driver builds Hermes' ``AIAgent`` as a program embedding Hermes
would (plugins discovered by Hermes itself, the engine chosen from the config) and answers what
engine it got. Then each ``{"op": "turn", "text"}`` runs ``run_conversation`` with the history
so far and answers the turn's wall time, the history after it and the engine's status.

Hermes prints to stdout; the answers go to a copy of the original stdout taken first.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from importlib.metadata import version
from typing import Any


def hermes(module: str) -> Any:
    """A module of Hermes (imported by name: it exists only in the Hermes venv)."""
    return importlib.import_module(module)


def build_agent(base_url: str, model: str) -> Any:
    session_db = hermes("hermes_state").SessionDB()  # as the CLI does: state.db in HERMES_HOME
    return hermes("run_agent").AIAgent(
        session_db=session_db,
        base_url=base_url,
        api_key="fake-key",
        model=model,
        quiet_mode=True,
        # Only the engine's own tools (recall), as Hermes' CLI enables for a plugin engine.
        enabled_toolsets=["context_engine"],
        skip_context_files=True,
        skip_memory=True,
        max_iterations=4,
    )


def describe(agent: Any) -> dict[str, Any]:
    engine = agent.context_compressor
    return {
        "hermes_version": version("hermes-agent"),
        "engine_class": f"{type(engine).__module__}.{type(engine).__qualname__}",
        "engine_name": getattr(engine, "name", None),
        "is_context_engine": isinstance(engine, hermes("agent.context_engine").ContextEngine),
        "context_length": engine.context_length,
        "session_id": agent.session_id,
    }


def run_turn(agent: Any, history: list[dict[str, Any]] | None, text: str) -> dict[str, Any]:
    started = time.monotonic()
    result = agent.run_conversation(text, conversation_history=history)
    seconds = time.monotonic() - started
    messages = result["messages"]
    return {
        "seconds": seconds,
        "final_response": result.get("final_response"),
        "messages": messages,
        "status": agent.context_compressor.get_status(),
        "session_id": agent.session_id,
    }


def main() -> None:
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # Hermes' own prints must not reach the answer stream

    def answer(document: dict[str, Any]) -> None:
        answers.write(json.dumps(document, default=str) + "\n")
        answers.flush()

    hello = json.loads(sys.stdin.readline())
    agent = build_agent(hello["base_url"], hello["model"])
    answer(describe(agent))
    history: list[dict[str, Any]] | None = None
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "turn":
            outcome = run_turn(agent, history, request["text"])
            history = outcome["messages"]
            answer(outcome)
        else:
            answer({"error": f"unknown op {request['op']!r}"})


if __name__ == "__main__":
    main()
