"""``compaction compress FILE``: the offline command, run in-process through the real CLI."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from bench.retention.corpus import CORPUS_DIR
from tests.data import REAL_TRANSCRIPTS_DIR
from tests.factories import make_transcript
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.wire_formats import (
    anthropic_violations,
    responses_violations,
    to_anthropic,
    to_responses,
)
from worker.compressor.messages import parse_messages
from worker.settings import get_settings

# A real agent session (27,612 tokens) and a long chat of the retention corpus (40,256 tokens),
# each with a window it fills to 85%, as when hygiene queues its compaction.
REAL_SESSION = REAL_TRANSCRIPTS_DIR / "deepseek_chat_test_1-100__django__django-11001.json.gz"
CHAT = CORPUS_DIR / "chat-1.json.gz"


@pytest.fixture(autouse=True)
def settings_from_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fresh settings per test, with no LLM configured unless a test configures one."""
    monkeypatch.delenv("COMPACTION_LLM_BASE_URL", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def write(tmp_path: Path, doc: Any, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["compress", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_compacts_a_message_list_with_the_extractive_summarizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = make_transcript(turns=20)
    code, out, err = run_cli([str(write(tmp_path, wire)), "--context-length", "8000"], capsys)
    assert (code, err) == (0, "")
    result = json.loads(out)
    report = result["report"]
    assert report["summarizer"] == "extractive" and not report["fallback_used"]
    assert report["messages_before"] == len(wire)
    assert report["messages_after"] == len(result["messages"]) < len(wire)
    assert report["tokens_after"] < report["tokens_before"]
    parse_messages(result["messages"])  # a valid transcript comes out
    assert result["messages"][-1] == wire[-1]


def test_accepts_a_messages_object_a_focus_and_writes_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"messages": make_transcript(turns=20), "session": "ignored"}
    out_path = tmp_path / "out.json"
    args = [str(write(tmp_path, doc)), "--context-length", "8000", "--focus", "billing"]
    code, out, err = run_cli([*args, "--out", str(out_path), "--model", "gpt-4o"], capsys)
    assert (code, out) == (0, "")
    result = json.loads(out_path.read_text(encoding="utf-8"))
    report = result["report"]
    assert report["noop_reason"] is None
    # Nothing on stdout, so one line on stderr says what was written.
    assert err == (
        f"compaction compress: wrote {out_path}: {report['messages_before']} -> "
        f"{report['messages_after']} messages, {report['tokens_before']:,} -> "
        f"{report['tokens_after']:,} tokens ({report['savings_pct']:.1f}% saved), "
        "extractive summary\n"
    )


def test_reads_a_gzip_compressed_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = make_transcript(turns=20)
    plain = write(tmp_path, wire)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    args = ["--context-length", "8000"]
    code, from_gzip, err = run_cli([str(packed), *args], capsys)
    assert (code, err) == (0, "")
    assert from_gzip == run_cli([str(plain), *args], capsys)[1]
    # Told by its first bytes, not its name.
    renamed = packed.rename(tmp_path / "transcript.json")
    assert run_cli([str(renamed), *args], capsys)[1] == from_gzip


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (gzip.compress(b"[]")[:12], "looks gzip-compressed but cannot be unpacked"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8 text (byte 0x89 at offset 0)"),
    ],
)
def test_a_broken_gzip_or_a_binary_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(content)
    code, out, err = run_cli([str(path)], capsys)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    assert err.startswith(f"compaction compress: error: {path}: ") and needle in err
    assert "codec" not in err


@pytest.mark.parametrize("to_file", [False, True])
def test_a_result_larger_than_the_window_comes_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], to_file: bool
) -> None:
    wire = make_transcript(turns=6)
    wire.append({"role": "user", "content": "word " * 3000})  # kept verbatim: the latest turn
    out_path = tmp_path / "out.json"
    args = [str(write(tmp_path, wire)), "--context-length", "2000"]
    code, out, err = run_cli([*args, "--out", str(out_path)] if to_file else args, capsys)
    result = json.loads(out_path.read_text(encoding="utf-8") if to_file else out)
    tokens = result["report"]["tokens_after"]
    assert code == 0 and tokens > 2000
    warning = (
        f"compaction compress: warning: the result ({tokens:,} tokens) does not fit the "
        "2,000-token window: the model cannot take it as it is\n"
    )
    assert err.endswith(warning) and err.count("\n") == (2 if to_file else 1)


@pytest.mark.parametrize(
    ("path", "window", "target"),
    [(REAL_SESSION, 32_500, 6_500), (CHAT, 47_400, 3_000)],
    ids=["real-session", "chat"],
)
def test_a_size_asked_for_is_kept_to(
    capsys: pytest.CaptureFixture[str], path: Path, window: int, target: int
) -> None:
    args = [str(path), "--context-length", str(window)]
    code, out, err = run_cli(args, capsys)
    assert (code, err) == (0, "")
    by_share = json.loads(out)["report"]  # a quarter of the window, or grown to hold what was said
    code, out, err = run_cli([*args, "--target-tokens", str(target)], capsys)
    assert (code, err) == (0, "")
    result = json.loads(out)
    report = result["report"]
    assert report["target_tokens"] == target and report["noop_reason"] is None
    assert report["tokens_after"] <= target < by_share["tokens_after"]
    parse_messages(result["messages"])


