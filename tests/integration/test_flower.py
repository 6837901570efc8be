"""``compaction flower`` as a real process on a private Redis: who may start it, who may read it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.flower_auth import flower_refusal
from tests.support.stack import REPO, StackProcess, stack_env
from worker.redis_server import RedisServer, free_port
from worker.settings import Settings

pytestmark = pytest.mark.integration

USER, PASSWORD = "ops", "s3cret-flower"
FLOWER_REDIS_DB = 6


@pytest.fixture
def flower_redis_url(redis_server: RedisServer) -> str:
    return redis_server.url.rsplit("/", 1)[0] + f"/{FLOWER_REDIS_DB}"


def flower_env(redis_url: str, tmp_path: Path, **settings: str) -> dict[str, str]:
    return stack_env(
        redis_url=redis_url,
        database_url=f"sqlite:///{tmp_path / 'c.db'}",
        var_dir=tmp_path / "var",
        **settings,
    )


@pytest.mark.parametrize(
    "credentials",
    [
        {},
        {"flower_user": USER},
        {"flower_password": PASSWORD},
        {"flower_user": USER, "flower_password": "two,passwords"},
        {"flower_user": "a,b", "flower_password": PASSWORD},
    ],
    ids=["none", "user only", "password only", "comma in password", "comma in user"],
)
def test_flower_refuses_a_public_address_without_usable_credentials(
    flower_redis_url: str, tmp_path: Path, credentials: dict[str, str]
) -> None:
    env = flower_env(flower_redis_url, tmp_path, **credentials)
    argv = [sys.executable, "-m", "api.cli", "flower", "--address=0.0.0.0", f"--port={free_port()}"]
    done = subprocess.run(
        argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # one line
    assert done.stderr.startswith("compaction flower: ")
    assert "COMPACTION_FLOWER_" in done.stderr


@pytest.fixture
def flower(flower_redis_url: str, tmp_path: Path) -> Iterator[str]:
    """A real Flower with basic auth, on loopback; its base URL."""
    port = free_port()
    env = flower_env(flower_redis_url, tmp_path, flower_user=USER, flower_password=PASSWORD)
    args = ["flower", "--address=127.0.0.1", f"--port={port}"]
    with StackProcess("flower", args, env=env, log_dir=tmp_path) as proc:
        base = f"http://127.0.0.1:{port}"
        proc.wait_for(
            lambda: httpx.get(f"{base}/healthcheck", timeout=2).status_code == 200,
            timeout_s=60,
            what="/healthcheck",
        )
        yield base


PROTECTED = ["/metrics", "/task/0b9d3c1e-job", "/tasks/datatable", "/tasks", "/", "/api/workers"]


def test_flower_serves_metrics_and_task_data_only_with_credentials(flower: str) -> None:
    for path in PROTECTED:
        for auth in (None, (USER, "wrong"), ("admin", PASSWORD)):
            r = httpx.get(f"{flower}{path}", auth=auth, timeout=10)
            assert r.status_code == 401, (path, auth, r.status_code)
            if not path.startswith("/api/"):  # Flower's API answers 401 without a challenge
                assert r.headers["www-authenticate"].startswith("Basic"), path
    metrics = httpx.get(f"{flower}/metrics", auth=(USER, PASSWORD), timeout=10)
    assert metrics.status_code == 200 and "flower_events_total" in metrics.text
    tasks = httpx.get(f"{flower}/tasks", auth=(USER, PASSWORD), timeout=10)
    assert tasks.status_code == 200
    # The probe of `compaction up` and Kubernetes says only "OK": it stays open.
    assert httpx.get(f"{flower}/healthcheck", timeout=10).text == "OK"


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "localhost"])
def test_flower_without_credentials_may_listen_on_loopback(address: str) -> None:
    assert flower_refusal(Settings(flower_user=None, flower_password=None), address) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "10.1.2.3", "flower.internal"])
def test_flower_with_credentials_may_listen_anywhere(address: str) -> None:
    assert flower_refusal(Settings(flower_user=USER, flower_password=PASSWORD), address) is None
    refusal = flower_refusal(Settings(flower_user=None, flower_password=None), address)
    assert refusal is not None and address in refusal
