"""Sessions in Anthropic Messages and OpenAI Responses form, over HTTP, compacted by the
worker's own code (SQLite and PostgreSQL, a private Redis).

A real agent session (tests/data/real-transcripts) is written in each format as a gateway of
that provider holds it (tests/support/wire_formats.py); the session keeps its format, appends
use it, ``GET …/messages`` answers in it, and a compaction writes back a transcript the
provider takes, with every opaque block (thinking signatures, encrypted reasoning) as it came.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest

from tests.api_support import Api
from tests.support.wire_formats import (
    anthropic_violations,
    blocks_with_opaque,
    responses_violations,
    to_anthropic,
    to_responses,
)
from tests.support.worker_fixtures import MODEL, close_runtime, runtime_for, sample_messages
from worker.compaction import run_job
from worker.compressor.formats import read_rows
from worker.compressor.markers import is_summary
from worker.compressor.messages import parse_messages
from worker.store import sessions
from worker.store.db import Database

pytestmark = pytest.mark.integration

WINDOW = 200_000  # over the sample: compactions here are manual (force)


def anthropic_session() -> tuple[Any, list[dict[str, Any]]]:
    return to_anthropic(parse_messages(sample_messages()), seed=7)


def responses_session() -> list[dict[str, Any]]:
    return to_responses(parse_messages(sample_messages()), seed=7)


def put(api: Api, session_id: str, body: dict[str, Any]) -> httpx.Response:
    return api.client.put(
        f"/v1/sessions/{session_id}", json={"model": MODEL, "context_length": WINDOW, **body}
    )


def compact_now(api: Api, session_id: str) -> dict[str, Any]:
    """A manual compaction, run by the worker's own code on the API's database."""
    r = api.client.post(
        f"/v1/sessions/{session_id}/compact", json={"force": True, "target_tokens": 6_000}
    )
    assert r.status_code == 202, r.text
    rt = runtime_for(api.settings)
    try:
        return run_job(rt, r.json()["job_id"], worker="test")
    finally:
        close_runtime(rt)


def test_an_anthropic_session_is_kept_and_answered_in_its_format(api: Api) -> None:
    system, turns = anthropic_session()
    sent = copy.deepcopy((system, turns))
    r = put(api, "a1", {"format": "anthropic.messages", "system": system, "messages": turns})
    assert r.status_code in (200, 202), r.text
    got = api.client.get("/v1/sessions/a1/messages").json()
    assert got == {
        "version": 1,
        "format": "anthropic.messages",
        "messages": sent[1],
        "system": sent[0],
    }
    more = [
        {"role": "assistant", "content": [{"type": "text", "text": "Done: the fix is in."}]},
        {"role": "user", "content": "Thanks. Now write the changelog entry."},
    ]
    if turns[-1]["role"] == "assistant":
        more = more[1:]
    r = api.client.post("/v1/sessions/a1/messages", json={"messages": more})
    assert r.status_code in (200, 202), r.text
    got = api.client.get("/v1/sessions/a1/messages").json()
    assert got["messages"] == sent[1] + more and got["system"] == sent[0]


def test_a_compacted_anthropic_session_is_one_the_api_takes(api: Api) -> None:
    system, turns = anthropic_session()
    sent_opaque = set(blocks_with_opaque([system, turns]))
    assert sent_opaque, "the sample carries thinking signatures"
    assert put(
        api, "a2", {"format": "anthropic.messages", "system": system, "messages": turns}
    ).is_success
    outcome = compact_now(api, "a2")
    assert outcome["status"] == "succeeded", outcome
    got = api.client.get("/v1/sessions/a2/messages").json()
    assert got["format"] == "anthropic.messages"
    assert anthropic_violations(got["system"], got["messages"]) == []
    assert set(blocks_with_opaque([got["system"], got["messages"]])) <= sent_opaque
    assert got["messages"][-1] == turns[-1]  # the newest turn as it came
    records = read_rows("anthropic.messages", [{"system": got["system"]}, *got["messages"]])
    assert any(is_summary(m) for m in records)
    assert len(got["messages"]) < len(turns)
    # The originals are archived, in their own format.
    db = Database(api.settings.database_url)
    try:
        archived = [m.message for m in sessions.archived_messages(db, session_id="a2")]
    finally:
        db.dispose()
    assert {"system": system} in archived and turns[1] in archived


def test_a_compacted_responses_session_pairs_every_call_and_keeps_its_reasoning(api: Api) -> None:
    items = responses_session()
    sent_opaque = set(blocks_with_opaque(items))
    assert put(api, "r1", {"format": "openai.responses", "messages": items}).is_success
    got = api.client.get("/v1/sessions/r1/messages").json()
    assert got == {"version": 1, "format": "openai.responses", "messages": items}
    outcome = compact_now(api, "r1")
    assert outcome["status"] == "succeeded", outcome
    got = api.client.get("/v1/sessions/r1/messages").json()
    assert responses_violations(got["messages"]) == []
    assert set(blocks_with_opaque(got["messages"])) <= sent_opaque
    assert got["messages"][-1] == items[-1]
    assert len(got["messages"]) < len(items)


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            {
                "format": "anthropic.messages",
                "messages": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"text": "a"}]},
                ],
            },
            "messages[1].content[0]: a block must be an object with a string type",
        ),
        (
            {
                "format": "openai.responses",
                "messages": [{"type": "function_call_output", "output": "x"}],
            },
            "messages[0].call_id: must be a non-empty string",
        ),
        (
            {"messages": [{"role": "user", "content": "q"}], "system": "be brief"},
            "system is given apart only in anthropic.messages",
        ),
    ],
)
def test_a_malformed_block_is_a_422_naming_it_and_nothing_is_stored(
    api: Api, body: dict[str, Any], detail: str
) -> None:
    r = put(api, "bad", body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == detail
    assert api.client.get("/v1/sessions/bad").status_code == 404


def test_an_unknown_format_is_refused_by_name(api: Api) -> None:
    r = put(api, "bad", {"format": "anthropic", "messages": [{"role": "user", "content": "q"}]})
    assert r.status_code == 422 and "format" in json.dumps(r.json())


def test_an_append_is_read_in_the_sessions_format(api: Api) -> None:
    """A chat-form tool message appended to an Anthropic session is refused, whole."""
    _, turns = anthropic_session()
    assert put(api, "a3", {"format": "anthropic.messages", "messages": turns}).is_success
    before = api.client.get("/v1/sessions/a3/messages").json()
    r = api.client.post(
        "/v1/sessions/a3/messages",
        json={"messages": [{"role": "tool", "tool_call_id": "x", "content": "ok"}]},
    )
    assert r.status_code == 422 and r.json()["detail"].startswith("messages[0].role"), r.text
    assert api.client.get("/v1/sessions/a3/messages").json() == before


def test_a_lone_surrogate_in_an_anthropic_block_is_a_422_and_nothing_is_stored(api: Api) -> None:
    """A JSON escape of half a surrogate pair (a JavaScript gateway's cut emoji): no database
    stores it, so it is refused as in OpenAI Chat form, by where it is."""
    turn = {"role": "user", "content": [{"type": "text", "text": "a<cut>"}]}
    doc = {"model": MODEL, "context_length": WINDOW, "format": "anthropic.messages"}
    body = json.dumps({**doc, "messages": [turn]}).replace("<cut>", "\\ud83d")
    r = api.client.put(
        "/v1/sessions/lone", content=body, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("messages[0]: content[0].text holds a lone surrogate")
    assert api.client.get("/v1/sessions/lone").status_code == 404
