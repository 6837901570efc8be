"""The chat-completions wire format: the request we send and the answers we accept.

Answers come either as one JSON object or as server-sent events (``data: {chunk}`` lines ending
with ``data: [DONE]``). Both are reduced to a ``Completion``. A stream that ends without
``[DONE]`` and without a ``finish_reason`` was cut short; it is an error, never a summary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from worker.compressor.errors import (
    EmptySummaryError,
    ReasoningOnlyError,
    SummarizerError,
    SummarizerProtocolError,
)
from worker.compressor.summarizer import SummaryRequest
from worker.summarizers.classify import error_for_status

OUTPUT_HEADROOM = 1.3  # max_tokens = summary budget x 1.3: room to finish the last section
_REASONING_KEYS = ("reasoning_content", "reasoning")  # DeepSeek/vLLM/llama.cpp; OpenRouter/Ollama
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def max_output_tokens(request: SummaryRequest) -> int:
    if request.max_output_tokens > 0:
        return request.max_output_tokens
    return max(1, math.ceil(request.budget_tokens * OUTPUT_HEADROOM))


def request_body(
    model: str, request: SummaryRequest, *, max_tokens: int, temperature: float, stream: bool
) -> dict[str, Any]:
    """The chat-completions request: the rendered prompt as one user message."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": request.prompt}],
        "max_tokens": max_tokens,
        "temperature": temperature,
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}  # usage arrives in a last chunk
    return body


@dataclass(slots=True)
class Completion:
    content: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


def parse_completion(data: object, *, model: str) -> Completion:
    """A non-streamed answer: ``{"choices": [{"message": {...}}], "usage": {...}}``."""
    if not isinstance(data, dict):
        raise SummarizerProtocolError(f"answer from {model!r} is not a JSON object", model=model)
    choice = _first_choice(data, model=model)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise SummarizerProtocolError(
            f"answer from {model!r} has no choices[0].message", model=model
        )
    completion = Completion(
        content=_text(message.get("content")),
        reasoning="".join(_text(message.get(key)) for key in _REASONING_KEYS),
        finish_reason=_str_or_none(choice.get("finish_reason")),
    )
    _apply_usage(completion, data)
    return completion


def _first_choice(data: dict[str, Any], *, model: str) -> dict[str, Any]:
    if "error" in data and not data.get("choices"):
        # Some gateways answer 200 with an error object; its own code says what it is.
        raise embedded_error(data, model=model)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise SummarizerProtocolError(f"answer from {model!r} has no choices", model=model)
    return choices[0]


def embedded_error(data: dict[str, Any], *, model: str) -> SummarizerError:
    """An error object inside a 200 (or a stream), classified by the status it claims.

    Without a numeric code it is treated as a broken gateway (502).
    """
    inner = data.get("error")
    code = inner.get("code") if isinstance(inner, dict) else data.get("code")
    status = 502
    if isinstance(code, int | str) and str(code).isdigit() and 400 <= int(code) <= 599:
        status = int(code)
    return error_for_status(status, json.dumps(data).encode(), httpx.Headers(), model=model)


def _apply_usage(completion: Completion, data: dict[str, Any]) -> None:
    usage = data.get("usage")
    if isinstance(usage, dict):
        completion.input_tokens = _int_or_none(usage.get("prompt_tokens"))
        completion.output_tokens = _int_or_none(usage.get("completion_tokens"))


class EmptyStreamError(SummarizerProtocolError):
    """The stream ended before its first event: the server failed after sending its headers.

    llama-cpp-python, for one, checks the prompt's length only once the stream has begun, so
    the structured 400 it would have sent never arrives; the client asks again without streaming.
    """


@dataclass(slots=True)
class StreamReader:
    """Folds SSE lines into a Completion; ``finish()`` says whether the stream was whole."""

    model: str
    completion: Completion = field(default_factory=Completion)
    done: bool = False
    events: int = 0  # data lines seen
    _content: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)

    def feed(self, line: str) -> None:
        if not line.startswith("data:"):
            return  # blank separators, ": keep-alive" comments, event:/id:/retry: fields
        payload = line[5:].strip()
        self.events += 1
        if payload == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(payload)
        except (json.JSONDecodeError, RecursionError) as exc:  # the latter: nested too deep
            raise SummarizerProtocolError(
                f"invalid JSON in the stream from {self.model!r}: {exc}", model=self.model
            ) from exc
        self._fold(chunk)

    def _fold(self, chunk: object) -> None:
        if not isinstance(chunk, dict):
            raise SummarizerProtocolError(
                f"stream chunk from {self.model!r} is not an object", model=self.model
            )
        if "error" in chunk and not chunk.get("choices"):  # a failure after the headers went out
            raise embedded_error(chunk, model=self.model)
        _apply_usage(self.completion, chunk)
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                self._content.append(_text(delta.get("content")))
                self._reasoning.extend(_text(delta.get(key)) for key in _REASONING_KEYS)
            finish = _str_or_none(choice.get("finish_reason"))
            if finish:
                self.completion.finish_reason = finish

    def finish(self) -> Completion:
        if not self.done and self.completion.finish_reason is None:
            if self.events == 0:
                raise EmptyStreamError(
                    f"stream from {self.model!r} ended before its first event", model=self.model
                )
            raise SummarizerProtocolError(
                f"stream from {self.model!r} closed before it finished", model=self.model
            )
        self.completion.content = "".join(self._content)
        self.completion.reasoning = "".join(self._reasoning)
        return self.completion


def read_stream(lines: Iterable[str], *, model: str) -> Completion:
    reader = StreamReader(model=model)
    for line in lines:
        reader.feed(line)
    return reader.finish()


def summary_text(completion: Completion, *, model: str) -> str:
    """The summary, or EmptySummaryError: an empty summary would silently wipe the window."""
    content, thought = split_think(completion.content)
    if content.strip():
        return content.strip()
    reasoning = completion.reasoning + thought
    why = f"finish_reason={completion.finish_reason}"
    if reasoning.strip():
        raise ReasoningOnlyError(
            f"model {model!r} returned only reasoning ({len(reasoning)} chars) and no content; {why}",
            model=model,
        )
    raise EmptySummaryError(f"model {model!r} returned empty content; {why}", model=model)


def split_think(content: str) -> tuple[str, str]:
    """Separate a leading ``<think>…</think>`` block (reasoning inlined by some servers)."""
    stripped = content.lstrip()
    if not stripped.startswith(_THINK_OPEN):
        return content, ""
    end = stripped.find(_THINK_CLOSE)
    if end < 0:  # the budget ran out while thinking
        return "", stripped[len(_THINK_OPEN) :]
    return stripped[end + len(_THINK_CLOSE) :], stripped[len(_THINK_OPEN) : end]


def _text(value: object) -> str:
    """Content is a string, null, or (some servers) a list of ``{"type": "text"}`` parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(part.get("text") or "")
            for part in value
            if isinstance(part, dict) and part.get("type") in (None, "text", "output_text")
        )
    return ""


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
