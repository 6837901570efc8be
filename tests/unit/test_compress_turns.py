"""The window as the summarizer sees it: turns.py and the bounds summarize.py keeps."""

from __future__ import annotations

import json
from datetime import date

from tests.factories import make_messages
from tests.support.summarizers import ScriptedSummarizer
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.messages import Message, ToolCall, assistant, user
from worker.compressor.tokens import TokenCounter
from worker.compressor.tooluse import Shown, read_tool_uses
from worker.compressor.turns import Window, _piecewise, build_turns, redact_turn

KEY = "sk-proj-Zq8Xk2LmN4pQ7rS9tUvWxYz0123456789AbCd"


def test_a_turn_is_redacted_in_text_and_arguments_and_stays_valid_json() -> None:
    args = json.dumps({"command": f"curl -H 'Authorization: Bearer {KEY}' x", "n": 2})
    msg = assistant(f"using {KEY}", [ToolCall(id="c1", name="bash", arguments=args)])
    clean, count = redact_turn(msg)
    assert count == 2
    assert KEY not in str(clean.content) and KEY not in clean.tool_calls[0].arguments
    assert json.loads(clean.tool_calls[0].arguments)["n"] == 2
    assert clean.tool_calls[0].id == "c1"


def test_a_clean_turn_comes_back_as_the_same_object() -> None:
    msg = assistant("nothing secret", [ToolCall(id="c1", name="bash", arguments='{"a": 1}')])
    clean, count = redact_turn(msg)
    assert clean is msg and count == 0


def test_a_turn_with_parts_has_its_image_urls_redacted_too() -> None:
    url = f"https://cdn.example.com/x.png?access_token={KEY}"
    msg = Message(
        role="user",
        content=({"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": url}}),
    )
    clean, count = redact_turn(msg)
    assert count == 1 and KEY not in json.dumps(clean.content)


def test_the_piece_by_piece_path_gives_what_one_pass_gives() -> None:
    msg = assistant(
        f"token {KEY}", [ToolCall(id="c", name="bash", arguments=json.dumps({"k": KEY}))]
    )
    assert _piecewise(msg) == redact_turn(msg)


def test_turns_skip_standalone_summaries_and_mark_the_lifted_message() -> None:
    msgs = [user("ask"), assistant("a"), user("b")]
    built = build_turns(
        msgs,
        [10, 11, 12],
        Window(0, 3, summaries=(), lifted=0),
        reading=read_tool_uses(msgs),
        shown=Shown(redacting=False),
        config=CompressConfig(context_length=8_000),
    )
    assert [t.removed for t in built.turns] == [False, True, True]
    assert [t.known_tokens for t in built.turns] == [10, 11, 12]
    assert [t.at for t in built.turns] == [0, 1, 2]
    assert built.redactions == 0


def test_a_previous_summary_too_large_for_the_window_is_cut_to_fit(
    counter: TokenCounter,
) -> None:
    huge = "## Active Task\n" + "we did many things and kept notes about them. " * 4_000
    config = CompressConfig(context_length=8_000, summarizer_context_tokens=8_000)
    summarizer = ScriptedSummarizer()
    result = compress(
        make_messages(turns=12),
        config=config,
        summarizer=summarizer,
        counter=counter,
        today=date(2026, 1, 1),
        previous_summary=huge,
        compaction_count=1,
    )
    assert result.report.changed
    first = summarizer.requests[0]  # later calls carry the running summary the model wrote
    assert first.previous_summary is not None and "chars omitted" in first.previous_summary
    for request in summarizer.requests:
        assert counter.count_text(request.prompt) + request.max_output_tokens <= 8_000
