"""Cooldowns after summarizer failures: how long, by error class, and their state in Redis.

A failure puts the session on cooldown; failures that say the provider itself is unusable (auth,
no provider, rate limit) also put the endpoint on cooldown so other sessions do not hammer it.
Automatic compactions (hygiene, sweep) respect both; a manual ``force`` compaction bypasses them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import redis

from worker import keys
from worker.settings import Settings

Scope = Literal["session", "endpoint"]

_PROTOCOL_CLASSES = frozenset({"protocol_error", "empty_summary"})
# The provider itself is unusable (credentials, configuration, rate limit, down), not this input.
_ENDPOINT_CLASSES = frozenset({"auth", "no_provider", "rate_limited", "connection_error"})
_STREAK_TTL_S = 3_600


@dataclass(frozen=True, slots=True)
class Cooldown:
    scope: Scope
    error_class: str
    until: float  # epoch seconds

    def remaining_s(self, now: float | None = None) -> float:
        return max(0.0, self.until - (time.time() if now is None else now))


def cooldown_seconds(
    error_class: str,
    *,
    settings: Settings,
    timeout_streak: int = 1,
    retry_after_s: float | None = None,
) -> float:
    """Seconds of cooldown for one failure of ``error_class``."""
    if error_class == "no_provider":
        return settings.cooldown_no_provider_s
    if error_class in _PROTOCOL_CLASSES:
        return settings.cooldown_protocol_s  # broken JSON or a closed stream is often transient
    if error_class == "timeout":
        ladder = settings.cooldown_timeout_ladder_s or [settings.cooldown_default_s]
        return ladder[min(max(timeout_streak, 1), len(ladder)) - 1]
    if error_class == "rate_limited" and retry_after_s is not None:
        return max(retry_after_s, 1.0)
    return settings.cooldown_default_s


def record_failure(
    client: redis.Redis,
    *,
    settings: Settings,
    session_id: str,
    endpoint: str,
    error_class: str,
    retry_after_s: float | None = None,
) -> Cooldown:
    """Put the session (and for provider-wide classes, the endpoint) on cooldown."""
    streak = 1
    if error_class == "timeout":
        streak_key = keys.timeout_streak(endpoint)
        streak = int(client.incr(streak_key))
        client.expire(streak_key, _STREAK_TTL_S)
    seconds = cooldown_seconds(
        error_class, settings=settings, timeout_streak=streak, retry_after_s=retry_after_s
    )
    until = time.time() + seconds
    value = json.dumps({"error_class": error_class, "until": until})
    pipe = client.pipeline()
    pipe.set(keys.session_cooldown(session_id), value, px=int(seconds * 1000))
    if error_class in _ENDPOINT_CLASSES:
        pipe.set(keys.endpoint_cooldown(endpoint), value, px=int(seconds * 1000))
    pipe.execute()
    return Cooldown(scope="session", error_class=error_class, until=until)


def record_success(client: redis.Redis, *, session_id: str, endpoint: str) -> None:
    """A summary came back: clear the session's cooldown and the endpoint's timeout streak."""
    client.delete(keys.session_cooldown(session_id), keys.timeout_streak(endpoint))


def forget_session(client: redis.Redis, *, session_id: str) -> None:
    """The session was erased: its cooldown goes too (a new session may take the id)."""
    client.delete(keys.session_cooldown(session_id))


def active_cooldown(client: redis.Redis, *, session_id: str, endpoint: str) -> Cooldown | None:
    """The cooldown that ends last among the session's and the endpoint's, if any is active."""
    raw_session, raw_endpoint = client.mget(
        [keys.session_cooldown(session_id), keys.endpoint_cooldown(endpoint)]
    )
    found = [
        c
        for c in (_decode("session", raw_session), _decode("endpoint", raw_endpoint))
        if c is not None and c.remaining_s() > 0
    ]
    return max(found, key=lambda c: c.until, default=None)


def active_cooldowns(
    client: redis.Redis, *, session_ids: Sequence[str], endpoint: str
) -> dict[str, Cooldown]:
    """``active_cooldown`` for many sessions in one round trip: those with one active."""
    if not session_ids:
        return {}
    raw_endpoint, *raw_sessions = client.mget(
        [keys.endpoint_cooldown(endpoint), *(keys.session_cooldown(s) for s in session_ids)]
    )
    shared = _decode("endpoint", raw_endpoint)
    out = {}
    for session_id, raw in zip(session_ids, raw_sessions, strict=True):
        found = [
            c for c in (_decode("session", raw), shared) if c is not None and c.remaining_s() > 0
        ]
        if found:
            out[session_id] = max(found, key=lambda c: c.until)
    return out


def _decode(scope: Scope, raw: object) -> Cooldown | None:
    if not isinstance(raw, (bytes, str)):
        return None
    data = json.loads(raw)
    return Cooldown(scope=scope, error_class=str(data["error_class"]), until=float(data["until"]))


def endpoint_id(settings: Settings) -> str:
    """The endpoint a cooldown is shared across: the LLM base URL, or "extractive"."""
    return (settings.llm_base_url or "extractive").rstrip("/")
