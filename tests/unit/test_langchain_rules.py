"""The LangChain middleware's rules that need no LangChain: which session a run belongs to,
which tools the model is offered, what a model call reports; and that the package imports
without LangChain (this venv has none)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from api.client import ProblemError, ServiceUnreachableError, UnprocessableError
from api.langchain import QueueMiddleware
from api.langchain.link import out_of_reach
from api.langchain.middleware import profile_window, prompt_tokens, run_facts
from api.langchain.sessions import outer_namespace, session_id_for
from api.langchain.tools import offered

OWN = "instance-1"


def session(thread_id: str | None = None, ns: str | None = None, fixed: str | None = None) -> str:
    return session_id_for(
        prefix="langchain-", own=OWN, fixed=fixed, thread_id=thread_id, checkpoint_ns=ns
    )


def test_a_thread_is_its_session_and_a_run_without_one_is_the_instances() -> None:
    assert session("t1", "model:abc") == session("t1", "tools:def") == "langchain-t1"
    assert session(None, "model:abc") == f"langchain-{OWN}"
    assert session("t1", "model:abc", fixed="chat-42") == "chat-42"


def test_every_node_of_one_nested_run_shares_a_session_and_other_runs_do_not() -> None:
    # A deep agent's subagent: its model and tool nodes run under the task tool's namespace.
    model = session("t1", "tools:run-a|model:x1")
    assert model == session("t1", "tools:run-a|tools:x2") == session("t1", "tools:run-a|m:x3")
    assert model.startswith("langchain-t1:sub-") and model != session("t1", "model:x1")
    assert session("t1", "tools:run-b|model:x1") != model
    assert outer_namespace("a:1|b:2|c:3") == "a:1|b:2" and outer_namespace("model:1") == ""


@dataclass
class FakeTool:
    name: str


def definition(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def test_the_model_is_offered_the_services_definitions_in_place_of_the_executors() -> None:
    theirs, builtin = FakeTool("read_file"), {"type": "web_search"}
    tools = [theirs, FakeTool("recall"), builtin, FakeTool("recall_message")]
    served = [definition("recall"), definition("recall_message")]
    assert offered(tools, served) == [theirs, served[0], builtin, served[1]]
    assert offered(tools, None) == [theirs, builtin]  # the service cannot be asked: none


@dataclass
class FakeAnswer:
    usage_metadata: dict[str, int] | None


@dataclass
class FakeResponse:
    result: list[Any] = field(default_factory=list)


def test_a_calls_prompt_tokens_come_from_its_answers_usage() -> None:
    answer = FakeAnswer({"input_tokens": 1234, "output_tokens": 5})
    assert prompt_tokens(FakeResponse([answer])) == 1234
    assert prompt_tokens(answer) == 1234  # a bare AIMessage
    assert prompt_tokens(FakeResponse([FakeAnswer(None)])) is None


@dataclass
class FakeModel:
    profile: dict[str, Any] | None


def test_the_window_is_the_models_profile_or_a_default() -> None:
    assert profile_window(FakeModel({"max_input_tokens": 200_000})) == 200_000
    assert profile_window(FakeModel(None)) == 128_000


@dataclass
class FakeConfigRuntime:
    config: dict[str, Any]


def test_a_tool_runtime_without_execution_info_is_read_from_its_config() -> None:
    runtime = FakeConfigRuntime({"configurable": {"thread_id": 7, "checkpoint_ns": "tools:x"}})
    assert run_facts(runtime) == ("7", "tools:x")


def problem(cls: type[ProblemError], status: int) -> ProblemError:
    response = httpx.Response(status, request=httpx.Request("POST", "http://queue/v1/x"))
    return cls(response, {"detail": "scripted"}, "scripted")


def test_an_outage_quiets_every_conversation_and_a_refusal_only_its_own() -> None:
    assert out_of_reach(ServiceUnreachableError("refused", attempts=2))
    assert out_of_reach(problem(ProblemError, 502)) and out_of_reach(problem(ProblemError, 401))
    assert not out_of_reach(problem(UnprocessableError, 422))
    assert not out_of_reach(problem(ProblemError, 413))


def test_the_package_imports_without_langchain() -> None:
    assert importlib.util.find_spec("langchain") is None  # the product's venv has none
    assert QueueMiddleware.__module__ == "api.langchain.middleware"
    with pytest.raises(ModuleNotFoundError, match="langchain"):
        from api.langchain import CompactionQueueMiddleware  # noqa: F401
