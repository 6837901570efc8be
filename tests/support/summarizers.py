"""A real stand-in for an LLM summarizer: scripted answers and errors, and a record of requests.

Like httpx's ``MockTransport``, it implements the real protocol; nothing of ours is patched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from worker.compressor.errors import SummarizerError
from worker.compressor.summarizer import SummaryRequest, SummaryResponse

Reply = str | SummaryResponse | SummarizerError | Callable[[SummaryRequest], str]

DEFAULT_SUMMARY = """## Active Task
User asked: "finish the task"

## Goal
Fix the reported bug.

## Completed Actions
1. RAN `pytest` - exit 1 [tool: bash]

## Remaining Work
Tests still fail."""


@dataclass
class ScriptedSummarizer:
    """Answers each call with the next scripted reply; ``default`` once the script has run out.

    A reply is a text, a full ``SummaryResponse``, an error to raise, or a function of the
    request (to echo what it was given, for instance). ``default=None`` makes running out of
    script an error, so a test notices an unexpected extra call.
    """

    script: list[Reply] = field(default_factory=list)
    default: Reply | None = DEFAULT_SUMMARY
    model: str = "scripted-model"
    llm: bool = True
    latency_ms: float = 5.0
    requests: list[SummaryRequest] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.model

    @property
    def is_llm(self) -> bool:
        return self.llm

    @property
    def prompts(self) -> list[str]:
        return [r.prompt for r in self.requests]

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        reply = self.script.pop(0) if self.script else self.default
        if reply is None:
            raise AssertionError(f"unexpected summarizer call #{len(self.requests)}")
        if isinstance(reply, SummarizerError):
            raise reply
        if isinstance(reply, SummaryResponse):
            return reply
        text = reply(request) if callable(reply) else reply
        return SummaryResponse(text=text, model=self.model, latency_ms=self.latency_ms)
