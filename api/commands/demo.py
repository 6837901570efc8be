"""``compaction demo``: post the bundled long session to a running stack and follow its job.

What a newcomer runs second, after ``compaction up``: it uses only the public HTTP API, through
the package's client (``api.client``), so it also works against a deployed service (``--url``,
and ``COMPACTION_API_TOKEN`` when set).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
import time
import uuid
from datetime import datetime
from importlib import resources
from typing import Any

from api.client import CompactionClient, Job, ProblemError, RetryPolicy, ServiceUnreachableError
from worker.settings import Settings, get_settings

HELP = "post a long sample session to a running stack and follow its job"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=None,
        help="API base URL; default: COMPACTION_API_HOST/PORT when set, else the `compaction up` "
        "running here, else http://127.0.0.1:8000",
    )
    parser.add_argument("--session-id", default=None, help="default: demo-<random>")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the job")


def load_sample() -> dict[str, Any]:
    """The bundled session (two real agent sessions as one conversation; see worker/data/)."""
    raw = resources.files("worker.data").joinpath("demo_session.json.gz").read_bytes()
    sample: dict[str, Any] = json.loads(gzip.decompress(raw))
    return sample


def api_client(settings: Settings, base_url: str) -> CompactionClient:
    token = settings.api_token.get_secret_value() if settings.api_token is not None else None
    # Two tries: a write is safe to repeat (same Idempotency-Key), and a stack that is not
    # running should be said so quickly.
    return CompactionClient(base_url, token=token, timeout_s=60.0, retry=RetryPolicy(attempts=2))


def run(args: argparse.Namespace) -> int:
    from api.commands.locate import api_base_url

    settings = get_settings()
    base_url = api_base_url(settings, args.url)  # the stack running here, on its own port
    session_id = args.session_id or f"demo-{uuid.uuid4().hex[:8]}"
    try:
        with api_client(settings, base_url) as client:
            return demo(client, session_id, timeout_s=args.timeout)
    except ServiceUnreachableError as exc:
        print(
            f"compaction demo: cannot reach the API at {base_url} ({exc}); is `compaction up` "
            "running in this directory?",
            file=sys.stderr,
        )
        return 2
    except ProblemError as exc:
        print(
            f"compaction demo: {exc.method} {exc.url} -> {exc.status}: {exc.detail}",
            file=sys.stderr,
        )
        return 1


def demo(client: CompactionClient, session_id: str, *, timeout_s: float) -> int:
    sample = load_sample()
    answer = client.put_session(
        session_id,
        model=sample["model"],
        context_length=sample["context_length"],
        messages=sample["messages"],
    )
    print(
        f"posted {session_id}: {len(sample['messages'])} messages, {answer.tokens:,} tokens, "
        f"{answer.utilization:.0%} of a {sample['context_length']:,}-token window "
        f"-> {answer.hygiene.decision}"
    )
    job_id = answer.hygiene.job_id
    if job_id is None:  # e.g. a reused session id on cooldown: ask for it explicitly
        job_id = client.compact(session_id, force=True).job_id
        print("queued a manual compaction instead")
    print(f"following job {job_id}")
    try:
        job = follow(client, job_id, timeout_s=timeout_s)
    except KeyboardInterrupt:
        print(f"stopped following job {job_id}; {runs_on(client, job_id)}")
        raise
    if job is None:
        print(f"job {job_id} did not finish in {timeout_s:.0f}s; {runs_on(client, job_id)}")
        return 1
    show(client, session_id, job)
    return 0 if job.status == "succeeded" else 1


def follow(client: CompactionClient, job_id: str, *, timeout_s: float) -> Job | None:
    """The job once finished, printing each status it passes through; None on timeout."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        job = client.get_job(job_id)
        if job.status != last:
            print(f"  {job.status}")
            last = job.status
        if job.finished:
            return job
        time.sleep(0.5)
    return None


def runs_on(client: CompactionClient, job_id: str) -> str:
    """What becomes of a job this command stops following: the stack still runs it."""
    return f"it carries on in the stack: GET {client.base_url}/v1/jobs/{job_id}"


def show(client: CompactionClient, session_id: str, job: Job) -> None:
    if job.tokens_before is not None and job.tokens_after is not None:
        print(
            f"before: {job.tokens_before:,} tokens in {job.messages_before} messages\n"
            f"after:  {job.tokens_after:,} tokens in {job.messages_after} messages "
            f"({job.savings_pct or 0:.1f}% saved)"
        )
    print("telemetry:")
    print(json.dumps(telemetry(job), indent=2))  # in the job's own order: id, trigger, status...
    base = client.base_url
    print(f"compacted transcript: GET {base}/v1/sessions/{session_id}/messages")
    print(f"originals:            GET {base}/v1/sessions/{session_id}/archive")


def telemetry(job: Job) -> dict[str, Any]:
    """The job as the API sent it (times back in ISO 8601)."""
    fields = {f.name: getattr(job, f.name) for f in dataclasses.fields(job) if f.name != "extra"}
    out = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in fields.items()}
    return out | dict(job.extra)
