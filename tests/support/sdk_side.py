"""Runs in bench/.sdk-venv (the ``anthropic`` and ``openai`` SDKs; bench/sdk_env.py starts it).

Each request line is ``{"format", "messages", "system"}``; the answer line is ``{"problems":
[...]}``: what pydantic, over the SDK's own request types, refuses. The SDKs type their params
as TypedDicts, some fields ``Iterable``: a validated iterable is consumed here, so that what it
holds is validated too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pydantic
from anthropic.types import MessageParam, TextBlockParam
from openai.types.responses import ResponseInputParam

ANTHROPIC_MESSAGES = pydantic.TypeAdapter(list[MessageParam])
ANTHROPIC_SYSTEM = pydantic.TypeAdapter(str | list[TextBlockParam])
RESPONSES_INPUT = pydantic.TypeAdapter(ResponseInputParam)


def consumed(value: Any) -> Any:
    """``value`` with every lazily validated iterable in it read to its end."""
    if isinstance(value, dict):
        return {k: consumed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [consumed(v) for v in value]
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if (
        isinstance(value, Iterator)
        or hasattr(value, "__next__")
        or "ValidatorIterator" in type(value).__name__
    ):
        return [consumed(v) for v in value]
    return value


def problems(request: dict[str, Any]) -> list[str]:
    out: list[str] = []
    checks: list[tuple[pydantic.TypeAdapter[Any], Any, str]] = []
    if request["format"] == "anthropic.messages":
        checks.append((ANTHROPIC_MESSAGES, request["messages"], "messages"))
        if request.get("system") is not None:
            checks.append((ANTHROPIC_SYSTEM, request["system"], "system"))
    elif request["format"] == "openai.responses":
        checks.append((RESPONSES_INPUT, request["messages"], "input"))
    else:
        return [f"no SDK type for {request['format']!r}"]
    for adapter, value, where in checks:
        try:
            consumed(adapter.validate_python(value))
        except pydantic.ValidationError as exc:
            for error in exc.errors()[:5]:
                loc = ".".join(str(p) for p in error["loc"])
                out.append(f"{where}.{loc}: {error['msg']}")
    return out


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("versions"):
            answer: dict[str, Any] = {
                "versions": {"anthropic": anthropic.__version__, "openai": openai.__version__}
            }
        else:
            answer = {"problems": problems(request)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
