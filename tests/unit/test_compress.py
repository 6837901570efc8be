"""compress(): the orchestration, outcome by outcome."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from tests.factories import make_messages
from tests.support.summarizers import ScriptedSummarizer
from worker.compressor.assemble import IMAGE_PLACEHOLDER
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.errors import (
    InvalidTranscriptError,
    SummarizerAuthError,
    SummarizerContextTooLongError,
    SummarizerRateLimitError,
    SummarizerServerError,
    SummarizerTimeoutError,
)
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.markers import (
    END_MARKER,
    END_TAG,
    NOTE_TAG,
    SUMMARY_TAG,
    is_summary,
    summary_body,
)
from worker.compressor.messages import (
    Message,
    ToolCall,
    assistant,
    content_text,
    image_count,
    system,
    tool_result,
    user,
)
from worker.compressor.report import CompactionResult
from worker.compressor.summarizer import Summarizer, SummaryResponse
from worker.compressor.tokens import TokenCounter

TODAY = date(2026, 5, 1)


def run(
    msgs: Sequence[Message],
    counter: TokenCounter,
    summarizer: Summarizer | None = None,
    *,
    context_length: int = 8_000,
    **kwargs: Any,
) -> CompactionResult:
    config = kwargs.pop("config", None) or CompressConfig(context_length=context_length)
    return compress(
        msgs,
        config=config,
        summarizer=summarizer or ScriptedSummarizer(),
        counter=counter,
        today=TODAY,
        **kwargs,
    )


def agent_session(turns: int = 12, seed: int = 0) -> list[Message]:
    return make_messages(turns=turns, seed=seed)


def test_too_few_messages_is_a_no_op(counter: TokenCounter) -> None:
    msgs = [system("s"), user("hi"), assistant("hello")]
    result = run(msgs, counter)
    assert result.report.noop_reason == "too_few_messages"
    assert result.messages == tuple(msgs) and not result.report.changed


def test_nothing_to_summarize_when_everything_fits_the_tail(counter: TokenCounter) -> None:
    msgs = [system("s"), user("a"), assistant("b"), user("c"), assistant("d")]
    result = run(msgs, counter, context_length=1_000_000)
    assert result.report.noop_reason == "nothing_to_summarize"
    assert result.messages == tuple(msgs)
    assert result.token_counts == tuple(counter.count_messages(msgs))


def test_a_normal_pass_reports_exact_tokens_and_counts(counter: TokenCounter) -> None:
    msgs = agent_session()
    summarizer = ScriptedSummarizer()
    result = run(msgs, counter, summarizer)
    report = result.report
    assert report.changed and not report.fallback_used and report.dropped_count == 0
    assert report.tokens_before == sum(counter.count_messages(msgs))
    assert list(result.token_counts) == counter.count_messages(result.messages)
    assert report.tokens_after == sum(result.token_counts) < report.tokens_before
    assert report.messages_before == len(msgs)
    assert report.messages_after == len(result.messages)
    assert report.summarizer == "scripted-model" and report.summarizer_calls == 1
    assert report.summarizer_input_tokens > 0
    assert report.savings_pct == pytest.approx(
        100 * (report.tokens_before - report.tokens_after) / report.tokens_before, abs=0.01
    )
    assert report.summarized_count == report.tail_start - report.head_end
    assert result.summary is not None and result.summary.startswith(str(summarizer.default))


class CountingCounter(TokenCounter):
    """A real counter that also records which texts it was asked to count."""

    def __init__(self, base: TokenCounter) -> None:
        super().__init__(base.encoding)
        self.texts: list[str] = []

    def count_text(self, text: str) -> int:
        self.texts.append(text)
        return super().count_text(text)


def test_precomputed_counts_are_trusted_and_unchanged_messages_not_recounted(
    counter: TokenCounter,
) -> None:
    msgs = agent_session()
    counts = counter.count_messages(msgs)
    counting = CountingCounter(counter)
    result = run(msgs, counting, token_counts=counts)
    assert result.report.tokens_before == sum(counts)
    tail_texts = {content_text(m.content) for m in msgs[result.report.tail_start :]}
    assert not tail_texts & set(counting.texts) - {""}
    assert list(result.token_counts) == counter.count_messages(result.messages)


def test_token_counts_must_match_the_messages(counter: TokenCounter) -> None:
    with pytest.raises(InvalidTranscriptError, match="token_counts has 2 entries for"):
        run(agent_session(), counter, token_counts=[1, 2])


def test_the_latest_user_message_stays_verbatim_and_last(counter: TokenCounter) -> None:
    msgs = agent_session()
    result = run(msgs, counter)
    latest = next(m for m in reversed(msgs) if m.role == "user")
    users = [m for m in result.messages if m.role == "user"]
    assert users[-1] == latest and not is_summary(users[-1])


def test_a_long_agent_run_after_one_ask_still_compacts_every_pass(counter: TokenCounter) -> None:
    call = 0
    msgs: list[Message] = [system("s"), user("Fix the parser bug.")]
    for _ in range(40):
        call += 1
        args = json.dumps({"command": f"pytest -k case_{call}"})
        msgs.append(assistant("Running.", [ToolCall(id=f"c{call}", name="bash", arguments=args)]))
        msgs.append(
            tool_result(f"c{call}", f"<returncode>1</returncode><output>{'x ' * 300}</output>")
        )
    result = run(msgs, counter)
    assert result.report.changed
    # The ask is lifted: right after the summary, verbatim, and the summarizer saw it.
    assert result.messages[1].role == "assistant" and is_summary(result.messages[1])
    assert result.messages[2] == msgs[1]
    # Later passes keep making progress as the run continues.
    again = list(result.messages)
    for _ in range(20):
        call += 1
        args = json.dumps({"command": f"pytest -k case_{call}"})
        again.append(assistant("Again.", [ToolCall(id=f"c{call}", name="bash", arguments=args)]))
        again.append(
            tool_result(f"c{call}", f"<returncode>1</returncode><output>{'y ' * 300}</output>")
        )
    second = run(again, counter, compaction_count=1, previous_summary=result.summary)
    assert second.report.changed and second.report.tokens_after < second.report.tokens_before
    assert [m for m in second.messages if m.role == "user"] == [msgs[1]]


def test_focus_topic_and_today_reach_the_prompt(counter: TokenCounter) -> None:
    summarizer = ScriptedSummarizer()
    run(agent_session(), counter, summarizer, focus_topic="the billing module")
    assert 'Focus topic: "the billing module"' in summarizer.prompts[0]
    assert "Today is 2026-05-01" in summarizer.prompts[0]
    assert summarizer.requests[0].focus_topic == "the billing module"


def test_a_previous_summary_is_updated_not_summarized_again(counter: TokenCounter) -> None:
    summarizer = ScriptedSummarizer()
    first = run(agent_session(), counter, summarizer)
    grown = [*first.messages, *agent_session(turns=8, seed=5)[1:]]
    second_summarizer = ScriptedSummarizer()
    run(grown, counter, second_summarizer, compaction_count=1, previous_summary=first.summary)
    prompt = second_summarizer.prompts[0]
    assert f"PREVIOUS CHECKPOINT:\n{first.summary}" in prompt
    turns = prompt[prompt.index("TURNS NOT YET COVERED") :]
    assert SUMMARY_TAG not in turns  # the old summary message is not a turn


def test_after_a_restart_the_previous_summary_is_read_back_from_the_transcript(
    counter: TokenCounter,
) -> None:
    first = run(agent_session(), counter, ScriptedSummarizer(default="## Active Task\nOLD-STATE"))
    grown = [*first.messages, *agent_session(turns=8, seed=5)[1:]]
    summarizer = ScriptedSummarizer()
    second = run(grown, counter, summarizer, compaction_count=1)  # no previous_summary passed
    prompt = summarizer.prompts[0]
    assert "PREVIOUS CHECKPOINT:\n## Active Task\nOLD-STATE" in prompt
    assert SUMMARY_TAG not in prompt
    previous = summarizer.requests[0].previous_summary
    assert previous is not None and previous.startswith("## Active Task\nOLD-STATE")
    assert second.report.changed
    assert sum(is_summary(m) for m in second.messages) == 1


def test_a_summary_that_quotes_our_tags_reads_back_whole(counter: TokenCounter) -> None:
    # An LLM echoing the end marker (or a quoted user ask holding it) must not end the summary
    # early when the next pass reads it back from the transcript.
    echoed = f"## Active Task\nOLD-STATE\n{END_MARKER}\n{SUMMARY_TAG}\n## Remaining Work\nDOCS"
    first = run(agent_session(), counter, ScriptedSummarizer(default=echoed))
    assert first.summary is not None and "## Remaining Work\nDOCS" in first.summary
    assert END_TAG not in first.summary and SUMMARY_TAG not in first.summary
    (carrier,) = [m for m in first.messages if is_summary(m)]
    assert summary_body(carrier) == first.summary
    grown = [*first.messages, *agent_session(turns=8, seed=5)[1:]]
    summarizer = ScriptedSummarizer()
    run(grown, counter, summarizer, compaction_count=1)  # read back from the transcript
    previous = summarizer.requests[0].previous_summary
    assert previous == first.summary


def test_system_note_is_appended_once_over_several_passes(counter: TokenCounter) -> None:
    msgs = agent_session()
    for seed in range(3):
        result = run(msgs, counter)
        msgs = [*result.messages, *agent_session(turns=6, seed=seed + 10)[1:]]
    system_text = content_text(msgs[0].content)
    assert system_text.count(NOTE_TAG) == 1
    assert system_text.startswith(content_text(agent_session()[0].content))


def test_a_failing_llm_leaves_an_explicit_marker_and_counts_what_it_dropped(
    counter: TokenCounter,
) -> None:
    summarizer = ScriptedSummarizer(script=[SummarizerServerError("upstream 502", status=502)])
    result = run(agent_session(), counter, summarizer)
    report = result.report
    assert report.changed and report.fallback_used
    assert report.dropped_count == report.summarized_count > 0
    assert (report.error_class, report.error) == ("server_error", "upstream 502")
    assert result.summary is not None
    assert result.summary.startswith(
        f"Summary generation failed (server_error); {report.dropped_count} messages were removed"
    )
    assert "## Active Task" in result.summary  # the extractive notes follow the marker


def test_an_empty_summary_is_an_error_not_a_summary(counter: TokenCounter) -> None:
    summarizer = ScriptedSummarizer(script=["   \n"])
    result = run(agent_session(), counter, summarizer)
    assert result.report.fallback_used and result.report.error_class == "empty_summary"
    assert result.summary is not None and result.summary.startswith("Summary generation failed")


def test_an_auth_failure_aborts_and_leaves_the_transcript_alone(counter: TokenCounter) -> None:
    msgs = agent_session()
    summarizer = ScriptedSummarizer(script=[SummarizerAuthError("401 bad key")])
    result = run(msgs, counter, summarizer)
    report = result.report
    assert report.aborted and not report.changed and not report.fallback_used
    assert result.messages == tuple(msgs) and result.summary is None
    assert report.error_class == "auth" and report.tokens_after == report.tokens_before
    assert report.summarizer_calls == 1


def test_a_rate_limit_carries_the_providers_retry_after_into_the_report(
    counter: TokenCounter,
) -> None:
    limited = SummarizerRateLimitError("429", retry_after_s=90.0)
    result = run(agent_session(), counter, ScriptedSummarizer(script=[limited]))
    report = result.report
    assert report.fallback_used and report.error_class == "rate_limited"
    assert report.retry_after_s == 90.0
    other = run(agent_session(), counter, ScriptedSummarizer(script=[SummarizerServerError("503")]))
    assert other.report.retry_after_s is None


def test_the_extractive_summarizer_is_not_a_fallback(counter: TokenCounter) -> None:
    result = run(agent_session(), counter, ExtractiveSummarizer())
    report = result.report
    assert report.changed and not report.fallback_used and report.dropped_count == 0
    assert report.summarizer == "extractive" and report.error_class is None
    assert report.summarizer_input_tokens == 0  # no prompt: it reads the messages


def test_a_large_window_is_folded_in_chunks_that_each_fit(counter: TokenCounter) -> None:
    msgs = make_messages(turns=60, seed=3)
    config = CompressConfig(context_length=20_000, summarizer_context_tokens=6_000)
    summarizer = ScriptedSummarizer()
    result = run(msgs, counter, summarizer, config=config)
    report = result.report
    assert report.summarizer_calls == len(summarizer.requests) > 2
    assert [r.chunk_index for r in summarizer.requests] == list(range(report.summarizer_calls))
    assert summarizer.requests[-1].chunk_count == report.summarizer_calls
    for request in summarizer.requests:
        assert counter.count_text(request.prompt) + request.max_output_tokens <= 6_000
    # Each later chunk updates the summary the previous call wrote.
    assert summarizer.requests[0].previous_summary is None
    assert all(r.previous_summary == summarizer.default for r in summarizer.requests[1:])
    assert report.summarizer_input_tokens <= 6_000
    assert report.summarizer_input_tokens_total > report.summarizer_input_tokens
    covered = sum(len(r.window) for r in summarizer.requests)
    assert covered == report.summarized_count


def test_a_failure_mid_fold_drops_only_what_no_llm_summary_covered(counter: TokenCounter) -> None:
    msgs = make_messages(turns=60, seed=3)
    config = CompressConfig(context_length=20_000, summarizer_context_tokens=6_000)
    summarizer = ScriptedSummarizer(
        script=["## Key Decisions\nFIRST-CHUNK", SummarizerTimeoutError("read timeout")]
    )
    result = run(msgs, counter, summarizer, config=config)
    report = result.report
    first_chunk = list(summarizer.requests[0].window)
    assert report.fallback_used and report.error_class == "timeout"
    assert 0 < report.dropped_count == report.summarized_count - len(first_chunk)
    assert result.summary is not None and "FIRST-CHUNK" in result.summary


def test_context_too_long_re_splits_smaller_and_retries(counter: TokenCounter) -> None:
    summarizer = ScriptedSummarizer(
        script=[SummarizerContextTooLongError("too long"), SummarizerContextTooLongError("still")]
    )
    result = run(agent_session(turns=20), counter, summarizer)
    report = result.report
    assert report.changed and not report.fallback_used
    sizes = [len(r.window) for r in summarizer.requests]
    assert sizes[1] < sizes[0] and sizes[2] < sizes[1]
    assert report.summarizer_calls == len(summarizer.requests) >= 4
    assert any("re-split" in note for note in report.notes)


def test_context_too_long_every_time_ends_in_the_fallback(counter: TokenCounter) -> None:
    summarizer = ScriptedSummarizer(default=SummarizerContextTooLongError("never fits"))
    result = run(agent_session(), counter, summarizer)
    assert result.report.fallback_used and result.report.error_class == "context_too_long"
    assert result.report.summarizer_calls == 4  # the first try and three re-splits


def test_secrets_never_reach_the_summarizer_or_the_stored_summary(counter: TokenCounter) -> None:
    key = "sk-proj-Zq8Xk2LmN4pQ7rS9tUvWxYz0123456789AbCd"
    msgs = agent_session()
    msgs.insert(3, user(f"use OPENAI_API_KEY={key} for the call"))
    msgs.insert(4, assistant("ok"))
    # A summarizer that leaks whatever it can see back into its summary.
    summarizer = ScriptedSummarizer(default=lambda r: f"## Active Task\n{r.prompt} {key}")
    result = run(msgs, counter, summarizer, focus_topic=f"key {key}", previous_summary=key)
    assert key not in summarizer.prompts[0]
    assert all(key not in content_text(m.content) for m in summarizer.requests[0].window)
    assert result.summary is not None and key not in result.summary
    assert all(key not in content_text(m.content) for m in result.messages[:2])
    assert result.report.redactions >= 4


def test_llm_time_and_aux_failures_are_recorded(counter: TokenCounter) -> None:
    response = SummaryResponse(
        text="## Active Task\nx",
        model="main-model",
        latency_ms=120.0,
        aux_model_failed="timeout: t",
    )
    result = run(agent_session(), counter, ScriptedSummarizer(script=[response]))
    report = result.report
    assert report.llm_ms == 120.0 and report.aux_model_failed == "timeout: t"
    assert report.summarizer == "main-model"


def test_thrash_guard_trips_after_repeated_small_savings(counter: TokenCounter) -> None:
    msgs = agent_session()
    fine = run(msgs, counter, recent_savings_pct=[3.0])
    assert not fine.report.thrash_guard_tripped  # this pass saved plenty
    noop = run(msgs[:3], counter, recent_savings_pct=[3.0])
    assert noop.report.thrash_guard_tripped  # saved nothing, after a pass that saved 3%
    assert not run(msgs[:3], counter).report.thrash_guard_tripped  # one strike is not two


def test_a_summary_that_would_not_save_anything_changes_nothing(counter: TokenCounter) -> None:
    msgs = [system("s"), user("a " * 50), assistant("b " * 50), user("c"), assistant("d")]
    config = CompressConfig(context_length=400, min_tail_messages=1, protect_first_n=0)
    huge = ScriptedSummarizer(default="## Active Task\n" + "word " * 3000)
    result = run(msgs, counter, huge, config=config)
    assert result.report.noop_reason == "not_smaller"
    assert result.messages == tuple(msgs) and result.report.summarizer_calls == 1


def test_old_images_are_stripped_but_the_newest_user_image_stays(counter: TokenCounter) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    msgs = make_messages(turns=12, seed=1)
    old = Message(role="user", content=({"type": "text", "text": "see"}, image))
    msgs = [msgs[0], old, assistant("seen"), *msgs[1:]]
    newest = Message(role="user", content=({"type": "text", "text": "and now"}, image))
    msgs += [newest]
    config = CompressConfig(context_length=8_000, protect_first_n=2)
    result = run(msgs, counter, config=config)
    assert result.messages[-1] == newest
    # The old one stays in the head as text: one current image for the whole transcript.
    assert result.report.head_end == 3 and result.report.stripped_images == 1
    assert result.messages[1].content == (
        {"type": "text", "text": "see"},
        {"type": "text", "text": IMAGE_PLACEHOLDER},
    )
    shot = Message(
        role="tool", content=({"type": "text", "text": "shot"}, image), tool_call_id="s1"
    )
    tail = [
        assistant(None, [ToolCall(id="s1", name="screenshot", arguments="{}")]),
        shot,
        assistant("ok"),
        newest,
    ]
    kept = run([*msgs[:-1], *tail], counter, config=replace(config, min_tail_messages=4))
    assert kept.report.stripped_images == 2  # the head's and the screenshot before `newest`
    assert kept.messages[-1] == newest


def test_screenshots_newer_than_the_users_last_image_stay(counter: TokenCounter) -> None:
    # A computer-use agent's tool results carry screenshots: the newest is the screen it is
    # looking at, and it stays in the tail with its image.
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    msgs = make_messages(turns=12, seed=1)

    def shot(call_id: str) -> list[Message]:
        call = ToolCall(id=call_id, name="screenshot", arguments="{}")
        result = ({"type": "text", "text": "screen"}, image)
        return [assistant(None, [call]), Message("tool", result, tool_call_id=call_id)]

    config = CompressConfig(context_length=8_000, min_tail_messages=5)
    alone = run([*msgs, *shot("s1"), *shot("s2"), assistant("done")], counter, config=config)
    assert alone.report.stripped_images == 1  # no user image: the newest screenshot is current
    assert image_count(alone.messages[-2].content) == 1
    asked = Message("user", ({"type": "text", "text": "this one?"}, image))
    after = run([*msgs, asked, *shot("s1"), assistant("yes")], counter, config=config)
    assert after.report.stripped_images == 0
    assert image_count(after.messages[-2].content) == image_count(after.messages[-4].content) == 1


def test_pre_pass_counts_are_reported(counter: TokenCounter) -> None:
    msgs = make_messages(turns=30, seed=2)
    report = run(msgs, counter).report
    assert report.pruned_tool_outputs > 0
    assert report.shrunk_tool_args > 0
    assert report.deduplicated_tool_outputs >= 0


def test_the_head_keeps_its_turns_but_not_their_bulk(counter: TokenCounter) -> None:
    # The first turn writes a whole file and reads a large one: outside the tail, so its tool
    # output becomes a one-line description and its arguments shrink, as in the window; the
    # first ask stays verbatim.
    big_file = "\n".join(f"line {i}: " + "x" * 60 for i in range(3_000))
    write = ToolCall("w1", "write_file", json.dumps({"path": "big.py", "content": big_file}))
    head = [
        system("You are a coding agent."),
        user("Build the parser. " + "Details. " * 20),
        assistant(None, [write]),
        tool_result("w1", "wrote big.py\n" + big_file),
    ]
    middle = [
        m for i in range(20) for m in (user(f"step {i} " * 200), assistant(f"did {i} " * 200))
    ]
    msgs = [*head, *middle, user("and now?")]
    result = run(msgs, counter, context_length=60_000)
    out, report = result.messages, result.report

    assert report.head_end == 4 and out[1] == head[1]
    call = out[2].tool_calls[0]
    args = json.loads(call.arguments)  # still valid JSON, same keys
    assert (call.id, set(args), args["path"]) == ("w1", {"path", "content"}, "big.py")
    assert len(call.arguments) < 2_000 < len(write.arguments)
    assert out[3].tool_call_id == "w1" and content_text(out[3].content).startswith("[write_file]")
    assert report.shrunk_tool_args >= 1 and report.pruned_tool_outputs >= 1
    assert report.tokens_after < 0.2 * report.tokens_before
    assert report.tokens_after == sum(counter.count_messages(out))


@pytest.mark.parametrize("summarizer", [ScriptedSummarizer(), ExtractiveSummarizer()])
def test_tool_arguments_nested_thousands_deep_are_read_as_text(
    counter: TokenCounter, summarizer: Summarizer
) -> None:
    # Valid JSON that no recursive reader can walk (an agent's generated data, or an attack):
    # pruning, redaction, the ledger and the extractive summary take it as an opaque string
    # instead of failing the compaction with a RecursionError, as they did.
    deep = '{"command": "make data", "rows": ' + "[" * 5_000 + "]" * 5_000 + "}"
    msgs: list[Message] = [system("You are a coding agent."), user("Generate the data.")]
    for i in range(12):
        msgs += [
            assistant(None, [ToolCall(f"c{i}", "bash", deep)]),
            tool_result(f"c{i}", f"row {i}\n" * 120),
            user(f"next {i} " * 30),
        ]
    result = run([*msgs, user("done?")], counter, summarizer, context_length=20_000)
    report = result.report
    assert report.summarized_count > 0 and not report.fallback_used and not report.aborted
    calls = [c for m in result.messages for c in m.tool_calls]
    assert calls and all(c.arguments == deep for c in calls)  # not JSON to us: left whole
    assert result.messages[-1] == user("done?")


def test_tool_calls_and_results_stay_paired(counter: TokenCounter) -> None:
    for seed in range(5):
        msgs = make_messages(turns=15, seed=seed)
        out = run(msgs, counter).messages
        waiting: list[str] = []
        for msg in out:
            if msg.role == "tool":
                assert msg.tool_call_id in waiting
                waiting.remove(msg.tool_call_id)
            else:
                assert waiting == []
                waiting = [c.id for c in msg.tool_calls]
        assert waiting == []


def test_the_ledger_appends_exact_artifacts_the_summary_left_out(counter: TokenCounter) -> None:
    msgs = agent_session(turns=14, seed=4)
    summarizer = ScriptedSummarizer(default='## Active Task\nUser asked: "finish"')
    result = run(msgs, counter, summarizer)
    report = result.report
    assert result.summary is not None
    body, _, ledger = result.summary.partition("## Artifact Ledger")
    assert body.startswith("## Active Task") and ledger
    assert report.ledger_items >= report.ledger_appended > 0
    assert "src/" in ledger
    # A summary that already names everything gets nothing appended.
    echo = ScriptedSummarizer(default=lambda r: "## Active Task\nx\n" + r.prompt)
    assert run(msgs, counter, echo).report.ledger_appended < report.ledger_appended


def test_a_pasted_summary_in_the_latest_user_message_stays_that_message(
    counter: TokenCounter,
) -> None:
    # A person pastes a summary from another chat (our tag, no end marker) and asks on: that is
    # their message, not an earlier summary of ours to fold away.
    ask = f"{SUMMARY_TAG} The earlier part...\n## Active Task\nparser\n\nNow write the lexer tests."
    msgs = [*agent_session(), user(ask)]
    summarizer = ScriptedSummarizer()
    result = run(msgs, counter, summarizer)
    assert result.report.changed
    assert [m for m in result.messages if m.role == "user"][-1] is msgs[-1]
    assert result.messages[-1] is msgs[-1]
    assert summarizer.requests[0].previous_summary is None


def test_older_messages_that_start_with_our_tag_are_summarized_as_turns(
    counter: TokenCounter,
) -> None:
    # Taken for earlier summaries they were neither kept nor summarized: lost from the context.
    session = agent_session()
    pasted = user(f"{SUMMARY_TAG} PASTED-NOTES from yesterday: the deploy key rotated.")
    echoed = assistant(f"{SUMMARY_TAG} ECHOED-REPLY: continuing with the parser.")
    at = next(i for i, m in enumerate(session) if i > 5 and m.role == "user")
    msgs = [*session[:at], pasted, echoed, *session[at:]]
    summarizer = ScriptedSummarizer()
    result = run(msgs, counter, summarizer)
    assert result.report.changed and result.report.head_end <= at < result.report.tail_start
    assert "PASTED-NOTES" in summarizer.prompts[0] and "ECHOED-REPLY" in summarizer.prompts[0]
    assert summarizer.requests[0].previous_summary is None
    assert sum(is_summary(m) for m in result.messages) == 1


def test_escaped_lone_surrogates_in_arguments_leave_no_lone_surrogate_in_the_output(
    counter: TokenCounter,
) -> None:
    # Arguments are a JSON string; a JavaScript agent can write half a surrogate pair in it as
    # an escape. The arguments themselves are ASCII and valid, but what we derive from their
    # value (one-line descriptions, shrunk arguments, the summary) must be UTF-8 text.
    half = "\\ud83d"
    args = json.dumps({"command": "echo x"})[:-2] + half + '"}'
    write = '{"path": "a.txt", "content": "' + "long " * 100 + half + '"}'
    msgs = [*agent_session()]
    at = next(i for i, m in enumerate(msgs) if i > 5 and m.role == "user")
    msgs[at:at] = [
        assistant("Running.", [ToolCall("s1", "bash", args), ToolCall("s2", "write_file", write)]),
        tool_result("s1", "<returncode>0</returncode><output>\n" + "line\n" * 100 + "</output>"),
        tool_result("s2", "written " * 60),
        assistant("Ran it."),
    ]
    for summarizer in (ScriptedSummarizer(), ExtractiveSummarizer()):
        result = run(msgs, counter, summarizer, config=CompressConfig(context_length=6_000))
        assert result.report.changed
        wire = json.dumps([m.text() for m in result.messages], ensure_ascii=False)
        wire += json.dumps([c.arguments for m in result.messages for c in m.tool_calls])
        wire += result.summary or ""
        wire.encode("utf-8")  # raises on a lone surrogate
        assert list(result.token_counts) == counter.count_messages(result.messages)


def test_an_interrupted_tool_call_in_the_tail_gets_an_honest_stub_and_a_note(
    counter: TokenCounter,
) -> None:
    # The user stopped a tool before it answered: no result follows the call. The provider
    # would refuse the transcript as it is; the output pairs the call with a stub that says so.
    stopped = [
        assistant(None, [ToolCall("t1", "bash", json.dumps({"command": "sleep 600"}))]),
        user("Stop that, check the logs instead."),
    ]
    result = run([*agent_session(), *stopped], counter)
    assert result.report.changed
    stub = result.messages[-2]
    assert stub.role == "tool" and stub.tool_call_id == "t1"
    assert stub.content == "[no output was recorded for this tool call]"
    assert result.report.notes[-1] == (
        "tool pairs repaired: 0 result(s) without their call dropped, "
        "1 call(s) without a result given a stub"
    )


def small_window_chat() -> list[Message]:
    """A tool-free chat of many short turns in several languages, as a messaging gateway sends."""
    asks = [
        "¿Me recomiendas un libro para el fin de semana?",
        "记一下\uff0c我的会员号是 {i}。",
        "Can you help me plan dinner for {i} people on Friday?",
        "Une question : il faut quels papiers pour le passeport ?",
        "Prefiero que me hables de tú. Mi número de socio es el {i}.",
    ]
    msgs: list[Message] = [system("You are a helpful assistant in a messaging app.")]
    for i in range(90):
        msgs.append(user(asks[i % len(asks)].format(i=1000 + i)))
        reply = (
            "Claro: te lo explico en dos líneas, lo importante primero." if i % 3 else "收到\uff01"
        )
        msgs.append(assistant(f"{reply} Detalle {i}: " + "una idea más; " * (i % 4)))
    return msgs


@pytest.mark.parametrize("summarizer", ["extractive", "llm"])
def test_a_small_window_stays_under_its_target_after_compaction(
    counter: TokenCounter, summarizer: str
) -> None:
    # In a 6,000-token window the summary's headings and the ledger's floor once pushed the
    # compacted transcript past its target share: they are counted inside the room now, and a
    # ledger of CJK text (sized by bytes) is checked by its exact count.
    msgs = small_window_chat()
    tokens = sum(counter.count_messages(msgs))
    config = CompressConfig(context_length=int(tokens / 0.85))
    chosen = ExtractiveSummarizer() if summarizer == "extractive" else ScriptedSummarizer()
    result = run(msgs, counter, chosen, config=config)
    assert result.report.tokens_after <= result.report.target_tokens
    assert result.report.target_tokens <= config.context_length * config.said_max_ratio
