"""The LangChain middleware, driven by LangChain's own agent loops against a running stack of
ours.

LangChain (``langchain==1.5.0``, ``langgraph``, ``deepagents==0.7.32``, ``langchain-openai``)
runs in its own venv (``bench/.langchain-venv``, built by ``bench/langchain_env.py`` when
missing). Our package goes in as a user's would: the wheel built from this tree, installed
with that venv's pip (``--no-deps --target``: LangChain's environment gets none of the
service's dependencies, so this also proves the middleware needs only httpx). The driver
(``tests/support/langchain_driver.py``) builds the agent with ``create_agent`` or
``create_deep_agent``, our middleware in its ``middleware``, and runs it turn by turn on one
checkpointed thread; LangChain's OpenAI chat model talks to a local fake OpenAI-compatible
server that plays the model. A real ``compaction api`` and ``compaction worker`` on a private
redis-server compact the session, their summarizer being the same fake server with a slow
answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from api.client import CompactionClient
from bench import langchain_env
from tests.support.agent_stack import install_wheel, stack_with_summarizer
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Reply
from tests.support.worker_fixtures import private_redis
from worker.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]  # the first run builds a venv
__all__ = ["private_redis"]  # a fixture, imported for pytest

DRIVER = Path(__file__).resolve().parents[1] / "support" / "langchain_driver.py"
AGENT_MODEL = "fake-agent"
SUMMARY_MODEL = "fake-summary"
WINDOW = 64_000  # the service's threshold is 54,400 tokens
SUMMARY = "## Goal\nShow the files one by one.\n## Progress\nfile_0.py to file_5.py shown."
SUMMARY_DELAY_S = 4.0  # the job waits this long on its summarizer: the agent must not
THREAD = "thread-1"
ERROR_LINE = "E   KeyError: 'session_id' in src/app/views.py:41"


def agent_requests(llm: FakeOpenAI) -> list[RecordedRequest]:
    """The agent's requests in order; the summarizer's go to the same server."""
    return [r for r in llm.requests if r.model == AGENT_MODEL]


def big_reply(i: int) -> str:
    """About 10,000 tokens by the fake server's count (characters / 4); the fourth names an
    error that the compaction summarizes away and recall finds again."""
    line = f"file_{i}.py: def handler_{i}(request): return render(request, 'page_{i}.html')\n"
    head = f"The tests failed:\n{ERROR_LINE}\n" if i == 3 else ""
    return head + line * (40_000 // len(line))


# --- LangChain's environment and our package in it --------------------------------------------


@pytest.fixture(scope="module")
def langchain_python() -> Path:
    """The LangChain venv, built when missing (needs PyPI; CI has it)."""
    try:
        langchain_env.ensure_venv(log=lambda msg: sys.stderr.write(msg + "\n"))
    except langchain_env.LangchainEnvError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot build the LangChain venv: {exc}", pytrace=False)
        pytest.skip(f"no LangChain venv at {langchain_env.VENV_DIR}, cannot build it: {exc}")
    return langchain_env.venv_python()


@pytest.fixture(scope="module")
def package_dir(langchain_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This tree's wheel, installed into a directory with LangChain's pip, without
    dependencies."""
    wheels, target = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("package")
    return install_wheel(langchain_python, wheels, target)


# --- the stack and the fake model ----------------------------------------------------------------


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=Reply.ok("Noted.")) as server:
        server.script(SUMMARY_MODEL, *[Reply.ok(SUMMARY).after(SUMMARY_DELAY_S)] * 4)
        yield server


@pytest.fixture
def api_url(
    private_redis: RedisServer, database_url: str, llm: FakeOpenAI, tmp_path: Path
) -> Iterator[str]:
    yield from stack_with_summarizer(private_redis, database_url, llm, tmp_path, SUMMARY_MODEL)


# --- the driver ------------------------------------------------------------------------------------


@dataclass
class Turn:
    seconds: float
    messages: list[dict[str, Any]]  # the thread's messages, as the middleware sends them
    ids: list[str]  # their LangChain ids
    status: dict[str, Any]


