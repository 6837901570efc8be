"""The archive, recall, revert, erase and session-list routes on the real app (SQLite and
PostgreSQL, a private Redis), and recall after a real compaction by the worker's own code."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest

from tests.api_support import Api, dump
from tests.store_factories import compaction_of, make_transcript
from tests.support.worker_fixtures import (
    private_redis,
    rt,
    sample_messages,
    seed_job,
    seed_session,
    settings,
)
from worker import keys
from worker.compaction import run_job
from worker.compressor.markers import SUMMARY_TAG
from worker.cooldowns import endpoint_id, record_failure
from worker.runtime import Runtime
from worker.store import sessions
from worker.store.archive import search_archive
from worker.store.db import Database
from worker.store.jobs import claim_job, write_back
from worker.store.search_text import parse_query

pytestmark = pytest.mark.integration
__all__ = ["private_redis", "rt", "settings"]  # fixtures, imported for pytest

ERROR_LINE = 'psycopg.errors.UniqueViolation: duplicate key value violates "uq_orders_ref"'


def put(api: Api, session_id: str, messages: list[dict[str, Any]], **kw: Any) -> httpx.Response:
    body = {"model": "gpt-4", "context_length": 100_000, "messages": messages}
    return api.client.put(f"/v1/sessions/{session_id}", json=body, **kw)


def archived_session(api: Api, session_id: str = "s1") -> list[dict[str, Any]]:
    """A transcript with a tool call and an error in it, archived by a second snapshot."""
    call = {
        "id": "c9",
        "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps({"command": "make migrate"})},
    }
    messages = [
        *make_transcript(3),
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c9", "content": json.dumps({"output": ERROR_LINE})},
        {"role": "assistant", "content": "The reference is duplicated."},
    ]
    assert put(api, session_id, messages).status_code == 200
    assert put(api, session_id, [{"role": "user", "content": "next"}]).status_code == 200
    return messages


def compacted(api: Api, session_id: str) -> str:
    """A manual compaction, run here through the store as a worker would; its job id."""
    job_id = api.client.post(f"/v1/sessions/{session_id}/compact", json={"force": True}).json()
    db = Database(api.settings.database_url)
    try:
        claim = claim_job(db, job_id=job_id["job_id"])
        assert claim is not None
        write_back(db, job_id=claim.job_id, attempt=claim.attempt, result=compaction_of(claim))
    finally:
        db.dispose()
    return str(job_id["job_id"])


# --- archive and search ----------------------------------------------------------------------


def test_search_answers_hits_with_seq_role_tool_and_a_marked_snippet(api: Api) -> None:
    archived_session(api)
    r = api.client.get("/v1/sessions/s1/archive", params={"q": 'violates "uq_orders_ref"'})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["messages"] == [] and body["next_cursor"] is None
    [hit] = body["hits"]
    assert (hit["seq"], hit["role"], hit["tool_name"], hit["generation"]) == (
        9,
        "tool",
        "terminal",
        0,
    )
    assert "[[violates]]" in hit["snippet"] and "[[uq_orders_ref]]" in hit["snippet"]
    call = api.client.get("/v1/sessions/s1/archive", params={"q": "make migrate"}).json()
    assert [(h["seq"], h["role"], h["tool_name"]) for h in call["hits"]] == [
        (8, "assistant", "terminal")
    ]


def test_search_and_pages_follow_their_cursors(api: Api) -> None:
    messages = archived_session(api)
    hits, cursor = [], None
    while True:
        params = {"q": "word1", "limit": 2} | ({"cursor": cursor} if cursor else {})
        body = api.client.get("/v1/sessions/s1/archive", params=params).json()
        hits += [h["seq"] for h in body["hits"]]
        if (cursor := body["next_cursor"]) is None:
            break
    assert hits == [7, 6, 5, 4, 3, 2]  # newest first: every question and answer
    page, cursor, got = None, None, []
    while page is None or cursor is not None:
        page = api.client.get("/v1/sessions/s1/archive", params={"limit": 4, "cursor": cursor})
        got += [m["message"] for m in page.json()["messages"]]
        cursor = page.json()["next_cursor"]
    assert got == messages  # oldest first, all of them


def test_filters_by_job_and_generation(api: Api) -> None:
    put(api, "s1", make_transcript(6))
    job = compacted(api, "s1")
    r = api.client.get("/v1/sessions/s1/archive", params={"job_id": job, "limit": 500})
    assert [m["message"] for m in r.json()["messages"]] == make_transcript(6)
    none = api.client.get("/v1/sessions/s1/archive", params={"generation": 1})
    assert none.json()["messages"] == []
    hits = api.client.get("/v1/sessions/s1/archive", params={"q": "question 2:", "job_id": job})
    assert [h["archived_by_job"] for h in hits.json()["hits"]] == [job]


def test_bad_archive_parameters_are_422_problems(api: Api) -> None:
    archived_session(api)
    for params in (
        {"limit": 501},
        {"cursor": "-3"},
        {"cursor": "abc"},
        {"q": ""},
        {"q": "x" * 1001},
        {"generation": -1},
        {"q": "a\x00b"},  # no database stores a NUL in a pattern
    ):
        r = api.client.get("/v1/sessions/s1/archive", params=params)
        assert r.status_code == 422, (params, r.text)
        assert r.headers["content-type"] == "application/problem+json"
    assert api.client.get("/v1/sessions/ghost/archive", params={"q": "x"}).status_code == 404


def test_a_hit_expands_to_the_original_messages_around_it(api: Api) -> None:
    messages = archived_session(api)
    r = api.client.get("/v1/sessions/s1/archive/9", params={"before": 1, "after": 0})
    assert r.status_code == 200, r.text
    assert [(m["seq"], m["message"]) for m in r.json()["messages"]] == [
        (8, messages[7]), (9, messages[8]),
    ]  # fmt: skip
    assert api.client.get("/v1/sessions/s1/archive/11").status_code == 404  # active
    assert api.client.get("/v1/sessions/s1/archive/9", params={"after": 21}).status_code == 422


# --- recall, as a gateway runs it -------------------------------------------------------------


def run_tool_call(api: Api, session_id: str, name: str, arguments: str) -> Any:
    """What a gateway does with the model's tool call: check it against the definition the
    service serves, then ask the route the definition names."""
    tools = {t["function"]["name"]: t for t in api.client.get("/v1/tools").json()["tools"]}
    args = json.loads(arguments)
    jsonschema.validate(args, tools[name]["function"]["parameters"])
    if name == "recall":
        params = {"q": args["query"], "limit": args.get("limit", 5)}
        return api.client.get(f"/v1/sessions/{session_id}/archive", params=params).json()["hits"]
    params = {k: args[k] for k in ("before", "after") if k in args}
    path = f"/v1/sessions/{session_id}/archive/{args['seq']}"
    return api.client.get(path, params=params).json()["messages"]


def test_the_recall_tools_reach_an_archived_error_line(api: Api) -> None:
    archived_session(api)
    tools = api.client.get("/v1/tools").json()["tools"]
    assert [t["function"]["name"] for t in tools] == [
        "recall",
        "recall_message",
        "compaction_history",
    ]
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    hits = run_tool_call(api, "s1", "recall", json.dumps({"query": "UniqueViolation", "limit": 3}))
    assert [h["seq"] for h in hits] == [9]
    whole = run_tool_call(
        api, "s1", "recall_message", json.dumps({"seq": 9, "before": 1, "after": 0})
    )
    assert json.loads(whole[-1]["message"]["content"])["output"] == ERROR_LINE
    with pytest.raises(jsonschema.ValidationError):
        run_tool_call(api, "s1", "recall", json.dumps({"query": "x", "limit": 50}))


def test_after_a_real_compaction_the_summarized_details_are_recalled(rt: Runtime) -> None:
    before = sample_messages()
    session_id = seed_session(rt.db, messages=before)
    job_id = seed_job(rt.db, session_id)
    assert run_job(rt, job_id, worker="test")["status"] == "succeeded"
    after = [m.message for m in sessions.active_messages(rt.db, session_id=session_id)]
    summary = next(m for m in after if SUMMARY_TAG in str(m.get("content")))
    assert "recall" in str(summary["content"])  # it says the exact turns can be recalled
    archived = sessions.archived_messages(rt.db, session_id=session_id)
    # A line of tool output that the compacted transcript no longer holds word for word.
    line, seq = next(
        (line.strip(), m.seq)
        for m in archived
        if m.message["role"] == "tool"
        for line in str(m.message["content"]).splitlines()
        if len(line.strip()) > 30 and '"' not in line and line.strip() not in json.dumps(after)
    )
    page = search_archive(rt.db, session_id=session_id, query=parse_query(f'"{line}"'))
    assert seq in [h.seq for h in page.hits]


# --- revert, delete, list --------------------------------------------------------------------


def test_revert_over_http(api: Api) -> None:
    put(api, "s1", make_transcript(6))
    job = compacted(api, "s1")
    version = api.client.get("/v1/sessions/s1").json()["version"]
    stale = api.client.post("/v1/sessions/s1/revert", json={"job_id": job},
                            headers={"If-Match": f'"{version - 1}"'})  # fmt: skip
    assert stale.status_code == 412 and stale.json()["current_version"] == version
    r = api.client.post("/v1/sessions/s1/revert", json={"job_id": job},
                        headers={"If-Match": f'"{version}"'})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json() == {"session_id": "s1", "job_id": job, "version": version + 1,
                        "restored": 13, "archived": 4}  # fmt: skip
    assert r.headers["etag"] == f'"{version + 1}"'
    messages = api.client.get("/v1/sessions/s1/messages").json()
    assert messages == {
        "version": version + 1,
        "format": "openai.chat",
        "messages": make_transcript(6),
    }
    again = api.client.post("/v1/sessions/s1/revert", json={"job_id": job})
    assert again.status_code == 409 and again.json()["job_id"] == job
    assert "already reverted" in again.json()["detail"]
    missing = api.client.post("/v1/sessions/s1/revert", json={"job_id": "nope"})
    assert missing.status_code == 404
    assert api.client.post("/v1/sessions/s1/revert", json={}).status_code == 422


def test_revert_and_delete_wait_for_an_open_job(api: Api) -> None:
    put(api, "s1", make_transcript(6))
    job = compacted(api, "s1")
    open_job = api.client.post("/v1/sessions/s1/compact", json={"force": True}).json()["job_id"]
    for r in (
        api.client.post("/v1/sessions/s1/revert", json={"job_id": job}),
        api.client.delete("/v1/sessions/s1"),
    ):
        assert r.status_code == 409 and r.json()["job_id"] == open_job, r.text


def test_delete_erases_the_session_and_frees_its_id(api: Api) -> None:
    archived_session(api, "keep")
    empty = dump(api.settings.database_url)
    archived_session(api, "s1")
    compacted(api, "s1")
    record_failure(
        api.broker, settings=api.settings, session_id="s1",
        endpoint=endpoint_id(api.settings), error_class="server_error",
    )  # fmt: skip
    assert api.broker.exists(keys.session_cooldown("s1"))
    assert api.client.delete("/v1/sessions/s1", headers={"If-Match": '"1"'}).status_code == 412
    r = api.client.delete("/v1/sessions/s1")
    assert r.status_code == 204 and r.content == b""
    assert dump(api.settings.database_url) == empty  # every table as it was before s1
    assert not api.broker.exists(keys.session_cooldown("s1"))  # nor a cooldown in Redis
    assert api.client.get("/v1/sessions/s1").status_code == 404
    assert api.client.delete("/v1/sessions/s1").status_code == 404
    assert put(api, "s1", make_transcript(1)).json()["version"] == 1


def test_operators_list_sessions_with_filters_and_a_cursor(api: Api) -> None:
    for i in range(5):
        body = {"model": f"m{i % 2}", "context_length": 1000, "messages": make_transcript(1),
                "prompt_tokens": 100 * (i + 1)}  # fmt: skip
        assert api.client.put(f"/v1/sessions/s{i}", json=body).status_code == 200
    first = api.client.get("/v1/sessions", params={"limit": 2}).json()
    assert [s["session_id"] for s in first["sessions"]] == ["s0", "s1"]
    rest = api.client.get("/v1/sessions", params={"cursor": first["next_cursor"]}).json()
    assert [s["session_id"] for s in rest["sessions"]] == ["s2", "s3", "s4"]
    assert rest["next_cursor"] is None
    busy = api.client.get("/v1/sessions", params={"min_utilization": 0.3, "model": "m0"}).json()
    assert [(s["session_id"], s["utilization"]) for s in busy["sessions"]] == [
        ("s2", 0.3), ("s4", 0.5),
    ]  # fmt: skip
    idle = api.client.get("/v1/sessions", params={"idle_since": "2020-01-01T00:00:00Z"})
    assert idle.json()["sessions"] == []
    naive = api.client.get("/v1/sessions", params={"idle_since": "2020-01-01T00:00:00"})
    assert naive.status_code == 422 and "time zone" in naive.json()["detail"]
    assert api.client.get("/v1/sessions", params={"min_compactions": 1}).json()["sessions"] == []


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v1/sessions", {"min_compactions": str(2**63)}),
        ("/v1/sessions", {"min_compactions": str(2**31)}),  # past PostgreSQL's INTEGER
        ("/v1/sessions/s1/archive", {"generation": str(2**63)}),
        ("/v1/sessions/s1/archive", {"generation": str(2**31)}),
        ("/v1/sessions/s1/archive", {"cursor": "9" * 19}),
        ("/v1/sessions/s1/archive", {"q": "x", "cursor": str(2**63)}),
        (f"/v1/sessions/s1/archive/{2**63}", {}),
        (f"/v1/sessions/s1/archive/{10**40}", {}),
    ],
)
def test_an_integer_past_what_the_database_holds_is_a_422(
    api: Api, path: str, params: dict[str, str]
) -> None:
    archived_session(api)
    r = api.client.get(path, params=params)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["detail"]


def test_the_largest_integers_the_database_holds_are_answered(api: Api) -> None:
    archived_session(api)
    assert (
        api.client.get("/v1/sessions", params={"min_compactions": 2**31 - 1}).json()["sessions"]
        == []
    )
    assert api.client.get(f"/v1/sessions/s1/archive/{2**63 - 1}").status_code == 404
    page = api.client.get("/v1/sessions/s1/archive", params={"generation": 2**31 - 1})
    assert page.status_code == 200 and page.json()["messages"] == []
    assert (
        api.client.get("/v1/sessions/s1/archive", params={"cursor": 2**63 - 1}).status_code == 200
    )


def test_a_search_limit_past_its_hits_is_taken_as_the_most_a_page_holds(api: Api) -> None:
    archived_session(api)
    r = api.client.get("/v1/sessions/s1/archive", params={"q": "question", "limit": 499})
    assert r.status_code == 200, r.text
    assert 0 < len(r.json()["hits"]) <= 100
