"""Bad input, limits and auth: problem+json with a detail that names the problem, never a 500,
and nothing stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from api.errors import ERROR_STATUS
from tests.api_support import TOKEN, Api, api_settings, dump, open_api
from tests.store_factories import make_transcript
from worker.compressor import errors as core_errors
from worker.compressor.errors import CompactionError
from worker.store import errors as store_errors
from worker.store.errors import StoreError

pytestmark = pytest.mark.integration

LIMITS = {"max_body_bytes": 40_000, "max_messages_per_request": 30, "max_content_chars": 5_000}


@pytest.fixture
def limited_api(database_url: str, broker_url: str, tmp_path: Path) -> Iterator[Api]:
    """An API with small limits and one stored session ("s1", version 1)."""
    for api in open_api(api_settings(database_url, broker_url, tmp_path, **LIMITS), broker_url):
        body = {"model": "gpt-4", "context_length": 8000, "messages": make_transcript(2)}
        assert api.client.put("/v1/sessions/s1", json=body).status_code == 200
        yield api


def all_subclasses(root: type[Exception]) -> set[type[Exception]]:
    out, todo = set(), [root]
    while todo:
        cls = todo.pop()
        out.add(cls)
        todo.extend(cls.__subclasses__())
    return out


def test_every_store_and_core_error_has_an_http_mapping() -> None:
    assert core_errors and store_errors  # every class is defined (imported) by now
    ours = all_subclasses(StoreError) | all_subclasses(CompactionError)
    assert ours - set(ERROR_STATUS) == set()
    assert all(400 <= status < 600 for status, _ in ERROR_STATUS.values())


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


GOOD = make_transcript(2)
TOOL_WITHOUT_ID = [*GOOD, {"role": "tool", "content": "out"}]
PUT_CASES: list[tuple[str, Any, int, str]] = [
    ("tool without id", {"messages": TOOL_WITHOUT_ID}, 422,
     "messages[5]: a tool message needs a non-empty tool_call_id"),
    ("bad role", {"messages": [GOOD[0], {"role": "robot", "content": "x"}]}, 422,
     "messages[1]: role must be one of system, user, assistant, tool; got 'robot'"),
    ("message not an object", {"messages": [GOOD[0], "hello"]}, 422,
     "messages[1]: a message must be a JSON object, got string"),
    ("messages not a list", {"messages": {"role": "user"}}, 422, "messages: Input should be a valid list"),
    ("unknown part", {"messages": [{"role": "user", "content": [{"type": "audio"}]}]}, 422,
     "messages[0]: content[0] has unsupported part type 'audio'"),
    ("no model", {"model": None}, 422, "model: Input should be a valid string"),
    ("zero window", {"context_length": 0}, 422, "context_length: Input should be greater than 0"),
    ("negative prompt tokens", {"prompt_tokens": -1}, 422, "prompt_tokens: Input should be greater than or equal to 0"),
    ("misspelt field", {"prompt_token": 5}, 422, "prompt_token: Extra inputs are not permitted"),
    ("callback not http", {"callback_url": "ftp://x/y"}, 422, "callback_url: must be an absolute http"),
    ("callback to cloud metadata", {"callback_url": "http://169.254.169.254/latest/meta-data"}, 422,
     "callback_url: 169.254.169.254 is link-local; callbacks only go to a gateway's"),
    ("callback port out of range", {"callback_url": "http://gw:99999/hook"}, 422,
     "callback_url: has an invalid port: Port out of range 0-65535"),
    ("NUL in the model", {"model": "gpt\x00-4"}, 422,
     "model: must not contain control characters (U+0000 at index 3)"),
    ("control character in the callback", {"callback_url": "http://x/\x01"}, 422,
     "callback_url: must not contain control characters (U+0001 at index 9)"),
    ("prompt tokens past any window", {"prompt_tokens": 10**19}, 422,
     "prompt_tokens: Input should be less than or equal to 1000000000"),
    ("too many messages", {"messages": make_transcript(20)}, 413,
     "41 messages in one request; the limit is 30 (COMPACTION_MAX_MESSAGES_PER_REQUEST)"),
    ("one message too long", {"messages": [GOOD[0], {"role": "user", "content": "x" * 5_001}]}, 413,
     "messages[1]: content is 5001 characters; the limit is 5000 (COMPACTION_MAX_CONTENT_CHARS)"),
    ("tool arguments too long", {"messages": [GOOD[0], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "a" * 5_001}}]}]}, 413,
     "messages[1]: content is 5011 characters"),
    # A JSON escape of half a surrogate pair (a JavaScript gateway can send one): not text.
    # Counting it was a 500; stored, it could not be read back.
    ("lone surrogate in a message", {"messages": [GOOD[0], {"role": "user", "content": "ok \ud83d"}]},
     422, "messages[1]: content holds a lone surrogate (U+D83D) at character 3: that is not Unicode"),
    ("lone surrogate in tool arguments", {"messages": [GOOD[0], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}\udc00"}}]}]}, 422,
     "messages[1]: tool_calls[0].function.arguments holds a lone surrogate (U+DC00) at character 2"),
    ("lone surrogate in the model", {"model": "gpt\ud800"}, 422,
     "model: Input should be a valid string, unable to parse raw data as a unicode string"),
    # Stored, it could not be read back (GET .../messages was a 500) nor compacted.
    ("extra field nested 600 deep", {"messages": [GOOD[0], {"role": "user", "content": "x", "meta": nested(600)}]},
     422, "messages[1]: a message may nest objects and arrays at most 64 levels deep"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "change", "status", "detail"), PUT_CASES, ids=[c[0] for c in PUT_CASES]
)
def test_bad_snapshots_are_refused_and_change_nothing(
    limited_api: Api, case: str, change: dict[str, Any], status: int, detail: str
) -> None:
    before = dump(limited_api.settings.database_url)
    body = {"model": "gpt-4", "context_length": 8000, "messages": GOOD} | change
    for session_id in ("s1", "new"):
        r = put_json(limited_api, f"/v1/sessions/{session_id}", body)
        assert r.status_code == status, r.text
        assert r.headers["content-type"] == "application/problem+json"
        problem = r.json()
        assert {"type", "title", "status", "detail"} <= set(problem) and problem["status"] == status
        assert detail in problem["detail"]
    assert dump(limited_api.settings.database_url) == before
    assert limited_api.queued_job_ids() == []


def put_json(api: Api, url: str, body: Any, method: str = "PUT") -> httpx.Response:
    """The body as ASCII JSON: escapes carry what UTF-8 cannot (half a surrogate pair)."""
    return api.client.request(
        method, url, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )


def test_bad_appends_are_refused_and_change_nothing(limited_api: Api) -> None:
    before = dump(limited_api.settings.database_url)
    cases = [
        ({"messages": []}, 422, "messages: List should have at least 1 item"),
        ({"messages": TOOL_WITHOUT_ID[-1:]}, 422, "messages[0]: a tool message needs"),
        ({"messages": GOOD * 7}, 413, "35 messages in one request"),
        ({}, 422, "messages: Field required"),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "\udfff"}]}]},
            422,
            "messages[0]: content[0].text holds a lone surrogate (U+DFFF) at character 0",
        ),
    ]
    for body, status, detail in cases:
        r = put_json(limited_api, "/v1/sessions/s1/messages", body, method="POST")
        assert (r.status_code, detail in r.json()["detail"]) == (status, True), r.text
    assert dump(limited_api.settings.database_url) == before


def test_malformed_requests(limited_api: Api) -> None:
    before = dump(limited_api.settings.database_url)
    client = limited_api.client
    r = client.put(
        "/v1/sessions/s1",
        content=b'{"model": "gpt-4", ',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422 and "JSON decode error" in r.json()["detail"]
    deep = "[" * 5_000 + "]" * 5_000  # past the JSON parser's recursion limit
    r = client.put(
        "/v1/sessions/s1",
        content=f'{{"model": "gpt-4", "context_length": 8000, "messages": {deep}}}'.encode(),
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400 and "nested too deeply to parse" in r.json()["detail"]
    # Past Python's limit on an integer's digits the JSON parser refuses the body (it was a 400
    # no route documented); 4,300 digits are a 422 naming the field and its bound.
    for digits, detail in [
        (4_300, "target_tokens: Input should be less than or equal to 100000000"),
        (5_000, "body: an integer of more than 4300 digits is out of every range"),
    ]:
        r = client.post(
            "/v1/sessions/s1/compact",
            content=f'{{"target_tokens": {"9" * digits}}}'.encode(),
            headers={"content-type": "application/json"},
        )
        assert (r.status_code, r.json()["detail"]) == (422, detail), r.text
    r = client.put(
        "/v1/sessions/s1",
        json={"model": "m", "context_length": 9, "messages": GOOD},
        headers={"If-Match": "yesterday"},
    )
    assert r.status_code == 400 and "If-Match must name one version" in r.json()["detail"]
    r = client.put(
        "/v1/sessions/" + "x" * 256, json={"model": "m", "context_length": 9, "messages": GOOD}
    )
    assert r.status_code == 422 and "session_id" in r.json()["detail"]
    r = client.put("/v1/sessions/s%00x", json={"model": "m", "context_length": 9, "messages": GOOD})
    assert r.status_code == 422 and "session_id: must not contain control" in r.json()["detail"]
    r = client.post("/v1/sessions/s1/compact", json={"focus_topic": "auth\x00"})
    assert r.status_code == 422 and "focus_topic: must not contain control" in r.json()["detail"]
    r = put_json(limited_api, "/v1/sessions/s1/compact", {"focus_topic": "a\ud800"}, "POST")
    # This body is read as Python values, not by pydantic's JSON parser: the job row could not
    # store it (a 500 on both databases).
    assert r.status_code == 422 and (
        "focus_topic: must not contain a lone surrogate (U+D800 at index 1)" in r.json()["detail"]
    )
    r = client.post(
        "/v1/sessions/s1/messages", json={"messages": GOOD[-1:], "prompt_tokens": 2**63}
    )
    assert r.status_code == 422 and "prompt_tokens" in r.json()["detail"]
    r = client.get("/v1/jobs", params={"status": "sleeping"})
    assert r.status_code == 422 and r.json()["detail"].startswith("query.status: Input should be")
    r = client.get("/v1/jobs", params={"limit": 0})
    assert r.status_code == 422 and "limit" in r.json()["detail"]
    r = client.post("/v1/sessions/s1/compact", json={"force": "very"})
    assert r.status_code == 422 and "force" in r.json()["detail"]
    r = client.patch("/v1/sessions/s1", json={})
    assert r.status_code == 405 and r.headers["content-type"] == "application/problem+json"
    assert dump(limited_api.settings.database_url) == before


def test_an_oversized_body_is_refused_by_its_declared_length(limited_api: Api) -> None:
    before = dump(limited_api.settings.database_url)
    body = json.dumps(
        {"model": "gpt-4", "context_length": 8000, "messages": GOOD, "pad": "x" * 50_000}
    )
    r = limited_api.client.put(
        "/v1/sessions/s1", content=body, headers={"content-type": "application/json"}
    )
    assert (
        r.status_code == 413
        and "exceeds 40000 bytes (COMPACTION_MAX_BODY_BYTES)" in r.json()["detail"]
    )
    assert dump(limited_api.settings.database_url) == before


def test_an_oversized_chunked_body_without_length_is_refused(limited_api: Api) -> None:
    before = dump(limited_api.settings.database_url)

    def chunks() -> Iterator[bytes]:
        yield b'{"model": "gpt-4", "context_length": 8000, "messages": ['
        for i in range(100):
            yield json.dumps({"role": "user", "content": f"{i} " + "y" * 500}).encode() + b","
        yield b'{"role": "user", "content": "end"}]}'

    r = limited_api.client.put(
        "/v1/sessions/s1", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.request.headers.get("content-length") is None  # really sent without a length
    assert r.status_code == 413 and "COMPACTION_MAX_BODY_BYTES" in r.json()["detail"]
    assert dump(limited_api.settings.database_url) == before


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
MESSAGE_KEYS = st.sampled_from(
    ["role", "content", "tool_calls", "tool_call_id", "name", "type", "text"]
)
MESSAGES = st.lists(
    st.dictionaries(
        MESSAGE_KEYS, JSON_VALUES | st.sampled_from(["user", "tool", "text"]), max_size=5
    ),
    max_size=5,
)
BODIES = st.fixed_dictionaries(
    {},
    optional={
        "model": JSON_VALUES | st.just("gpt-4"),
        "context_length": JSON_VALUES | st.integers(1, 10_000),
        "messages": JSON_VALUES | MESSAGES,
        "prompt_tokens": JSON_VALUES,
        "callback_url": JSON_VALUES,
    },
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=BODIES | JSON_VALUES)
def test_no_input_makes_a_500(limited_api: Api, body: Any) -> None:
    r = limited_api.client.put("/v1/sessions/fuzz", json=body)
    assert r.status_code in (200, 202, 413, 422), r.text
    if r.status_code >= 400:
        assert r.headers["content-type"] == "application/problem+json" and r.json()["detail"]
    r = limited_api.client.post("/v1/sessions/s1/messages", json=body)
    assert r.status_code in (200, 202, 413, 422), r.text


NUL_REQUESTS = [
    ("PUT", "/v1/sessions/a%00", {"model": "m", "context_length": 9, "messages": GOOD}),
    ("POST", "/v1/sessions/a%00/messages", {"messages": GOOD[-1:]}),
    ("POST", "/v1/sessions/a%00/compact", {}),
    ("GET", "/v1/sessions/a%00", None),
    ("GET", "/v1/sessions/a%00/messages", None),
    ("GET", "/v1/sessions/a%00/archive", None),
    ("GET", "/v1/jobs/a%00", None),
    ("GET", "/v1/jobs?session_id=a%00", None),
    ("GET", "/v1/jobs?before=a%00", None),
]


@pytest.mark.parametrize(("method", "url", "body"), NUL_REQUESTS, ids=[r[1] for r in NUL_REQUESTS])
def test_a_nul_in_an_id_is_a_422_on_every_route(
    limited_api: Api, method: str, url: str, body: Any
) -> None:
    # PostgreSQL refuses U+0000 in text even in a WHERE clause: this was a 500 there.
    before = dump(limited_api.settings.database_url)
    r = limited_api.client.request(method, url, json=body)
    assert r.status_code == 422, r.text
    assert "must not contain control characters (U+0000 at index 1)" in r.json()["detail"]
    assert dump(limited_api.settings.database_url) == before


def test_a_validator_message_reaches_the_client_without_pydantic_prefix(limited_api: Api) -> None:
    r = limited_api.client.put(
        "/v1/sessions/s1",
        json={"model": "gpt-4", "context_length": 8000, "messages": GOOD, "callback_url": "x"},
    )
    problem = r.json()
    assert r.status_code == 422 and "Value error" not in r.text
    assert problem["detail"] == "callback_url: must be an absolute http:// or https:// URL"
    assert problem["errors"] == [
        {"loc": "callback_url", "msg": "must be an absolute http:// or https:// URL"}
    ]


NOT_JSON = [
    (None, "no Content-Type header was sent"),
    ("text/plain", "got 'text/plain'"),
    ("application/x-www-form-urlencoded", "got 'application/x-www-form-urlencoded'"),
    ("multipart/form-data; boundary=x", "got 'multipart/form-data; boundary=x'"),
]
WRITES = [
    ("PUT", "/v1/sessions/s1", {"model": "gpt-4", "context_length": 8000, "messages": GOOD}),
    ("POST", "/v1/sessions/s1/messages", {"messages": GOOD[-1:]}),
    ("POST", "/v1/sessions/s1/compact", {"force": True}),
]


@pytest.mark.parametrize(("content_type", "got"), NOT_JSON, ids=[str(c) for c, _ in NOT_JSON])
def test_a_body_not_sent_as_json_is_a_415_that_says_which_header(
    limited_api: Api, content_type: str | None, got: str
) -> None:
    # FastAPI reads such a body as bytes: the answer was a 422 "Input should be a valid
    # dictionary", which does not say what to change.
    before = dump(limited_api.settings.database_url)
    headers = {} if content_type is None else {"content-type": content_type}
    for method, url, body in WRITES:
        r = limited_api.client.request(
            method, url, content=json.dumps(body).encode(), headers=headers
        )
        assert r.request.headers.get("content-type") == content_type
        assert r.status_code == 415, (url, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["detail"] == (
            f"the body must be JSON: send Content-Type: application/json ({got})"
        )
    assert dump(limited_api.settings.database_url) == before


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/x+json"]
)
def test_json_content_types_with_parameters_or_a_json_suffix_are_read(
    limited_api: Api, content_type: str
) -> None:
    body = json.dumps({"messages": GOOD[-1:]}).encode()
    r = limited_api.client.post(
        "/v1/sessions/s1/messages", content=body, headers={"content-type": content_type}
    )
    assert r.status_code == 200, r.text


def test_a_compaction_without_a_body_needs_no_content_type(limited_api: Api) -> None:
    assert limited_api.client.post("/v1/sessions/s1/compact").status_code == 202


# Values that pass a loose type check but not every database: integers past BIGINT, U+0000
# (PostgreSQL's text refuses it), overlong or odd text.
ODD_VALUES = (
    st.sampled_from([2**63, -(2**63) - 1, 10**30, 0, -1, 1.5, "", " ", "\u202e", "x" * 300])
    | st.sampled_from(["\x00", "gpt\x00", "http://x/\x00", "https://h/\n"])
    | JSON_VALUES
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    field=st.sampled_from(["model", "context_length", "prompt_tokens", "callback_url"]),
    value=ODD_VALUES,
    session_id=st.sampled_from(["odd", "odd%00", "odd%0A", "%E2%80%AE"]),
)
def test_one_odd_value_in_a_valid_snapshot_never_makes_a_500(
    limited_api: Api, field: str, value: Any, session_id: str
) -> None:
    body = {"model": "gpt-4", "context_length": 8000, "messages": GOOD, field: value}
    r = limited_api.client.put(f"/v1/sessions/{session_id}", json=body)
    assert r.status_code in (200, 202, 422), r.text
    if r.status_code == 422:
        assert r.json()["detail"]


# --- auth ------------------------------------------------------------------------------------------


def test_v1_routes_need_the_bearer_token(authed_api: Api) -> None:
    client = authed_api.client
    body = {"model": "gpt-4", "context_length": 8000, "messages": GOOD}
    for headers in (
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": TOKEN},
        {"Authorization": f"Basic {TOKEN}"},
    ):
        r = client.put("/v1/sessions/s1", json=body, headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
        assert (
            r.headers["content-type"] == "application/problem+json"
            and "Bearer" in r.json()["detail"]
        )
    assert client.get("/v1/jobs").status_code == 401
    assert dump(authed_api.settings.database_url)[0] == ("sessions", [])
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert client.put("/v1/sessions/s1", json=body, headers=good).status_code == 200
    assert client.get("/v1/sessions/s1", headers=good).status_code == 200
    assert client.get("/healthz").status_code == 200  # probes carry no token
    assert client.get("/readyz").status_code == 200


def test_a_malformed_body_without_a_token_is_a_401_not_a_422(authed_api: Api) -> None:
    # Auth comes first: an unauthenticated caller learns nothing about what it sent.
    requests: list[tuple[str, str, dict[str, Any]]] = [
        ("PUT", "/v1/sessions/s1", {"content": b'{"model": "gpt-4", '}),
        ("PUT", "/v1/sessions/s1", {"json": {"model": 5, "context_length": "8", "messages": 1}}),
        ("POST", "/v1/sessions/s1/compact", {"json": {"x": 1}}),
        ("POST", "/v1/sessions/s1/messages", {"content": b"[[["}),
    ]
    for method, url, body in requests:
        headers = {"content-type": "application/json"}
        r = authed_api.client.request(method, url, headers=headers, **body)
        assert r.status_code == 401, r.text
        assert r.headers["content-type"] == "application/problem+json"
        assert r.headers["www-authenticate"].startswith("Bearer")
        # The other order: with the token, the same body is refused for what it is.
        headers["Authorization"] = f"Bearer {TOKEN}"
        r = authed_api.client.request(method, url, headers=headers, **body)
        assert r.status_code == 422, r.text
    assert dump(authed_api.settings.database_url)[0] == ("sessions", [])


@pytest.mark.parametrize("token", ["", "  "])
def test_a_blank_configured_token_never_matches(
    database_url: str, broker_url: str, tmp_path: Path, token: str
) -> None:
    # Settings refuse a blank token; one that got through anyway (a copy made without
    # validation) must still let nobody in rather than everyone.
    settings = api_settings(database_url, broker_url, tmp_path).model_copy(
        update={"api_token": SecretStr(token)}
    )
    body = {"model": "gpt-4", "context_length": 8000, "messages": GOOD}
    for api in open_api(settings, broker_url):
        for header in ("Bearer ", "Bearer    ", "Bearer", "bearer \t", "", f"Bearer {token}"):
            r = api.client.put("/v1/sessions/s1", json=body, headers={"Authorization": header})
            assert r.status_code == 401, (header, r.text)
            assert api.client.get("/v1/jobs", headers={"Authorization": header}).status_code == 401


COERCED_BODIES: list[tuple[str, str, dict[str, Any], str]] = [
    ("PUT", "/v1/sessions/s1", {"context_length": "100000"}, "context_length: Input should be a valid integer"),
    ("PUT", "/v1/sessions/s1", {"context_length": 8000.0}, "context_length: Input should be a valid integer"),
    ("PUT", "/v1/sessions/s1", {"context_length": True}, "context_length: Input should be a valid integer"),
    ("PUT", "/v1/sessions/s1", {"prompt_tokens": "12"}, "prompt_tokens: Input should be a valid integer"),
    ("PUT", "/v1/sessions/s1", {"model": 4}, "model: Input should be a valid string"),
    ("POST", "/v1/sessions/s1/messages", {"prompt_tokens": "7"}, "prompt_tokens: Input should be a valid integer"),
    ("POST", "/v1/sessions/s1/compact", {"force": "yes"}, "force: Input should be a valid boolean"),
    ("POST", "/v1/sessions/s1/compact", {"force": 1}, "force: Input should be a valid boolean"),
    ("POST", "/v1/sessions/s1/compact", {"focus_topic": 5}, "focus_topic: Input should be a valid string"),
    ("POST", "/v1/sessions/s1/compact", {"target_tokens": "4000"}, "target_tokens: Input should be a valid integer"),
    ("POST", "/v1/sessions/s1/compact", {"target_tokens": 4000.0}, "target_tokens: Input should be a valid integer"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "url", "change", "detail"), COERCED_BODIES, ids=[str(c[2]) for c in COERCED_BODIES]
)
def test_bodies_are_strict_no_value_is_coerced(
    limited_api: Api, method: str, url: str, change: dict[str, Any], detail: str
) -> None:
    before = dump(limited_api.settings.database_url)
    base: dict[str, Any] = {
        "PUT": {"model": "gpt-4", "context_length": 8000, "messages": GOOD},
        "POST": {"messages": GOOD[-1:]} if url.endswith("/messages") else {},
    }[method]
    r = put_json(limited_api, url, base | change, method=method)
    assert r.status_code == 422, r.text
    assert detail in r.json()["detail"]
    assert dump(limited_api.settings.database_url) == before


def data_url(chars: int) -> str:
    return "data:image/png;base64," + "A" * chars


def test_image_parts_count_against_the_body_limit_not_the_message_limit(limited_api: Api) -> None:
    # A screenshot's base64 is far longer than COMPACTION_MAX_CONTENT_CHARS (5,000 here), yet
    # costs a fixed number of tokens: only the body limit (40,000 bytes here) bounds it.
    images = [
        {"type": "image_url", "image_url": {"url": data_url(20_000), "detail": "high"}},
        {"type": "input_image", "image_url": data_url(6_000)},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 6_000}},
    ]  # fmt: skip
    message = {"role": "user", "content": [{"type": "text", "text": "what is this?"}, *images]}
    body = {"model": "gpt-4", "context_length": 8000, "messages": [*GOOD, message]}
    r = limited_api.client.put("/v1/sessions/s2", json=body)
    assert r.status_code == 200, r.text
    stored = limited_api.client.get("/v1/sessions/s2/messages").json()["messages"]
    assert stored[-1] == message
    # Text still counts, also beside an image.
    long_text = {"role": "user", "content": [{"type": "text", "text": "x" * 5_001}, images[1]]}
    r = limited_api.client.put("/v1/sessions/s3", json=body | {"messages": [*GOOD, long_text]})
    assert r.status_code == 413 and "messages[5]: content is 5005 characters" in r.json()["detail"]
    # And the body limit still bounds the images.
    huge = {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": data_url(50_000)}}],
    }
    r = limited_api.client.put("/v1/sessions/s4", json=body | {"messages": [*GOOD, huge]})
    assert r.status_code == 413 and "COMPACTION_MAX_BODY_BYTES" in r.json()["detail"]


def test_a_body_that_is_not_utf8_is_a_400_naming_the_byte(api: Api) -> None:
    r = api.client.put(
        "/v1/sessions/s1",
        content=b'{"model": "\xff"}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 400
    assert r.json()["detail"] == (
        "the body is not UTF-8 text (byte 0xff at offset 11): send JSON encoded as UTF-8"
    )


def test_a_method_a_path_lacks_is_a_405_allowing_every_method_it_has(api: Api) -> None:
    r = api.client.request("PATCH", "/v1/sessions/s1")
    assert r.status_code == 405
    assert r.headers["allow"] == "DELETE, GET, PUT"
    assert api.client.request("PUT", "/v1/sessions/s1/messages").headers["allow"] == "GET, POST"


def test_idle_since_is_an_iso_time_not_a_number(api: Api) -> None:
    for value in ("0.5", "1700000000", "-3", "1e9"):
        r = api.client.get("/v1/sessions", params={"idle_since": value})
        assert r.status_code == 422, value
        assert "ISO 8601" in r.json()["detail"]
    ok = api.client.get("/v1/sessions", params={"idle_since": "2026-03-01T00:00:00Z"})
    assert ok.status_code == 200
