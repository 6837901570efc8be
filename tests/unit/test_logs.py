"""Log records: the formatters, the bound ids, the format a process picks, request ids."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from fastapi import FastAPI

from api.request_context import RequestContextMiddleware, request_id
from tests.unit.test_redact import MUST_REDACT
from worker import logs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["json", "text"])
def captured(request: pytest.FixtureRequest) -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger writing through one of our formatters into a string."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logs.JsonFormatter() if request.param == "json" else logs.TextFormatter())
    logger = logging.getLogger(f"tests.logs.{request.param}")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield logger, out
    finally:
        logger.removeHandler(handler)


@pytest.mark.parametrize(("text", "secret", "kept"), MUST_REDACT)
def test_no_secret_of_the_redaction_corpus_reaches_a_log_line(
    captured: tuple[logging.Logger, io.StringIO], text: str, secret: str, kept: str
) -> None:
    logger, out = captured
    logger.warning("provider said: %s", text)
    logger.info(text)
    try:
        raise RuntimeError(text)
    except RuntimeError:
        logger.exception("the summarizer failed")
    assert secret not in out.getvalue()


def test_a_json_record_names_the_bound_ids_and_the_traceback(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, out = captured
    with logs.bound(job_id="j1", session_id="s1", trigger="manual", attempt=2):
        try:
            raise ValueError("bad")
        except ValueError:
            logger.exception("job failed")
    logger.info("after")
    lines = out.getvalue().splitlines()
    if logger.name.endswith("json"):
        first, last = json.loads(lines[0]), json.loads(lines[-1])
        assert first["message"] == "job failed" and first["level"] == "ERROR"
        assert (first["job_id"], first["session_id"], first["trigger"], first["attempt"]) == (
            "j1", "s1", "manual", 2,
        )  # fmt: skip
        assert "ValueError: bad" in first["exception"]
        assert last["message"] == "after" and "job_id" not in last  # unbound after the block
    else:
        assert "[job_id=j1 session_id=s1 trigger=manual attempt=2] job failed" in lines[0]
        assert lines[-1].endswith(" after") and "job_id" not in lines[-1]


def test_each_thread_sees_only_the_ids_it_bound() -> None:
    seen: dict[str, object] = {}

    def job(name: str) -> None:
        logs.clear()
        logs.bind(job_id=name)
        barrier.wait()  # both bound before either reads
        seen[name] = logs.context_fields().get("job_id")

    barrier = threading.Barrier(2)
    threads = [threading.Thread(target=job, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": "a", "b": "b"}
    assert "job_id" not in logs.context_fields()  # this thread bound nothing


def test_bind_none_removes_a_field() -> None:
    with logs.bound(job_id="j1", attempt=1):
        logs.bind(attempt=None)
        assert dict(logs.context_fields()) == {"job_id": "j1"}


def stderr_of(setting: str | None, *, terminal: bool) -> str:
    """What a process that configures logging writes to its stderr, a terminal or a pipe."""
    code = (
        "import logging; from worker import logs; from worker.settings import get_settings;"
        "logs.configure(get_settings().log_format); logging.getLogger('x').warning('hello')"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTION_")}
    if setting is not None:
        env["COMPACTION_LOG_FORMAT"] = setting
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
            timeout=60, check=True,
        )  # fmt: skip
        return done.stderr
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, env=env, stderr=follower,
            stdout=subprocess.DEVNULL, timeout=60, check=True,
        )  # fmt: skip
        return os.read(leader, 65536).decode()
    finally:
        os.close(leader)
        os.close(follower)


def test_a_process_logs_json_unless_a_person_watches_its_terminal() -> None:
    piped = json.loads(stderr_of(None, terminal=False))
    assert (piped["level"], piped["logger"], piped["message"]) == ("WARNING", "x", "hello")
    on_terminal = stderr_of(None, terminal=True)
    assert on_terminal.rstrip().endswith("WARNING x hello") and "{" not in on_terminal
    assert json.loads(stderr_of("json", terminal=True))["message"] == "hello"
    assert stderr_of("text", terminal=False).rstrip().endswith("WARNING x hello")


@pytest.mark.parametrize(
    "given", ["gw-7f3a9c:req/42", "01HZX3KQ5V8M2N4P6R8T0W2Y4A", "a" * 128, "4bf92f3577b34da6"]
)
def test_a_plain_request_id_is_kept(given: str) -> None:
    assert request_id(given) == given


@pytest.mark.parametrize(
    "given", [None, "", "a" * 129, 'x" injected', "line\nbreak", "-starts-with-dash", "ünï"]
)
def test_any_other_request_id_is_replaced(given: str | None) -> None:
    made = request_id(given)
    assert made != given and len(made) == 32 and int(made, 16) >= 0


def test_a_record_logged_inside_a_route_names_the_request() -> None:
    """Route code runs on the thread pool: the request's id reaches it."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("tests.logs.route")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    app = FastAPI()

    @app.get("/work")
    def work() -> dict[str, str]:
        logger.info("inside the route")
        return {}

    app.add_middleware(RequestContextMiddleware)

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return await client.get("/work", headers={"X-Request-ID": "gw-1"})

    try:
        answer = anyio.run(call)
    finally:
        logger.removeHandler(handler)
    assert answer.headers["X-Request-ID"] == "gw-1"
    assert json.loads(out.getvalue())["request_id"] == "gw-1"
