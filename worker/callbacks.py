"""Job-completion callbacks: a signed POST of the finished job's telemetry and the new version.

The body is canonical JSON; ``X-Compaction-Signature: sha256=<hex>`` is HMAC-SHA256 of exactly
those bytes with ``COMPACTION_CALLBACK_SECRET``. The body carries ``sent_at`` (also sent as
``X-Compaction-Timestamp``, epoch seconds) so a receiver can refuse replays: the timestamp it
checks is covered by the signature. Delivery is a Celery task of its own with retries; a failing
callback never changes the job's outcome, only its ``callback_status``. A URL whose host resolves
to an address no gateway lives at (``worker.callback_targets``) fails at once, without a retry.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import httpx

from worker import backoff, metrics
from worker.callback_targets import resolved_refusal
from worker.errors import CallbackDeliveryError
from worker.runtime import Runtime
from worker.signing import EVENT, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify
from worker.store import jobs
from worker.store.sessions import get_session

__all__ = ["EVENT", "EVENT_HEADER", "SIGNATURE_HEADER", "TIMESTAMP_HEADER", "sign", "verify"]

USER_AGENT = "compaction-queue-callbacks/1"
MAX_BACKOFF_S = 300.0


def callback_body(
    telemetry: Mapping[str, Any], *, session_id: str, version: int | None, sent_at: int
) -> bytes:
    """The bytes that are signed and sent (sorted keys, no spaces: stable to re-verify)."""
    document = {
        "event": EVENT,
        "session_id": session_id,
        "version": version,
        "sent_at": sent_at,
        "job": dict(telemetry),
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=_json_default)
    return text.encode()


def callback_headers(body: bytes, *, secret: str | None, sent_at: int) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: EVENT,
        TIMESTAMP_HEADER: str(sent_at),
    }
    if secret:
        headers[SIGNATURE_HEADER] = sign(body, secret)
    return headers


def post_callback(
    client: httpx.Client, url: str, body: bytes, *, secret: str | None, sent_at: int
) -> int:
    """POST once; the status on 2xx, else ``CallbackDeliveryError`` (transport errors too).

    Only the status is read: the answer's body is never downloaded, whatever its size.
    """
    headers = callback_headers(body, secret=secret, sent_at=sent_at)
    try:
        with client.stream("POST", url, content=body, headers=headers) as response:
            pass
    except httpx.HTTPError as exc:
        raise CallbackDeliveryError(f"{type(exc).__name__}: {exc}") from exc
    if not response.is_success:
        raise CallbackDeliveryError(
            f"callback answered HTTP {response.status_code}", status=response.status_code
        )
    return response.status_code


def backoff_s(attempt: int, *, base_s: float = 2.0) -> float:
    """Seconds before retry number ``attempt`` (1-based): up to 2, 4, 8, ... (at most five
    minutes), drawn at random below that (``worker.backoff``)."""
    return backoff.backoff_s(base_s, attempt - 1, MAX_BACKOFF_S)


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def deliver(rt: Runtime, job_id: str) -> dict[str, Any]:
    """Send one finished job's callback once and record it; ``CallbackDeliveryError`` if refused."""
    job = jobs.get_job(rt.db, job_id=job_id)
    session = get_session(rt.db, session_id=job.session_id)
    if not session.callback_url:
        return {"id": job_id, "callback_status": None}
    refusal = resolved_refusal(session.callback_url)
    if refusal is not None:
        raise CallbackDeliveryError(refusal, final=True)
    sent_at = int(time.time())
    version = job.version_after if job.version_after is not None else session.version
    body = callback_body(
        jobs.job_telemetry(job), session_id=session.id, version=version, sent_at=sent_at
    )
    secret = rt.settings.callback_secret
    # No redirects: the signed body goes to the URL the gateway registered, nowhere else.
    with httpx.Client(timeout=rt.settings.callback_timeout_s, follow_redirects=False) as client:
        status = post_callback(
            client, session.callback_url, body,
            secret=secret.get_secret_value() if secret else None, sent_at=sent_at,
        )  # fmt: skip
    jobs.record_callback(rt.db, job_id=job_id, status="delivered")
    metrics.callback_attempt("delivered")
    return {"id": job_id, "callback_status": "delivered", "http_status": status}


def record_failed_attempt(rt: Runtime, job_id: str, *, final: bool) -> None:
    outcome = "failed" if final else "retrying"
    jobs.record_callback(rt.db, job_id=job_id, status=outcome)
    metrics.callback_attempt(outcome)
