"""The probes on the real app: /readyz says what is unreachable without the driver's text
(it is public: that text names hosts and ports), and the log keeps the whole error."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.api_support import api_settings, open_api
from worker.redis_server import free_port

pytestmark = pytest.mark.integration


def test_readyz_names_what_is_unreachable_but_no_host_port_or_driver_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db_port, broker_port = free_port(), free_port()
    dead_db = f"postgresql+psycopg://postgres@127.0.0.1:{db_port}/nothing?connect_timeout=2"
    dead_broker = f"redis://127.0.0.1:{broker_port}/0"
    caplog.set_level(logging.WARNING, logger="api.routes.health")
    for api in open_api(api_settings(dead_db, dead_broker, tmp_path), dead_broker):
        response = api.client.get("/readyz")
        assert response.status_code == 503
        assert response.json()["problems"] == [
            "database unreachable (OperationalError)",
            "broker unreachable (ConnectionError)",
        ]
        for private in (str(db_port), str(broker_port), "127.0.0.1", "psycopg", "refused"):
            assert private not in response.text
    logged = caplog.text
    assert str(db_port) in logged and str(broker_port) in logged  # the operator sees it all
