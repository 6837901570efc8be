"""How a job's outcome reaches Celery's events, so Flower tells a skipped job from a success.

Celery knows two ends of a task: it returned (SUCCESS) or it raised (FAILURE). A job has four,
and each is reported once, by ``report``:

- ``succeeded``: the task returns the telemetry as JSON text: SUCCESS, the result column shows it.
- ``failed``: the task raises ``JobFailedError`` carrying that text: FAILURE. A failed task's
  message is acknowledged (acks_late redelivers only after a lost worker), and the task lists
  the error as expected, so the worker logs one line without a traceback.
- ``skipped``, ``aborted``: the task sends a ``task-skipped`` / ``task-aborted`` event carrying
  that text as its result, then raises Celery's ``Ignore``: the message is acknowledged and no
  ``task-succeeded`` follows, so Flower shows the state SKIPPED / ABORTED (Celery's event state
  turns any other ``task-<name>`` event into the state ``<NAME>``).
- still open (another attempt owns the job): ``Ignore`` without an event; the owner reports.

Session id and trigger are in the task list from the start: ``worker.enqueue`` sends them as
the message's ``kwargsrepr`` (what Celery's events and Flower show as kwargs).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis
from celery import Task
from celery.exceptions import Ignore
from kombu.exceptions import OperationalError as BrokerError

from worker.compressor.redact import redact_text
from worker.errors import JobFailedError

log = logging.getLogger(__name__)

# Read first in the task list's result column; the rest follow in telemetry order.
_LEADING = ("status", "session_id", "trigger", "skip_reason", "error_class", "error")
_EVENT_OF_STATUS = {"skipped": "task-skipped", "aborted": "task-aborted"}


def shown(telemetry: dict[str, Any]) -> str:
    """The telemetry as one line of JSON: outcome, session and trigger first, no nulls, floats
    to one decimal, secrets the redactor knows replaced (an error text may quote a provider)."""
    order = [*(k for k in _LEADING if k in telemetry), *(k for k in telemetry if k not in _LEADING)]
    fields = {k: _plain(telemetry[k]) for k in order if telemetry[k] is not None}
    return redact_text(json.dumps(fields, ensure_ascii=False)).text


def _plain(value: Any) -> Any:
    return round(value, 1) if isinstance(value, float) else value


def report(task: Task, telemetry: dict[str, Any], *, started: float) -> str:
    """End the task the way the job ended (see the module's docstring); the text on success.

    Args:
        started: ``time.monotonic()`` when the task began, for the event's runtime.
    """
    status = telemetry.get("status")
    text = shown(telemetry)
    if status == "succeeded":
        return text
    if status == "failed":
        raise JobFailedError(text)
    event = _EVENT_OF_STATUS.get(str(status))
    if event is None:
        log.info("job %s is %s under another attempt; that one reports it", task.request.id,
                 status)  # fmt: skip
        raise Ignore()
    # Celery logs an ignored task as just "ignored": say how the job ended.
    log.info("job %s %s: %s", task.request.id, status, text)
    _send_outcome(task, event, text, runtime_s=time.monotonic() - started)
    raise Ignore()


def _send_outcome(task: Task, event: str, text: str, *, runtime_s: float) -> None:
    try:
        task.send_event(event, result=text, runtime=round(runtime_s, 3))
    except (BrokerError, redis.RedisError, OSError) as exc:
        # The job's row holds the outcome; only the monitor misses it (its row stays STARTED).
        log.warning("job %s: could not send %s to the monitor: %s", task.request.id, event, exc)