class Agent:
    """``langchain_driver.py`` under the LangChain venv: one agent, one turn per request."""

    def __init__(self, python: Path, *, log_path: Path, env: dict[str, str], hello: Any) -> None:
        self.log_path = log_path  # the driver's stderr: our log lines and LangChain's
        self._stderr: IO[str] = log_path.open("w+")
        self._proc = subprocess.Popen(
            [str(python), str(DRIVER)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            text=True, encoding="utf-8", env=env,
        )  # fmt: skip
        self.hello = self._ask(hello)

    def turn(self, text: str) -> Turn:
        answer = self._ask({"op": "turn", "text": text})
        return Turn(answer["seconds"], answer["messages"], answer["ids"], answer["status"])

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise AssertionError(f"the LangChain driver exited:\n{self.log()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def log(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-20_000:]

    def middleware_log(self) -> list[str]:
        return [line for line in self.log().splitlines() if "compaction-queue:" in line]

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()


def driver_env(package_dir: Path) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    # No tracing to LangSmith: the machine has no way out, and a test must not try.
    return env | {"PYTHONPATH": str(package_dir), "LANGSMITH_TRACING": "false"}


def start_agent(
    python: Path, package_dir: Path, tmp_path: Path, *, kind: str, run_mode: str, api_url: str,
    llm: FakeOpenAI,
) -> Agent:  # fmt: skip
    hello = {
        "base_url": llm.base_url, "model": AGENT_MODEL, "api_url": api_url, "agent": kind,
        "thread_id": THREAD, "context_length": WINDOW, "run": run_mode,
    }  # fmt: skip
    return Agent(python, log_path=tmp_path / "driver.log", env=driver_env(package_dir), hello=hello)


# create_agent runs synchronously (invoke), the deep agent asynchronously (ainvoke): both hook
# paths of the middleware.
AGENTS = [("create_agent", "sync"), ("create_deep_agent", "async")]


@pytest.fixture(params=AGENTS, ids=[kind for kind, _ in AGENTS])
def agent(
    request: pytest.FixtureRequest,
    langchain_python: Path,
    package_dir: Path,
    api_url: str,
    llm: FakeOpenAI,
    tmp_path: Path,
) -> Iterator[Agent]:
    kind, run_mode = request.param
    driver = start_agent(
        langchain_python, package_dir, tmp_path, kind=kind, run_mode=run_mode, api_url=api_url,
        llm=llm,
    )  # fmt: skip
    try:
        yield driver
    finally:
        driver.close()


def chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content"))) for m in messages)


def offered_tools(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools") or []]


# --- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the store is not the point
def test_the_agent_runs_on_the_queue_without_waiting_and_takes_the_compaction_later(
    agent: Agent, llm: FakeOpenAI, api_url: str
) -> None:
    # LangChain built the agent with our middleware in the summarization slot.
    assert agent.hello["middleware_class"] == "api.langchain.middleware.CompactionQueueMiddleware"
    assert "SummarizationMiddleware.before_model" in agent.hello["nodes"], agent.hello["nodes"]
    session_id = agent.hello["session_id"]
    assert session_id == f"langchain-{THREAD}"

    # Six long answers fill the window to about 60,000 tokens; the request that carries them
    # all (sooner with a deep agent's long system prompt) reports its usage, the service sees
    # it and queues a compaction.
    llm.script(AGENT_MODEL, *[Reply.ok(big_reply(i)) for i in range(6)])
    with CompactionClient(api_url) as queue:
        for i in range(8):
            turn = agent.turn(f"step {i}: show me file_{i}.py")
            if turn.status["open_job_id"] is not None:
                break
        session = queue.get_session(session_id)
        assert session.tokens >= session.threshold_tokens, session
        assert session.last_job is not None and session.last_job.trigger == "hygiene"
        job_id = session.last_job.id
        assert turn.status["open_job_id"] == job_id and turn.status["compactions"] == 0
        first_request = agent_requests(llm)[0]
        assert {"recall", "recall_message"} <= set(offered_tools(first_request))

        # The job waits on its summarizer; the agent goes on, a turn at a time, unblocked.
        for i in range(8, 10):
            turn = agent.turn(f"step {i}: meanwhile, a short question")
            assert turn.seconds < SUMMARY_DELAY_S / 2, turn.seconds
            assert turn.status["compactions"] == 0
        assert not queue.get_job(job_id).finished  # the agent never waited for it
        before_ids = ids_by_text(turn)
        uncompacted = len(turn.messages)

        job = queue.wait_for_job(job_id, timeout_s=120, poll_interval_s=0.2)
        assert job.status == "succeeded", job
        assert job.llm_ms is not None and job.llm_ms >= SUMMARY_DELAY_S * 1000 * 0.9

        # The next model call gets the compacted transcript: before_model took it.
        before = len(agent_requests(llm))
        turn = agent.turn("step 10: where were we?")
        assert turn.status["compactions"] == 1 and turn.status["open_job_id"] is None
        sent = agent_requests(llm)[before].messages
        assert any(SUMMARY.splitlines()[1] in str(m.get("content")) for m in sent), sent
        assert chars(sent) < chars(agent_requests(llm)[before - 1].messages) / 2
        assert ERROR_LINE not in json.dumps(sent)
        assert len(turn.messages) < uncompacted
        # The state holds the compaction once, with the ids the kept messages had.
        assert len(set(turn.ids)) == len(turn.ids)
        taken = ids_by_text(turn, upto=-1)  # without the new answer (the same "Noted.")
        kept = {text: ids for text, ids in taken.items() if text in before_ids}
        assert len(kept) >= 3 and all(ids <= before_ids[text] for text, ids in kept.items())

        # The model recalls the error line: LangChain runs the middleware's tools, the service
        # answers.
        hit = queue.search_archive(session_id, "KeyError: 'session_id'").hits
        assert hit is not None and len(hit) == 1
        llm.script(
            AGENT_MODEL,
            Reply.calls(("call_1", "recall", {"query": "KeyError: 'session_id'"})),
            Reply.calls(("call_2", "recall_message", {"seq": hit[0].seq, "before": 0, "after": 0})),
            Reply.ok("It was the KeyError in views.py, line 41."),
        )
        before = len(agent_requests(llm))
        turn = agent.turn("step 11: what was that error, exactly?")
        assert {"recall", "recall_message"} <= set(offered_tools(agent_requests(llm)[before]))
        recalled = [r.messages[-1] for r in agent_requests(llm)[before + 1 :]]
        assert [m["role"] for m in recalled] == ["tool", "tool"]
        assert "KeyError" in recalled[0]["content"]  # the hit's snippet
        assert f'"seq": {hit[0].seq}' in recalled[1]["content"]
        assert ERROR_LINE in json.loads(recalled[1]["content"])["messages"][0]["message"]["content"]
        assert turn.messages[-1]["content"] == "It was the KeyError in views.py, line 41."

        # After it, turns are appended again (no rewrite, no turn twice): the service holds
        # what the agent has, but for its last answer (which goes with the next call).
        turn = agent.turn("step 12: thanks")
        assert queue.get_messages(session_id).messages == turn.messages[:-1]
        assert queue.get_session(session_id).compaction_count == 1
    written_whole = [line for line in agent.middleware_log() if "written whole" in line]
    assert len(written_whole) == 1, agent.middleware_log()  # the first write only


def ids_by_text(turn: Turn, *, upto: int | None = None) -> dict[str, set[str]]:
    """The LangChain ids of the thread's messages (``[:upto]``), by what each one says."""
    out: dict[str, set[str]] = {}
    pairs = list(zip(turn.messages, turn.ids, strict=True))[:upto]
    for message, message_id in pairs:
        out.setdefault(json.dumps(message, sort_keys=True), set()).add(message_id)
    return out


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_deep_agents_subagent_is_a_conversation_of_its_own(
    langchain_python: Path, package_dir: Path, api_url: str, llm: FakeOpenAI, tmp_path: Path
) -> None:
    """The general-purpose subagent runs our middleware too (it took the summarization slot
    there as well), on the parent's thread: its turns go to a session of their own, and the
    parent's session is only appended to."""
    driver = start_agent(
        langchain_python, package_dir, tmp_path, kind="create_deep_agent", run_mode="sync",
        api_url=api_url, llm=llm,
    )  # fmt: skip
    try:
        session_id = driver.hello["session_id"]
        llm.script(
            AGENT_MODEL,
            Reply.ok("Hello."),
            Reply.calls(("call_t", "task", {"description": "Count the files.", "subagent_type": "general-purpose"})),
            Reply.ok("Six files."),  # the subagent
            Reply.ok("The subagent counted six files."),
        )  # fmt: skip
        driver.turn("hello")
        turn = driver.turn("count the files, with a subagent")
        assert turn.messages[-1]["content"] == "The subagent counted six files."
        with CompactionClient(api_url) as queue:
            ids = [s.session_id for s in queue.list_sessions().sessions]
            subagent = [i for i in ids if i.startswith(f"{session_id}:sub-")]
            assert len(subagent) == 1 and set(ids) == {session_id, *subagent}, ids
            held = queue.get_messages(subagent[0]).messages
            assert [m["role"] for m in held] == ["user"] and "Count the files." in str(held)
            after = driver.turn("thanks")
            assert after.messages[: len(turn.messages)] == turn.messages
            assert queue.get_messages(session_id).messages == after.messages[:-1]
        written_whole = [line for line in driver.middleware_log() if "written whole" in line]
        assert len(written_whole) == 2, driver.middleware_log()  # the parent's, the subagent's
    finally:
        driver.close()


def test_the_service_down_never_stops_the_agent(
    langchain_python: Path, package_dir: Path, llm: FakeOpenAI, tmp_path: Path
) -> None:
    """No service at the configured URL: every turn still gets its answer, promptly, and the
    model is offered none of the service's tools."""
    down = f"http://127.0.0.1:{free_port()}"
    driver = start_agent(
        langchain_python, package_dir, tmp_path, kind="create_agent", run_mode="sync",
        api_url=down, llm=llm,
    )  # fmt: skip
    try:
        for i in range(3):
            turn = driver.turn(f"question {i}")
            assert turn.messages[-1]["content"] == "Noted." and turn.seconds < 5, turn.seconds
        assert all(offered_tools(r) == [] for r in agent_requests(llm))
        warnings = [line for line in driver.middleware_log() if "WARNING" in line]
        assert len(warnings) == 1 and "no answer" in warnings[0], warnings  # once per pause
    finally:
        with contextlib.suppress(Exception):
            driver.close()
