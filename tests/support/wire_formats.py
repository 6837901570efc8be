"""Transcripts in Anthropic Messages and OpenAI Responses form, and those providers' rules.

The generated transcripts (tests/strategies.py) are chat messages; ``to_anthropic`` and
``to_responses`` write them as a gateway of that provider would hold them, with what such
gateways carry and we must return untouched: thinking blocks with signatures before tool use,
``cache_control`` breakpoints, ``is_error`` results, reasoning items with encrypted content, a
provider ``compaction`` item, item ids and statuses. The rule checkers say what a provider would
refuse: they are written from the providers' documentation, not from our writer.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from worker.compressor.messages import Message, content_text

OPAQUE_PREFIX = "OPAQUE-"  # every signature and encrypted payload starts with it


def _opaque(rng: random.Random, kind: str) -> str:
    return f"{OPAQUE_PREFIX}{kind}-" + "".join(
        rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(40)
    )


def _input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"raw": arguments}
    return value if isinstance(value, dict) else {"value": value}


def _ids(msgs: Sequence[Message], prefix: str) -> Iterator[dict[str, str]]:
    """For each message, its call ids renamed unique over the transcript (providers want
    them so; the generated ones may repeat from one turn to the next)."""
    n = 0
    current: dict[str, str] = {}
    for msg in msgs:
        if msg.tool_calls:
            current = {}
            for call in msg.tool_calls:
                n += 1
                current[call.id] = f"{prefix}{n:04d}"
        yield current


def to_anthropic(msgs: Sequence[Message], seed: int) -> tuple[Any, list[dict[str, Any]]]:
    """``(system, messages)`` of a chat transcript, as an Anthropic gateway holds it."""
    rng = random.Random(seed)
    system: Any = None
    turns: list[dict[str, Any]] = []
    for msg, ids in zip(msgs, _ids(msgs, "toolu_"), strict=True):
        text = content_text(msg.content)
        if msg.role == "system":
            cached = [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]
            system = cached if rng.randrange(2) else text
        elif msg.role == "assistant":
            turns.append(_anthropic_assistant(msg, ids, rng))
        elif msg.role == "tool":
            _user_blocks(turns, [_anthropic_result(text, ids[msg.tool_call_id or ""], rng)])
        else:
            _anthropic_user(turns, msg, rng)
    return system, turns


def _anthropic_assistant(msg: Message, ids: dict[str, str], rng: random.Random) -> dict[str, Any]:
    text = content_text(msg.content)
    if not msg.tool_calls and text and rng.randrange(2):
        return {"role": "assistant", "content": text}
    blocks: list[dict[str, Any]] = []
    if msg.tool_calls and rng.randrange(3):
        thinking = f"Plan: {text[:40]}"
        blocks.append({"type": "thinking", "thinking": thinking, "signature": _opaque(rng, "sig")})
    elif rng.randrange(8) == 0:
        blocks.append({"type": "redacted_thinking", "data": _opaque(rng, "redacted")})
    if text:
        blocks.append({"type": "text", "text": text})
    for call in msg.tool_calls:
        use = {"type": "tool_use", "id": ids[call.id], "name": call.name}
        blocks.append({**use, "input": _input(call.arguments)})
    return {"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]}


def _anthropic_result(text: str, call_id: str, rng: random.Random) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": text if rng.randrange(2) else [{"type": "text", "text": text}],
    }
    if failed(text):
        result["is_error"] = True
    if rng.randrange(5) == 0:
        result["cache_control"] = {"type": "ephemeral"}
    return result


_RETURNCODE = re.compile(r"<returncode>(\d+)</returncode>")


def failed(text: str) -> bool:
    """Whether the agent's harness would have flagged the result ``is_error``: a non-zero
    return code (mini-SWE-agent's tag, Claude Code's "Exit code N" first line) or a tool error
    (Claude Code's ``<tool_use_error>``)."""
    code = _RETURNCODE.search(text[:200])
    if code is not None:
        return code.group(1) != "0"
    head = text.lstrip()[:40]
    if head.startswith("Exit code "):
        return not head.startswith("Exit code 0")
    return "<tool_use_error>" in text[:200]


def _anthropic_user(turns: list[dict[str, Any]], msg: Message, rng: random.Random) -> None:
    text = content_text(msg.content)
    parts: list[dict[str, Any]] = []
    for part in _parts(msg, text):
        if part.get("type") == "text":
            parts.append({"type": "text", "text": part["text"]})
        else:
            data = str(part.get("image_url", {}).get("url", "")).split(",", 1)[-1]
            source = {"type": "base64", "media_type": "image/png", "data": data}
            parts.append({"type": "image", "source": source})
    if turns and turns[-1]["role"] == "user":
        _user_blocks(turns, parts)  # the user's words after the tool results
    elif len(parts) == 1 and rng.randrange(2):
        turns.append({"role": "user", "content": parts[0]["text"]})
    else:  # a field no one here knows rides along
        turns.append({"role": "user", "content": parts, "metadata_note": "kept as it came"})


def _parts(msg: Message, text: str) -> tuple[Mapping[str, Any], ...]:
    """A user message's parts (a string content as one text part)."""
    content = msg.content
    return content if isinstance(content, tuple) else ({"type": "text", "text": text},)


def _user_blocks(turns: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> None:
    if turns and turns[-1]["role"] == "user" and isinstance(turns[-1]["content"], list):
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": "user", "content": blocks})


def to_responses(msgs: Sequence[Message], seed: int) -> list[dict[str, Any]]:
    """The input items of a chat transcript, as a Responses gateway holds them."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for n, (msg, ids) in enumerate(zip(msgs, _ids(msgs, "call_"), strict=True)):
        text = content_text(msg.content)
        if msg.role == "system":
            role = rng.choice(("system", "developer"))
            items.append(
                {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
            )
            if rng.randrange(3) == 0:
                items.append(
                    {
                        "type": "compaction",
                        "id": f"cmp_{n}",
                        "encrypted_content": _opaque(rng, "compaction"),
                    }
                )
        elif msg.role == "user":
            parts: list[dict[str, Any]] = []
            for part in _parts(msg, text):
                if part.get("type") == "text":
                    parts.append({"type": "input_text", "text": part["text"]})
                else:
                    parts.append(
                        {
                            "type": "input_image",
                            "image_url": part["image_url"]["url"],
                            "detail": "auto",
                        }
                    )
            if len(parts) == 1 and rng.randrange(3) == 0:
                items.append({"role": "user", "content": text})  # the short form, no type
            else:
                items.append({"type": "message", "role": "user", "content": parts})
        elif msg.role == "assistant":
            if rng.randrange(2):
                items.append(
                    {
                        "type": "reasoning",
                        "id": f"rs_{n}",
                        "summary": [],
                        "encrypted_content": _opaque(rng, "reasoning"),
                    }
                )
            if text:
                items.append(
                    {
                        "type": "message",
                        "id": f"msg_{n}",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                )
            for call in msg.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "id": f"fc_{ids[call.id]}",
                        "call_id": ids[call.id],
                        "name": call.name,
                        "arguments": call.arguments,
                        "status": "completed",
                    }
                )
        else:
            current = _last_ids(msgs, n)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": current[msg.tool_call_id or ""],
                    "output": text,
                }
            )
    return items


def _last_ids(msgs: Sequence[Message], n: int) -> dict[str, str]:
    ids = list(_ids(msgs, "call_"))
    for k in range(n, -1, -1):
        if msgs[k].tool_calls:
            return ids[k]
    return {}


# ---------------------------------------------------------------------------------------------
# the providers' rules


def anthropic_violations(system: Any, turns: Sequence[dict[str, Any]]) -> list[str]:
    """What the Messages API would refuse: turns that do not alternate or do not open with the
    user; a tool_result not answering a tool_use of the turn just before, or after other
    blocks; a tool_use left unanswered by the user turn that follows it; a thinking block after
    a tool_use of its turn; system blocks other than text."""
    out: list[str] = []
    if isinstance(system, list) and any(b.get("type") != "text" for b in system):
        out.append("system holds a block that is not text")
    if turns and turns[0].get("role") != "user":
        out.append("the first turn is not the user's")
    for i, turn in enumerate(turns):
        role = turn.get("role")
        if i and turns[i - 1].get("role") == role:
            out.append(f"turns {i - 1} and {i} are both {role}")
        content = turn.get("content")
        if not content:
            out.append(f"turn {i} has no content")
        blocks = content if isinstance(content, list) else []
        if role == "assistant":
            out += [f"turn {i}: {v}" for v in _assistant_turn_violations(turns, i, blocks)]
        else:
            out += [f"turn {i}: {v}" for v in _user_turn_violations(turns, i, blocks)]
    return out


def _assistant_turn_violations(
    turns: Sequence[dict[str, Any]], i: int, blocks: list[dict[str, Any]]
) -> list[str]:
    out = []
    kinds = [b.get("type") for b in blocks]
    if "tool_use" in kinds and any(
        k in ("thinking", "redacted_thinking") for k in kinds[kinds.index("tool_use") :]
    ):
        out.append("a thinking block after a tool_use")
    uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    if uses and i + 2 < len(turns):  # the last exchange may be open
        nxt = turns[i + 1]["content"]
        answered = {b.get("tool_use_id") for b in nxt} if isinstance(nxt, list) else set()
        missing = [u for u in uses if u not in answered]
        if missing:
            out.append(f"tool_use {missing} unanswered")
    return out


def _user_turn_violations(
    turns: Sequence[dict[str, Any]], i: int, blocks: list[dict[str, Any]]
) -> list[str]:
    out = []
    kinds = [b.get("type") for b in blocks]
    results = [k for k, t in enumerate(kinds) if t == "tool_result"]
    others = [k for k, t in enumerate(kinds) if t != "tool_result"]
    if results and others and others[0] < results[-1]:
        out.append("a tool_result after another block")
    prev = turns[i - 1]["content"] if i else []
    asked = (
        {b.get("id") for b in prev if b.get("type") == "tool_use"}
        if isinstance(prev, list)
        else set()
    )
    for k in results:
        if blocks[k].get("tool_use_id") not in asked:
            out.append(f"tool_result {blocks[k].get('tool_use_id')} answers no tool_use before it")
    return out


def responses_violations(items: Sequence[dict[str, Any]]) -> list[str]:
    """What the Responses API would refuse: an output with no call before it, a call answered
    twice."""
    out: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind in ("function_call", "custom_tool_call"):
            called.add(item["call_id"])
        elif kind in ("function_call_output", "custom_tool_call_output"):
            cid = item["call_id"]
            if cid not in called:
                out.append(f"item {i}: output {cid} answers no call before it")
            if cid in answered:
                out.append(f"item {i}: call {cid} answered twice")
            answered.add(cid)
    return out


def opaque_values(value: Any) -> set[str]:
    """Every signature and encrypted payload in ``value`` (strings that start with
    ``OPAQUE_PREFIX``)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str) and v.startswith(OPAQUE_PREFIX):
            found.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found


def blocks_with_opaque(value: Any) -> list[str]:
    """The blocks and items that carry an opaque value, each as canonical JSON."""
    found: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if any(isinstance(x, str) and x.startswith(OPAQUE_PREFIX) for x in v.values()):
                found.append(json.dumps(v, sort_keys=True))
            else:
                stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found
