"""The Hermes context engine's own rules against the real app (in-process, private Redis),
jobs run by the real worker code in this process: what it writes, when it adopts, what wins
when the agent and the service disagree. Hermes' loop itself drives the engine in
test_hermes_engine.py; here the engine's methods are called as that loop calls them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from api.client import NO_RETRIES, CompactionClient, RetryPolicy
from api.hermes.engine import EngineConfig, QueueEngine
from api.tools import TOOLS
from tests.api_support import Api
from tests.support.transports import Wire, WireTransport
from tests.support.worker_fixtures import close_runtime, runtime_for
from worker.compaction import run_job

pytestmark = pytest.mark.integration

WINDOW = 2_000  # the service's threshold is 1,700 tokens
FILLER = " ".join(f"word{i}" for i in range(50))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "reasoning": None, "finish_reason": "stop"}


def history(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out += [user(f"question {i}"), assistant(f"answer {i}: {FILLER}")]
    return out


def long_history() -> list[dict[str, Any]]:
    """About 1,500 tokens by our count; its usage is reported past the threshold."""
    return [*history(14), user("and the last question?")]


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def client(api: Api, wire: Wire) -> Iterator[CompactionClient]:
    transport = WireTransport(api.client._transport, wire)
    with CompactionClient("http://testserver", transport=transport, retry=NO_RETRIES) as c:
        yield c


def new_engine(client: CompactionClient, hermes_session_id: str = "h1") -> QueueEngine:
    engine = QueueEngine(EngineConfig(pause_after_failure_s=60), client=client)
    engine.update_model("gpt-4", WINDOW)
    engine.on_session_start(hermes_session_id, model="gpt-4")
    return engine


def answered(engine: QueueEngine, messages: list[dict[str, Any]], prompt_tokens: int) -> None:
    """One model call as Hermes makes it: the request's transcript, then its usage."""
    engine.stash(messages)
    engine.update_from_response({"prompt_tokens": prompt_tokens, "completion_tokens": 5})
    engine.flush()


def run_open_job(api: Api, engine: QueueEngine) -> str:
    job_id = engine.get_status()["open_job_id"]
    assert job_id is not None
    rt = runtime_for(api.settings)
    try:
        assert run_job(rt, job_id, worker="test")["status"] == "succeeded"
    finally:
        close_runtime(rt)
    return str(job_id)


def test_turns_are_appended_with_their_real_usage_after_one_first_snapshot(
    client: CompactionClient, wire: Wire
) -> None:
    engine = new_engine(client)
    messages = history(1)
    answered(engine, messages, 300)
    for i in range(2, 4):
        messages = [*messages, user(f"question {i}")]
        answered(engine, messages, 300 * i)
        messages = [*messages, assistant(f"answer {i}")]
    assert [e.method for e in wire.exchanges if e.method != "GET"] == ["PUT", "POST", "POST"]
    session = client.get_session("hermes-h1")
    assert session.tokens == 900 and session.version == 3  # the provider's count, as reported
    assert engine.threshold_tokens == session.threshold_tokens == 1_700
    assert client.get_messages("hermes-h1").messages == messages[:-1]


def test_the_compacted_transcript_is_adopted_once_its_job_succeeded(
    api: Api, client: CompactionClient, wire: Wire
) -> None:
    engine = new_engine(client)
    messages = long_history()
    answered(engine, messages, 2_100)  # over the threshold: the service queues a job
    assert engine.get_status()["open_job_id"] is not None
    assert not engine.should_compress(2_100)  # queued: nothing to adopt, nothing to wait for
    assert engine.compress(messages) == messages

    run_open_job(api, engine)
    assert engine.should_compress(0)
    compacted = engine.compress(messages)
    held = client.get_messages("hermes-h1")
    assert compacted == held.messages and len(compacted) < len(messages)
    assert compacted[-1] == messages[-1]  # the latest user message stays, verbatim
    assert engine.compression_count == 1 and engine.get_status()["queue_version"] == held.version
    assert not engine.should_compress(0)

    puts = sum(e.method == "PUT" for e in wire.exchanges)
    answered(engine, [*compacted, assistant("ok")], 600)  # goes on from the compacted one
    assert sum(e.method == "PUT" for e in wire.exchanges) == puts  # appended, not rewritten
    assert client.get_messages("hermes-h1").messages == [*compacted, assistant("ok")]


def test_turns_sent_after_a_compaction_the_engine_has_not_seen_carry_no_stale_usage(
    api: Api, client: CompactionClient
) -> None:
    engine = new_engine(client)
    messages = long_history()
    answered(engine, messages, 2_100)
    run_open_job(api, engine)  # written back while the agent carries on
    messages = [*messages, assistant("done"), user("next")]
    answered(engine, messages, 2_200)  # If-Match is stale: sent again, without the 2,200
    session = client.get_session("hermes-h1")
    assert session.tokens < 1_700, session  # the service's count of the compacted transcript
    compacted = engine.compress(messages)  # adopted without asking about the job
    assert compacted[-2:] == [assistant("done"), user("next")]
    assert compacted == client.get_messages("hermes-h1").messages