def test_a_result_larger_than_the_size_asked_for_comes_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = make_transcript(turns=6)
    wire.append({"role": "user", "content": "word " * 3000})  # kept verbatim: the latest turn
    args = [str(write(tmp_path, wire)), "--context-length", "8000", "--target-tokens", "1000"]
    code, out, err = run_cli(args, capsys)
    tokens = json.loads(out)["report"]["tokens_after"]
    assert code == 0 and 1000 < tokens <= 8000
    assert err == (
        f"compaction compress: warning: the result ({tokens:,} tokens) is larger than the "
        "1,000 tokens asked for (--target-tokens)\n"
    )


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--target-tokens", "0"], "--target-tokens must be a positive number of tokens, not 0"),
        (["--target-tokens", "-5"], "--target-tokens must be a positive number of tokens, not -5"),
        # Over the default window (128,000), and over the one given.
        (["--target-tokens", "128001"], "--target-tokens must be at most the context length (128,000 tokens), not 128,001"),
        (["--context-length", "8000", "--target-tokens", "8001"], "--target-tokens must be at most the context length (8,000 tokens), not 8,001"),
        (["--target-tokens", str(10**30)], f"--target-tokens must be at most the context length (128,000 tokens), not {10**30:,}"),
    ],
)  # fmt: skip
def test_a_bad_target_size_is_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], problem: str
) -> None:
    code, out, err = run_cli([str(write(tmp_path, make_transcript(20))), *extra], capsys)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    assert err == f"compaction compress: error: {problem}\n"


@pytest.mark.parametrize("value", ["many", "2.5", "4e3", ""])
def test_a_target_size_that_is_no_integer_is_refused_by_the_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = str(write(tmp_path, make_transcript(20)))
    with pytest.raises(SystemExit) as exited:  # argparse's own refusal, as for --context-length
        run_cli([path, "--target-tokens", value], capsys)
    assert exited.value.code == 2
    _, err = capsys.readouterr()
    assert err.splitlines()[-1] == (
        f"compaction compress: error: argument --target-tokens: invalid int value: '{value}'"
    )


