"""Checking a job-completion callback in the gateway's webhook receiver.

The rule is the worker's own (``worker.signing``): HMAC-SHA256 of the exact body bytes with the
shared ``COMPACTION_CALLBACK_SECRET``. The body's ``sent_at`` is signed too, so refusing old
callbacks (``max_age_s``) refuses replays of a captured one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from api.client.errors import CallbackSignatureError, UnexpectedAnswerError
from api.client.models import CallbackEvent
from worker.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify


def verify_callback(
    body: bytes,
    headers: Mapping[str, str],
    *,
    secret: str,
    max_age_s: float | None = 300.0,
    now_s: float | None = None,
) -> CallbackEvent:
    """The callback's event, once its signature and age check out; else
    ``CallbackSignatureError``.

    Args:
        body: the request body exactly as received (before any JSON parsing).
        headers: the request headers (any mapping; names are matched without case).
        max_age_s: refuse a callback sent longer ago (or further ahead) than this; None: any age.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    if not verify(body, lowered.get(SIGNATURE_HEADER.lower()), secret):
        raise CallbackSignatureError(
            f"{SIGNATURE_HEADER} is missing or does not match the body (another secret, or the "
            "body was changed)"
        )
    try:
        event = CallbackEvent.from_json(json.loads(body))
    except (ValueError, KeyError, TypeError, UnexpectedAnswerError) as exc:
        raise CallbackSignatureError(f"a signed body that is no callback event: {exc}") from exc
    stamped = lowered.get(TIMESTAMP_HEADER.lower())
    if stamped is not None and stamped != str(event.sent_at):
        raise CallbackSignatureError(
            f"{TIMESTAMP_HEADER} {stamped!r} is not the signed sent_at {event.sent_at}"
        )
    if max_age_s is not None:
        age_s = (time.time() if now_s is None else now_s) - event.sent_at
        if abs(age_s) > max_age_s:
            raise CallbackSignatureError(
                f"the callback was sent {age_s:.0f}s ago; at most {max_age_s:g}s is accepted"
            )
    return event