def test_a_rewritten_history_is_written_whole_and_the_agents_version_wins(
    api: Api, client: CompactionClient, wire: Wire
) -> None:
    engine = new_engine(client)
    messages = long_history()
    answered(engine, messages, 2_100)
    run_open_job(api, engine)  # the service holds a compaction the agent never adopted
    undone = history(3)  # the user undid the last turns
    engine.observe(undone, prompt_tokens=None)
    assert wire.exchanges[-1].method == "PUT" and wire.exchanges[-1].status == 200
    assert client.get_messages("hermes-h1").messages == undone


def test_a_new_engine_continues_a_session_the_service_holds(
    api: Api, client: CompactionClient, wire: Wire
) -> None:
    first = new_engine(client)
    answered(first, history(2), 300)
    later = new_engine(client)  # a resumed conversation: same Hermes session id
    answered(later, [*history(2), user("again")], 320)
    assert [e.method for e in wire.exchanges if e.method != "GET"] == ["PUT", "POST"]
    other = new_engine(client)
    answered(other, [user("something else")], 10)  # not a continuation: written whole
    assert wire.exchanges[-1].method == "PUT"
    assert client.get_messages("hermes-h1").messages == [user("something else")]


def test_a_manual_compress_queues_a_job_and_returns_at_once(
    api: Api, client: CompactionClient
) -> None:
    engine = new_engine(client)
    messages = long_history()
    answered(engine, messages, 300)
    assert engine.compress(messages, focus_topic="the answers", force=True) == messages
    job = client.get_job(engine.get_status()["open_job_id"])
    assert (job.trigger, job.focus_topic, job.status) == ("manual", "the answers", "queued")
    run_open_job(api, engine)
    assert engine.should_compress(0) and engine.compress(messages) != messages


def test_a_rotation_passes_the_old_history_which_never_replaces_the_service_copy(
    api: Api, client: CompactionClient, wire: Wire
) -> None:
    engine = new_engine(client)
    messages = long_history()
    answered(engine, messages, 2_100)
    run_open_job(api, engine)
    compacted = engine.compress(messages)
    writes = len([e for e in wire.exchanges if e.method != "GET"])
    # Hermes, rotating its session id around the compaction, ends the old one with the
    # history from before it, then starts the new id.
    engine.on_session_end("h1", messages)
    engine.on_session_start("h2", boundary_reason="compression", old_session_id="h1")
    assert len([e for e in wire.exchanges if e.method != "GET"]) == writes
    assert engine.get_status()["queue_session_id"] == "hermes-h1"
    engine.on_session_end("h2", [*compacted, assistant("bye")])  # a real end: the last turns
    assert client.get_messages("hermes-h1").messages == [*compacted, assistant("bye")]


def test_an_unreachable_service_pauses_the_engine_and_the_agent_goes_on(
    api: Api, wire: Wire
) -> None:
    transport = WireTransport(api.client._transport, wire)
    policy = RetryPolicy(attempts=2, backoff_s=0.0, max_wait_s=0.0)
    with CompactionClient("http://testserver", transport=transport, retry=policy) as client:
        engine = new_engine(client)
        wire.lose = 1_000  # every answer is lost
        messages = history(2)
        answered(engine, messages, 300)  # no exception: logged, paused
        tried = len(wire.exchanges)
        assert tried == 2
        answered(engine, [*messages, user("more")], 320)
        assert not engine.should_compress(10_000)
        assert engine.compress(messages) == messages
        assert len(wire.exchanges) == tried  # paused: nothing was tried again


ERROR_LINE = "E   KeyError: 'session_id' in src/app/views.py:41"


def test_the_recall_tools_are_the_services_and_find_an_archived_error_line(
    api: Api, client: CompactionClient
) -> None:
    engine = new_engine(client)
    assert engine.get_tool_schemas() == [tool["function"] for tool in TOOLS]
    messages = long_history()
    messages[3] = assistant(f"the tests fail:\n{ERROR_LINE}")
    answered(engine, messages, 2_100)
    run_open_job(api, engine)
    compacted = engine.compress(messages)
    assert ERROR_LINE not in json.dumps(compacted)  # summarized away ...

    found = json.loads(engine.handle_tool_call("recall", {"query": "KeyError: 'session_id'"}))
    assert [h["role"] for h in found["hits"]] == ["assistant"] and not found["more"]
    assert "KeyError" in found["hits"][0]["snippet"]
    seq = found["hits"][0]["seq"]
    read = json.loads(engine.handle_tool_call("recall_message", {"seq": seq, "after": 0}))
    assert read["messages"][-1] == {"seq": seq, "message": messages[3]}  # ... and recalled whole

    bad: list[tuple[str, dict[str, Any]]] = [
        ("recall", {}),
        ("recall", {"query": "x", "limit": "many"}),
        ("recall_message", {"seq": 10_000}),
        ("forget", {"query": "x"}),
    ]
    for name, args in bad:
        assert "error" in json.loads(engine.handle_tool_call(name, args)), (name, args)


def test_recall_before_anything_was_written_says_so(client: CompactionClient) -> None:
    engine = new_engine(client)
    answer = json.loads(engine.handle_tool_call("recall", {"query": "x"}))
    assert "nothing of this conversation" in answer["error"]
