"""The Hermes Agent context engine, driven by Hermes' own code against a running stack of ours.

Hermes (``hermes-agent==0.19.0``) runs in its own venv (``bench/.hermes-venv``, built by
``bench/hermes_env.py`` when missing). Our package goes in as a user's would: the wheel built
from this tree, installed with Hermes' pip (``--no-deps --target``: Hermes' environment gets
none of the service's dependencies, so this also proves the plugin needs only httpx). Hermes'
own plugin loader finds it by its entry point; ``config.yaml`` enables it and selects it as
``context.engine``. The driver (``tests/support/hermes_driver.py``) runs Hermes' real
``AIAgent`` loop turn by turn against a local fake OpenAI-compatible server that plays the
model; a real ``compaction api`` and ``compaction worker`` on a private redis-server compact the
session, their summarizer being the same fake server with a slow answer.
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
from api.hermes import NAME
from bench import hermes_env
from tests.support.agent_stack import install_wheel, stack_with_summarizer
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Reply
from tests.support.worker_fixtures import private_redis
from worker.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]  # the first run builds a venv
__all__ = ["private_redis"]  # a fixture, imported for pytest

DRIVER = Path(__file__).resolve().parents[1] / "support" / "hermes_driver.py"
AGENT_MODEL = "fake-agent"
SUMMARY_MODEL = "fake-summary"
WINDOW = 64_000  # Hermes refuses windows under 64K; the service's threshold is 54,400
SUMMARY = "## Goal\nShow the files one by one.\n## Progress\nfile_0.py to file_5.py shown."
SUMMARY_DELAY_S = 4.0  # the job waits this long on its summarizer: the agent must not


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


# --- Hermes' environment and our plugin in it --------------------------------------------------


@pytest.fixture(scope="module")
def hermes_python() -> Path:
    """The bench's Hermes venv, built when missing (needs PyPI; CI has it)."""
    try:
        hermes_env.ensure_venv(log=lambda msg: sys.stderr.write(msg + "\n"))
    except hermes_env.HermesEnvError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot build the Hermes venv: {exc}", pytrace=False)
        pytest.skip(f"no Hermes venv at {hermes_env.VENV_DIR} and it cannot be built here: {exc}")
    return hermes_env.venv_python()


