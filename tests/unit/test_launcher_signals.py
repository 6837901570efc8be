"""`compaction up` stops on SIGINT or SIGTERM wherever the signal lands in its main thread.

A signal handler runs between two bytecodes of the main thread. The launcher's main thread
spends its life waiting for the stop flag, so the handler must be able to set the flag at every
point of that wait, including where a lock-based wait holds its lock (``threading.Event`` there
deadlocks, and the launcher then ignores every later signal). Each case runs in a child process,
so a hang fails the test on its timeout instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support.stack import REPO

# Deliver SIGINT at the n-th line the wait executes (the line tracer reaches into the standard
# library), for every n until the wait has fewer lines than n.
_AT_EVERY_LINE = """
import os, signal, sys
from worker.launcher import _stop_on_signals

def signal_at(n, sent):
    seen = 0
    def tracer(frame, event, arg):
        nonlocal seen
        if event == "line":
            seen += 1
            if seen == n:
                sent.append(n)
                os.kill(os.getpid(), signal.{sig})
        return tracer
    return tracer

n = 0
while True:
    n += 1
    with _stop_on_signals() as stop:
        sent = []
        sys.settrace(signal_at(n, sent))
        woke = stop.wait(0.05)
        sys.settrace(None)
        if not sent:
            break
        assert woke and stop.is_set(), f"signal at line {{n}} of the wait was lost"
print(f"lines covered: {{n - 1}}")
"""

# Deliver SIGINT from another thread while the main thread blocks in the wait.
_DURING_THE_BLOCK = """
import os, signal, threading
from worker.launcher import _stop_on_signals

with _stop_on_signals() as stop:
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    assert stop.wait(600)
print("woke")
"""


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_signal_at_any_line_of_the_wait_sets_the_flag() -> None:
    for sig in ("SIGINT", "SIGTERM"):
        done = run_child(_AT_EVERY_LINE.format(sig=sig))
        assert done.returncode == 0, done.stderr
        covered = int(done.stdout.rsplit(":", 1)[1])
        assert covered >= 1, done.stdout  # the wait ran some Python lines, and each was hit


def test_a_signal_during_a_blocked_wait_wakes_it() -> None:
    done = run_child(_DURING_THE_BLOCK)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "woke"


def test_the_handlers_are_restored_after() -> None:
    done = run_child(
        """
        import signal
        from worker.launcher import _stop_on_signals

        before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        with _stop_on_signals():
            pass
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
        """
    )
    assert done.returncode == 0, done.stderr
