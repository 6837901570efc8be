"""The load generator bench/service_api.py uses when ``wrk`` is not on PATH: the same requests
as bench/service_api.lua (one user turn to one of N sessions, each with its own
Idempotency-Key), from one thread per client on a keep-alive connection, in a process of its own.

    python -m bench.loadgen --port 8000 --concurrency 16 --duration-s 8 --sessions 256 \\
        --token T --tag run1

Prints the same JSON line as the wrk script. It is slower than wrk (the GIL): at high rates
it measures itself too, which the results table says.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Tally:
    latencies_s: list[float] = field(default_factory=list)
    non_2xx: int = 0
    socket_errors: int = 0


def client(args: argparse.Namespace, number: int, deadline: float, tally: Tally) -> None:
    rng = random.Random(number * 7919)
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
    sent = 0
    while time.perf_counter() < deadline:
        sent += 1
        path = f"/v1/sessions/s{rng.randrange(args.sessions)}/messages"
        body = json.dumps({"messages": [{"role": "user", "content": (
            f"turn {sent} of a long conversation: please look at the failing test again and "
            "explain it")}]})  # fmt: skip
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {args.token}",
            "Idempotency-Key": f"{args.tag}-{number}-{sent}",
        }
        started = time.perf_counter()
        try:
            conn.request("POST", path, body, headers)
            response = conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            tally.socket_errors += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
            continue
        tally.latencies_s.append(time.perf_counter() - started)
        if not 200 <= response.status < 300:
            tally.non_2xx += 1
    conn.close()


def percentile_ms(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return 1000.0 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--duration-s", type=float, default=8.0)
    p.add_argument("--sessions", type=int, default=256)
    p.add_argument("--token", required=True)
    p.add_argument("--tag", required=True)
    args = p.parse_args(argv)
    tallies = [Tally() for _ in range(args.concurrency)]
    started = time.perf_counter()
    deadline = started + args.duration_s
    threads = [
        threading.Thread(target=client, args=(args, n + 1, deadline, tally))
        for n, tally in enumerate(tallies)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    latencies = [v for t in tallies for v in t.latencies_s]
    print(json.dumps({
        "requests": len(latencies), "seconds": seconds,
        "non_2xx": sum(t.non_2xx for t in tallies),
        "socket_errors": sum(t.socket_errors for t in tallies),
        "p50_ms": percentile_ms(latencies, 0.50), "p99_ms": percentile_ms(latencies, 0.99),
        "max_ms": max(latencies, default=0.0) * 1000.0,
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
