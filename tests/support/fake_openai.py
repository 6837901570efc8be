"""A real local server that speaks OpenAI chat completions and plays scripted answers.

It listens on 127.0.0.1 (a free port), answers ``POST /v1/chat/completions`` (plain JSON, or
server-sent events when the request asks for ``stream``) and ``GET /v1/models``, and records
every request so a test can assert what the client sent. Answers are scripted per model::

    with FakeOpenAI() as llm:
        llm.script("small", Reply.error(404, code="model_not_found"))
        llm.script("big", Reply.ok("the summary"))
        settings = Settings(llm_base_url=llm.base_url, summary_model="small", main_model="big")
        ...
        assert [r.model for r in llm.requests] == ["small", "big"]

A model's queue is consumed in order; when it is empty the ``"*"`` queue is tried, then
``default`` (a success echoing how many messages it saw). With ``context_window`` set, a prompt
longer than the window (rough count: characters / 4) gets a 400 ``context_length_exceeded`` in
the shape of ``context_error_shape`` without consuming the script, like a real server would.

Failures it can play: any status with a JSON (or raw) body and headers (``Retry-After``); a delay
before the answer or between stream chunks; invalid JSON; a body shorter than its
Content-Length; a stream closed before ``[DONE]``; empty or whitespace content; reasoning-only
content; a stream request answered with plain JSON (servers that do not stream).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

import pytest

Kind = Literal["ok", "error", "invalid_json", "truncated", "stream_cut", "raw", "hang_up"]
ContextShape = Literal["openai", "llamacpp", "vllm", "litellm"]

ANY_MODEL = "*"
_CHUNK_CHARS = 16  # streamed content arrives in pieces this long


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods; ``after(s)`` adds a delay."""

    kind: Kind = "ok"
    text: str = "Summary: the conversation so far."
    reasoning: str | None = None  # sent as ``reasoning_content``
    status: int = 200
    body: Any = None  # error replies: a JSON-able object, or bytes sent as they are
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # before the status line
    chunk_delay_s: float = 0.0  # between stream chunks
    stream: bool | None = None  # None: as the request asks; False: plain JSON regardless
    usage: bool = True  # include ``usage`` (streams: only when include_usage was asked)
    prompt_tokens: int | None = None  # override the rough count
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    cut_clean: bool = False  # stream_cut: end the chunked body properly, just without [DONE]
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments as JSON text)

    @classmethod
    def ok(cls, text: str = "Summary: the conversation so far.", **kw: Any) -> Reply:
        return cls(kind="ok", text=text, **kw)

    @classmethod
    def calls(cls, *calls: tuple[str, str, Mapping[str, Any]], **kw: Any) -> Reply:
        """An assistant turn that calls tools, each given as (id, name, arguments)."""
        kw.setdefault("finish_reason", "tool_calls")
        encoded = tuple((call_id, name, json.dumps(args)) for call_id, name, args in calls)
        return cls(kind="ok", text="", tool_calls=encoded, **kw)

    @classmethod
    def empty(cls, content: str = "", **kw: Any) -> Reply:
        """HTTP 200 whose content is empty or whitespace (some proxies do this)."""
        return cls(kind="ok", text=content, **kw)

    @classmethod
    def reasoning_only(cls, reasoning: str = "Let me think about this...", **kw: Any) -> Reply:
        """A reasoning model that spent its budget thinking: empty content, finish "length"."""
        kw.setdefault("finish_reason", "length")
        return cls(kind="ok", text="", reasoning=reasoning, **kw)

    @classmethod
    def error(
        cls,
        status: int,
        *,
        message: str = "scripted error",
        code: str | int | None = None,
        type: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> Reply:
        """An error status with OpenAI's body shape ``{"error": {...}}``."""
        body = {"error": {"message": message, "type": type, "param": None, "code": code}}
        return cls(kind="error", status=status, body=body, headers=dict(headers or {}), **kw)

    @classmethod
    def rate_limited(cls, retry_after: str | float | None = None, **kw: Any) -> Reply:
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        return cls.error(
            429,
            message="Rate limit reached",
            code="rate_limit_exceeded",
            type="requests",
            headers=headers,
            **kw,
        )

    @classmethod
    def context_too_long(cls, shape: ContextShape = "openai", **kw: Any) -> Reply:
        return cls(kind="error", status=400, body=context_error_body(shape, 9999, 4096), **kw)

    @classmethod
    def raw(
        cls, status: int, body: bytes, headers: Mapping[str, str] | None = None, **kw: Any
    ) -> Reply:
        """Exactly these bytes with this status (e.g. an HTML 502 page from a proxy)."""
        return cls(kind="raw", status=status, body=body, headers=dict(headers or {}), **kw)

    @classmethod
    def invalid_json(cls, **kw: Any) -> Reply:
        return cls(kind="invalid_json", **kw)

    @classmethod
    def truncated(cls, **kw: Any) -> Reply:
        """A plain-JSON answer whose body stops short of its Content-Length, then EOF."""
        return cls(kind="truncated", **kw)

    @classmethod
    def stream_cut(cls, *, clean: bool = False, **kw: Any) -> Reply:
        """A stream that stops after a few chunks: no finish_reason, no ``[DONE]``."""
        return cls(kind="stream_cut", cut_clean=clean, **kw)

    @classmethod
    def hang_up(cls, **kw: Any) -> Reply:
        """Read the request, then close the connection without a word (a dead keep-alive)."""
        return cls(kind="hang_up", **kw)

    @classmethod
    def empty_stream(cls, **kw: Any) -> Reply:
        """Stream headers, then an empty body: a server that failed after starting to stream."""
        return cls.raw(200, b"", {"Content-Type": "text/event-stream"}, **kw)

    def after(self, delay_s: float) -> Reply:
        return dataclasses.replace(self, delay_s=delay_s)


def context_error_body(shape: ContextShape, prompt_tokens: int, window: int) -> dict[str, Any]:
    """The 400 body real servers send when the prompt does not fit, in their own shapes."""
    text = f"This model's maximum context length is {window} tokens; you asked {prompt_tokens}."
    if shape == "llamacpp":  # llama.cpp server (tools/server)
        return {
            "error": {
                "code": 400,
                "message": text,
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt_tokens,
                "n_ctx": window,
            }
        }
    if shape == "vllm":  # vLLM's flat ErrorResponse
        return {
            "object": "error",
            "message": text,
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    if shape == "litellm":  # LiteLLM proxy: code is the status as a string
        return {
            "error": {
                "message": text,
                "type": "context_length_exceeded",
                "param": None,
                "code": "400",
            }
        }
    return {
        "error": {
            "message": text,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def rough_tokens(messages: list[dict[str, Any]]) -> int:
    """About four characters a token, plus framing: enough for a fake window."""
    total = 0
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        total += 4 + len(str(content or "")) // 4
    return total


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    model: str | None
    body: dict[str, Any]
    headers: dict[str, str]  # lower-cased names
    peer_port: int  # the client's source port: equal ports mean a reused connection
    received_at: float  # time.monotonic()

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_tokens", self.body.get("max_completion_tokens"))
        return None if value is None else int(value)

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


class FakeOpenAI:
    """The server. Use as a context manager (or ``start()``/``stop()``)."""

    def __init__(
        self,
        *,
        context_window: int | None = None,
        context_error_shape: ContextShape = "openai",
        api_key: str | None = None,
        count_tokens: Callable[[list[dict[str, Any]]], int] = rough_tokens,
        default: Reply | None = None,
    ) -> None:
        self.context_window = context_window
        self.context_error_shape: ContextShape = context_error_shape
        self.api_key = api_key  # when set, other bearer tokens get 401
        self.count_tokens = count_tokens
        self.default = default
        self._scripts: dict[str, deque[Reply]] = {}
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        self._server = _Server(("127.0.0.1", 0), _Handler, fake=self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes scripted delays so handler threads finish
        if self._server is not None:
            self._server.shutdown()
            self._server.close_open_connections()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "FakeOpenAI is not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What COMPACTION_LLM_BASE_URL should be."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection ----------------------------------------------------------
    def script(self, model: str, *replies: Reply) -> FakeOpenAI:
        """Queue answers for requests naming ``model`` (``"*"``: any model)."""
        with self._lock:
            self._scripts.setdefault(model, deque()).extend(replies)
        return self

    def pending(self, model: str = ANY_MODEL) -> int:
        """Scripted answers not yet played for ``model``."""
        with self._lock:
            return len(self._scripts.get(model, ()))

    @property
    def requests(self) -> list[RecordedRequest]:
        """Chat-completion requests received so far, in order."""
        with self._lock:
            return [r for r in self._requests if r.path.endswith("/chat/completions")]

    def clear(self) -> None:
        with self._lock:
            self._scripts.clear()
            self._requests.clear()

    # -- used by the handler ---------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_reply(self, model: str | None, messages: list[dict[str, Any]]) -> Reply:
        if self.context_window is not None:
            tokens = self.count_tokens(messages)
            if tokens > self.context_window:
                body = context_error_body(self.context_error_shape, tokens, self.context_window)
                return Reply(kind="error", status=400, body=body)
        with self._lock:
            for name in (model or "", ANY_MODEL):
                queue = self._scripts.get(name)
                if queue:
                    return queue.popleft()
        if self.default is not None:
            return self.default
        return Reply.ok(f"Summary of {len(messages)} message(s).")

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server is stopping; True when the full time passed."""
        return seconds <= 0 or not self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: when 64 clients connect at once, the kernel drops
    # the connections past it and each retries a second later (TCP's first retransmission),
    # a delay no real server (uvicorn: 2048, nginx: 511) would add.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[_Handler], *, fake: FakeOpenAI):
        self.fake = fake
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        """Unblock handler threads still waiting on keep-alive connections."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):  # already closed by the peer
                sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so tests can see connection reuse
    server: _Server
    timeout = 30  # a forgotten client connection cannot pin a thread forever

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``requests`` instead."""

    def handle(self) -> None:
        # A client that timed out hangs up while we are still writing: that is the point.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
            super().handle()

    # -- routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            models = sorted(m for m in self.server.fake._scripts if m != ANY_MODEL)
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"error": {"message": "not found", "code": "not_found"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "bad json", "code": "invalid_json"}})
            return
        model = body.get("model")
        fake._record(
            RecordedRequest(
                method="POST",
                path=self.path,
                model=model,
                body=body,
                headers={k.lower(): v for k, v in self.headers.items()},
                peer_port=int(self.client_address[1]),
                received_at=time.monotonic(),
            )
        )
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": "no such route", "code": "not_found"}})
            return
        if (
            fake.api_key is not None
            and self.headers.get("Authorization") != f"Bearer {fake.api_key}"
        ):
            self._send_json(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
            return
        reply = fake._next_reply(model, list(body.get("messages") or []))
        if not fake._sleep(reply.delay_s):
            return
        self._play(reply, body)

    # -- playing a reply -------------------------------------------------------------------
    def _play(self, reply: Reply, body: dict[str, Any]) -> None:
        streaming = bool(body.get("stream")) and reply.stream is not False
        if reply.kind == "hang_up":
            self._hang_up()
        elif reply.kind == "error":
            self._send_json(reply.status, reply.body, reply.headers)
        elif reply.kind == "raw":
            self._send_bytes(reply.status, reply.body, "text/html", reply.headers)
        elif reply.kind == "invalid_json" and streaming:
            self._send_stream([b'data: {"id": "x", "choices": [{"delta": {"content": "Sum'])
        elif reply.kind == "invalid_json":
            self._send_bytes(
                200, b'{"id": "chatcmpl-x", "choices": [{"message": {"con', "application/json"
            )
        elif reply.kind == "truncated":
            self._send_truncated(_completion(reply, body, self.server.fake))
        elif reply.kind == "stream_cut":
            events = _events(reply, body, self.server.fake, cut=True)
            self._send_stream(events, chunk_delay_s=reply.chunk_delay_s, abort=not reply.cut_clean)
        elif streaming:
            events = [*_events(reply, body, self.server.fake), b"data: [DONE]"]
            self._send_stream(events, chunk_delay_s=reply.chunk_delay_s)
        else:
            self._send_json(200, _completion(reply, body, self.server.fake), reply.headers)

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self._send_bytes(status, data, "application/json", headers)

    def _send_bytes(
        self, status: int, data: bytes, ctype: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if not any(name.lower() == "content-type" for name in headers or {}):
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_truncated(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) + 64))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._hang_up()

    def _send_stream(
        self, events: list[bytes], *, chunk_delay_s: float = 0.0, abort: bool = False
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i, event in enumerate(events):
            if i and not self.server.fake._sleep(chunk_delay_s):
                break
            payload = event + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
        if abort:
            self._hang_up()
        else:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _hang_up(self) -> None:
        """Close the connection mid-body, the way a crashing proxy does."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _usage(reply: Reply, body: dict[str, Any], fake: FakeOpenAI) -> dict[str, int]:
    prompt = reply.prompt_tokens
    if prompt is None:
        prompt = fake.count_tokens(list(body.get("messages") or []))
    completion = reply.completion_tokens
    if completion is None:
        completion = (len(reply.text) + len(reply.reasoning or "")) // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in reply.tool_calls
    ]


def _completion(reply: Reply, body: dict[str, Any], fake: FakeOpenAI) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["content"] = reply.text or None
        message["tool_calls"] = _tool_calls(reply)
    out: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
    }
    if reply.usage:
        out["usage"] = _usage(reply, body, fake)
    return out


def _events(
    reply: Reply, body: dict[str, Any], fake: FakeOpenAI, *, cut: bool = False
) -> list[bytes]:
    """The SSE ``data:`` lines of a streamed completion, without the final ``[DONE]``.

    ``cut``: only the role chunk and the first piece of content, as when a stream dies early.
    """
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({**base, "choices": [choice], **extra}).encode()

    events = [chunk({"role": "assistant", "content": ""})]
    reasoning = reply.reasoning or ""
    events += [
        chunk({"reasoning_content": reasoning[i : i + _CHUNK_CHARS]})
        for i in range(0, len(reasoning), _CHUNK_CHARS)
    ]
    events += [
        chunk({"content": reply.text[i : i + _CHUNK_CHARS]})
        for i in range(0, len(reply.text), _CHUNK_CHARS)
    ]
    events += [
        chunk({"tool_calls": [{"index": i, **call}]}) for i, call in enumerate(_tool_calls(reply))
    ]
    if cut:
        return events[:2]
    events.append(chunk({}, reply.finish_reason))
    wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if reply.usage and wants_usage:
        usage: dict[str, Any] = {**base, "choices": [], "usage": _usage(reply, body, fake)}
        events.append(b"data: " + json.dumps(usage).encode())
    return events


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started FakeOpenAI, stopped after the test (import it into a conftest to use it)."""
    with FakeOpenAI() as server:
        yield server
