"""``compaction demo``: post the bundled long session to a running stack and follow its job.

What a newcomer runs second, after ``compaction up``: it uses only the public HTTP API, so it
also works against a deployed service (``--url``, and ``COMPACTION_API_TOKEN`` when set).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import uuid
from importlib import resources
from typing import Any

import httpx

from worker.settings import Settings, get_settings

HELP = "post a long sample session to a running stack and follow its job"
FINISHED = ("succeeded", "skipped", "aborted", "failed")


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


def api_client(settings: Settings, base_url: str) -> httpx.Client:
    headers = {}
    if settings.api_token is not None:
        headers["Authorization"] = f"Bearer {settings.api_token.get_secret_value()}"
    return httpx.Client(base_url=base_url, headers=headers, timeout=60.0)


def run(args: argparse.Namespace) -> int:
    from api.commands.locate import api_base_url

    settings = get_settings()
    base_url = api_base_url(settings, args.url)  # the stack running here, on its own port
    session_id = args.session_id or f"demo-{uuid.uuid4().hex[:8]}"
    try:
        with api_client(settings, base_url) as client:
            return demo(client, session_id, timeout_s=args.timeout)
    except httpx.HTTPError as exc:
        print(
            f"compaction demo: cannot reach the API at {base_url} ({exc}); is `compaction up` "
            "running in this directory?",
            file=sys.stderr,
        )
        return 2


def demo(client: httpx.Client, session_id: str, *, timeout_s: float) -> int:
    sample = load_sample()
    answer = put_session(client, session_id, sample)
    job_id = answer["hygiene"].get("job_id")
    print(
        f"posted {session_id}: {len(sample['messages'])} messages, {answer['tokens']:,} tokens, "
        f"{answer['utilization']:.0%} of a {sample['context_length']:,}-token window "
        f"-> {answer['hygiene']['decision']}"
    )
    if job_id is None:  # e.g. a reused session id on cooldown: ask for it explicitly
        job_id = expect(client.post(f"/v1/sessions/{session_id}/compact", json={"force": True}))[
            "job_id"
        ]
        print("queued a manual compaction instead")
    print(f"following job {job_id}")
    job = follow(client, job_id, timeout_s=timeout_s)
    if job is None:
        print(f"job {job_id} did not finish in {timeout_s:.0f}s")
        return 1
    show(client, session_id, job)
    return 0 if job["status"] == "succeeded" else 1


def put_session(client: httpx.Client, session_id: str, sample: dict[str, Any]) -> dict[str, Any]:
    body = {k: sample[k] for k in ("model", "context_length", "messages")}
    return expect(client.put(f"/v1/sessions/{session_id}", json=body))


def follow(client: httpx.Client, job_id: str, *, timeout_s: float) -> dict[str, Any] | None:
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        job = expect(client.get(f"/v1/jobs/{job_id}"))
        if job["status"] != last:
            print(f"  {job['status']}")
            last = job["status"]
        if job["status"] in FINISHED:
            return job
        time.sleep(0.5)
    return None


def show(client: httpx.Client, session_id: str, job: dict[str, Any]) -> None:
    before, after = job.get("tokens_before"), job.get("tokens_after")
    if before is not None and after is not None:
        print(
            f"before: {before:,} tokens in {job.get('messages_before')} messages\n"
            f"after:  {after:,} tokens in {job.get('messages_after')} messages "
            f"({job.get('savings_pct') or 0:.1f}% saved)"
        )
    print("telemetry:")
    print(json.dumps(job, indent=2, sort_keys=True, default=str))
    base = str(client.base_url).rstrip("/")
    print(f"compacted transcript: GET {base}/v1/sessions/{session_id}/messages")
    print(f"originals:            GET {base}/v1/sessions/{session_id}/archive")


def expect(response: httpx.Response) -> dict[str, Any]:
    if response.is_error:
        sys.exit(f"compaction demo: {response.request.method} {response.url} -> "
                 f"{response.status_code}: {response.text[:500]}")  # fmt: skip
    body: dict[str, Any] = response.json()
    return body