def test_uses_the_llm_the_settings_describe(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script("summ", Reply.ok('## Active Task\nUser asked: "continue"'))
    monkeypatch.setenv("COMPACTION_LLM_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("COMPACTION_SUMMARY_MODEL", "summ")
    monkeypatch.setenv("COMPACTION_MAIN_MODEL", "main")
    path = write(tmp_path, make_transcript(turns=20))
    code, out, err = run_cli([str(path), "--context-length", "8000", "--focus", "billing"], capsys)
    assert (code, err) == (0, "")
    report = json.loads(out)["report"]
    assert report["summarizer"] == "summ" and report["summarizer_calls"] == 1
    sent = fake_openai.requests[0].messages
    assert 'Focus topic: "billing"' in sent[-1]["content"]


def test_a_failing_llm_falls_back_and_says_so(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script("*", *[Reply.error(500)] * 4)
    monkeypatch.setenv("COMPACTION_LLM_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("COMPACTION_SUMMARY_MODEL", "summ")
    path = write(tmp_path, make_transcript(turns=20))
    code, out, _ = run_cli([str(path), "--context-length", "8000"], capsys)
    assert code == 0
    report = json.loads(out)["report"]
    assert report["fallback_used"] and report["dropped_count"] > 0
    assert report["error_class"] == "server_error"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('[{"role"', "invalid JSON at line 1, column 9"),
        ('{"msgs": []}', 'expected a JSON list of messages or {"messages": [...]}'),
        ('"hello"', "invalid transcript: messages must be a JSON array, got string"),
        (
            '[{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]',
            "invalid transcript: messages[1]: a tool message needs a non-empty tool_call_id",
        ),
        ("[" * 5_000 + "]" * 5_000, "JSON nested too deeply to parse"),
        (
            '[{"role": "user", "content": "x", "meta": ' + "[" * 70 + "]" * 70 + "}]",
            "messages[0]: a message may nest objects and arrays at most 64 levels deep",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = run_cli([str(path)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"compaction compress: error: {path}: ") and needle in err


def test_a_missing_file_or_a_folder_is_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([str(tmp_path / "nope.json")], capsys)
    assert code == 2 and "nope.json: no such file" in err
    code, _, err = run_cli([str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err
    code, _, err = run_cli([str(write(tmp_path, [])), "--context-length", "0"], capsys)
    assert code == 2 and "--context-length must be a positive number" in err


def test_a_bad_setting_is_named_in_one_line_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_SUMMARY_MODEL", "m" * 201)
    monkeypatch.setenv("COMPACTION_MIN_MESSAGES", "a few")
    code, out, err = run_cli([str(write(tmp_path, make_transcript(3)))], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("compaction compress: bad configuration: ")
    assert "COMPACTION_MIN_MESSAGES: Input should be a valid integer" in err
    assert "COMPACTION_SUMMARY_MODEL: String should have at most 200 characters" in err


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        # Beat read the cron only when it started: a traceback, and no sweeps.
        ({"COMPACTION_SWEEP_CRON": "61 3 * * *"}, "COMPACTION_SWEEP_CRON: '61 3 * * *' is not a cron expression: Invalid end"),
        ({"COMPACTION_SWEEP_CRON": "0 3 * *"}, "COMPACTION_SWEEP_CRON: '0 3 * *' is not a cron expression: it needs 5 fields"),
        ({"COMPACTION_SWEEP_CRON": "bad"}, "COMPACTION_SWEEP_CRON: 'bad' is not a cron expression: it needs 5 fields: minute hour"),
        # Celery's ParseException is no ValueError: it was a traceback.
        ({"COMPACTION_SWEEP_CRON": "*/ 3 * * *"}, "COMPACTION_SWEEP_CRON: '*/ 3 * * *' is not a cron expression: empty filter"),
        ({"COMPACTION_API_TOKEN": " "}, "COMPACTION_API_TOKEN: is set but empty or blank"),
        # No summarizer call could hold the prompt and the answer's room.
        ({"COMPACTION_SUMMARY_CONTEXT_LENGTH": "0"}, "COMPACTION_SUMMARY_CONTEXT_LENGTH: Input should be greater than or equal to 4096"),
        ({"COMPACTION_HYGIENE_THRESHOLD": "85"}, "COMPACTION_HYGIENE_THRESHOLD: Input should be less than or equal to 1"),
        ({"COMPACTION_TARGET_RATIO": "0"}, "COMPACTION_TARGET_RATIO: Input should be greater than 0"),
        ({"COMPACTION_TARGET_RATIO": "a quarter"}, "COMPACTION_TARGET_RATIO: Input should be a valid number"),
        # A compacted session would be over the threshold again: the next job at once.
        ({"COMPACTION_TARGET_RATIO": "0.85"}, "COMPACTION_TARGET_RATIO must be below COMPACTION_HYGIENE_THRESHOLD (0.85 >= 0.85)"),
        ({"COMPACTION_TARGET_RATIO": "0.3", "COMPACTION_HYGIENE_THRESHOLD": "0.25"}, "COMPACTION_TARGET_RATIO must be below COMPACTION_HYGIENE_THRESHOLD (0.3 >= 0.25)"),
        ({"COMPACTION_WORKER_CONCURRENCY": "0"}, "COMPACTION_WORKER_CONCURRENCY: Input should be greater than or equal to 1"),
        ({"COMPACTION_COOLDOWN_TIMEOUT_LADDER_S": "[]"}, "COMPACTION_COOLDOWN_TIMEOUT_LADDER_S: List should have at least 1 item"),
        ({"COMPACTION_JOB_SOFT_TIME_LIMIT_S": "900"}, "COMPACTION_JOB_SOFT_TIME_LIMIT_S must be below COMPACTION_JOB_HARD_TIME_LIMIT_S (900 >= 900)"),
    ],
)  # fmt: skip
def test_settings_out_of_range_are_refused_at_start(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    problem: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_cli([str(write(tmp_path, make_transcript(3)))], capsys)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    assert problem in err
    assert "Value error" not in err  # pydantic's prefix says nothing to whoever fixes the variable


@pytest.mark.parametrize("fmt", ["anthropic.messages", "openai.responses"])
def test_compacts_a_transcript_in_another_wire_format_and_answers_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    chat = parse_messages(make_transcript(turns=20))
    if fmt == "anthropic.messages":
        system, turns = to_anthropic(chat, seed=3)
        doc: dict[str, Any] = {"system": system, "messages": turns}
    else:
        doc = {"messages": to_responses(chat, seed=3)}
    args = [str(write(tmp_path, doc)), "--context-length", "8000", "--format", fmt]
    code, out, err = run_cli(args, capsys)
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["report"]["messages_after"] < result["report"]["messages_before"]
    if fmt == "anthropic.messages":
        assert anthropic_violations(result["system"], result["messages"]) == []
        # The system prompt stays, the compaction note after it.
        original = system if isinstance(system, str) else system[0]["text"]
        kept = (
            result["system"] if isinstance(result["system"], str) else result["system"][0]["text"]
        )
        assert kept.startswith(original)
    else:
        assert "system" not in result
        assert responses_violations(result["messages"]) == []
    assert result["messages"][-1] == doc["messages"][-1]


def test_an_unknown_format_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, make_transcript(turns=3))
    code, out, err = run_cli([str(path), "--format", "anthropic"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "compaction compress: error: --format: unknown format 'anthropic': one of "
        "openai.chat, anthropic.messages, openai.responses\n"
    )


def test_a_malformed_block_names_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"messages": [{"role": "user", "content": [{"type": "text"}]}]}
    code, _, err = run_cli([str(write(tmp_path, doc)), "--format", "anthropic.messages"], capsys)
    assert code == 2
    assert err.endswith("invalid transcript: messages[0].content[0].text: must be a string\n"), err