@pytest.fixture(scope="module")
def plugin_dir(hermes_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This tree's wheel, installed into a directory with Hermes' pip, without dependencies."""
    wheels, target = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("plugin")
    return install_wheel(hermes_python, wheels, target)


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
    messages: list[dict[str, Any]]
    status: dict[str, Any]
    session_id: str


class Hermes:
    """``hermes_driver.py`` under the Hermes venv: Hermes' AIAgent, one turn per request."""

    def __init__(self, python: Path, *, home: Path, env: dict[str, str], llm: FakeOpenAI) -> None:
        self.log_path = home / "driver.log"  # Hermes' own log lines and ours
        self._stderr: IO[str] = self.log_path.open("w+")
        self._proc = subprocess.Popen(
            [str(python), str(DRIVER)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            text=True, encoding="utf-8", env={**env, "HERMES_HOME": str(home)},
        )  # fmt: skip
        self.hello = self._ask({"base_url": llm.base_url, "model": AGENT_MODEL})

    def turn(self, text: str) -> Turn:
        answer = self._ask({"op": "turn", "text": text})
        return Turn(answer["seconds"], answer["messages"], answer["status"], answer["session_id"])

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise AssertionError(f"the Hermes driver exited:\n{self.log()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def log(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-20_000:]

    def engine_log(self) -> str:
        """The engine's lines in Hermes' own log (under HERMES_HOME)."""
        lines = (self.log_path.parent / "logs" / "agent.log").read_text().splitlines()
        return "\n".join(line for line in lines if "compaction-queue:" in line)

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


def hermes_home(root: Path, llm: FakeOpenAI, *, in_place: bool = True) -> Path:
    """What a Hermes user writes to select the engine: enable the plugin, name the engine.
    ``in_place`` False is Hermes' older mode: a new session id after each compaction."""
    home = root / "hermes-home"
    home.mkdir()
    config = {
        "model": {
            "default": AGENT_MODEL, "provider": "custom", "base_url": llm.base_url,
            "context_length": WINDOW,
        },
        "plugins": {"enabled": [NAME]},
        "context": {"engine": NAME},
        "compression": {"in_place": in_place},
    }  # fmt: skip
    (home / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    return home


def driver_env(plugin_dir: Path, api_url: str) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    return env | {"PYTHONPATH": str(plugin_dir), "COMPACTION_API_URL": api_url}


@pytest.fixture(params=[True, False], ids=["in-place", "rotating"])
def hermes(
    request: pytest.FixtureRequest,
    hermes_python: Path,
    plugin_dir: Path,
    api_url: str,
    llm: FakeOpenAI,
    tmp_path: Path,
) -> Iterator[Hermes]:
    home = hermes_home(tmp_path, llm, in_place=request.param)
    driver = Hermes(hermes_python, home=home, env=driver_env(plugin_dir, api_url), llm=llm)
    try:
        yield driver
    finally:
        driver.close()


def plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Without Hermes' bookkeeping keys (``_db_persisted``), which are not sent."""
    return [{k: v for k, v in m.items() if not k.startswith("_")} for m in messages]


def chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content"))) for m in messages)


# --- the test -----------------------------------------------------------------------------------


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the store is not the point
def test_hermes_runs_on_the_queue_without_waiting_and_adopts_the_compaction_later(
    hermes: Hermes, llm: FakeOpenAI, api_url: str
) -> None:
    # Hermes' plugin loader found the engine by its entry point and the config selected it.
    assert hermes.hello["is_context_engine"] and hermes.hello["engine_name"] == NAME
    assert hermes.hello["engine_class"] == "api.hermes.engine.CompactionQueueEngine"
    assert hermes.hello["context_length"] == WINDOW
    session_id = "hermes-" + hermes.hello["session_id"]

    # Six long answers fill the window to about 60,000 tokens; the seventh request carries
    # them all, the service sees its real usage and queues a compaction.
    llm.script(AGENT_MODEL, *[Reply.ok(big_reply(i)) for i in range(6)])
    for i in range(7):
        turn = hermes.turn(f"step {i}: show me file_{i}.py")
    with CompactionClient(api_url) as queue:
        session = queue.get_session(session_id)
        assert session.tokens >= session.threshold_tokens, session
        assert session.last_job is not None and session.last_job.trigger == "hygiene"
        job_id = session.last_job.id
        assert turn.status["open_job_id"] == job_id and turn.status["compression_count"] == 0

        # The job waits on its summarizer; the agent goes on, a turn at a time, unblocked.
        for i in range(7, 9):
            turn = hermes.turn(f"step {i}: meanwhile, a short question")
            assert turn.seconds < SUMMARY_DELAY_S / 2, turn.seconds
            assert turn.status["compression_count"] == 0
        assert not queue.get_job(job_id).finished  # the agent never waited for it
        uncompacted = len(turn.messages)

        job = queue.wait_for_job(job_id, timeout_s=120, poll_interval_s=0.2)
        assert job.status == "succeeded", job
        assert job.llm_ms is not None and job.llm_ms >= SUMMARY_DELAY_S * 1000 * 0.9

        # The next turn picks the compacted transcript up before its request.
        before = len(agent_requests(llm))
        turn = hermes.turn("step 9: where were we?")
        assert turn.status["compression_count"] == 1 and turn.status["open_job_id"] is None
        # In its older mode Hermes starts a new session id here; the service's stays the same.
        assert turn.status["queue_session_id"] == session_id
        # What the model got on that turn, beside what it got on the turn before (the
        # summarizer's request shares the server and may land between them: not counted).
        sent = agent_requests(llm)[before].messages
        assert any(SUMMARY.splitlines()[1] in str(m.get("content")) for m in sent), sent
        assert len(turn.messages) < uncompacted
        assert chars(sent) < chars(agent_requests(llm)[before - 1].messages) / 2
        assert ERROR_LINE not in json.dumps(sent)

        # The model recalls the error line: Hermes runs the engine's tools, the service answers.
        hit = queue.search_archive(session_id, "KeyError: 'session_id'").hits
        assert hit is not None and len(hit) == 1
        llm.script(
            AGENT_MODEL,
            Reply.calls(("call_1", "recall", {"query": "KeyError: 'session_id'"})),
            Reply.calls(("call_2", "recall_message", {"seq": hit[0].seq, "before": 0, "after": 0})),
            Reply.ok("It was the KeyError in views.py, line 41."),
        )
        before = len(agent_requests(llm))
        turn = hermes.turn("step 10: what was that error, exactly?")
        recalled = [r.messages[-1] for r in agent_requests(llm)[before + 1 :]]
        offered = [t["function"]["name"] for t in agent_requests(llm)[before].body["tools"]]
        assert offered == ["recall", "recall_message", "compaction_history"]
        assert [m["role"] for m in recalled] == ["tool", "tool"]
        assert "KeyError" in recalled[0]["content"]  # the hit's snippet
        # The message in full (Hermes cuts long tool output after its head: the line is first).
        assert (
            f'"seq": {hit[0].seq}' in recalled[1]["content"]
            and ERROR_LINE in recalled[1]["content"]
        )
        assert turn.messages[-1]["content"] == "It was the KeyError in views.py, line 41."

        # After it, turns are appended again (no rewrite): the service holds what the agent has.
        turn = hermes.turn("step 11: thanks")
        held = queue.get_messages(session_id)
        assert held.messages == plain(turn.messages[:-1])  # its last answer goes with the next
        assert queue.get_session(session_id).compaction_count == 1
    assert hermes.engine_log().count("written whole") == 1  # the first write only


def test_the_service_down_never_stops_the_agent(
    hermes_python: Path, plugin_dir: Path, llm: FakeOpenAI, tmp_path: Path
) -> None:
    """No service at the configured URL: every turn still gets its answer, promptly."""
    env = driver_env(plugin_dir, f"http://127.0.0.1:{free_port()}")
    driver = Hermes(hermes_python, home=hermes_home(tmp_path, llm), env=env, llm=llm)
    try:
        assert driver.hello["engine_name"] == NAME
        for i in range(3):
            turn = driver.turn(f"question {i}")
            assert turn.messages[-1]["content"] == "Noted." and turn.seconds < 5, turn.seconds
        warnings = [line for line in driver.engine_log().splitlines() if "WARNING" in line]
        assert len(warnings) == 1 and "no answer" in warnings[0], warnings  # once per pause
    finally:
        with contextlib.suppress(Exception):
            driver.close()
