"""Our Celery app's broker connections use the repaired Redis transport (worker/broker.py)."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from worker.broker import Channel, Transport
from worker.celery_app import make_celery
from worker.settings import Settings


def test_redis_urls_resolve_to_the_repaired_transport_and_keep_their_form() -> None:
    app = make_celery(Settings(redis_url="redis://127.0.0.1:1/0"))
    with app.connection_for_write() as conn:
        assert conn.transport_cls == "redis" and isinstance(conn.transport, Transport)
        assert conn.as_uri().startswith("redis://")  # Flower picks its broker view by scheme


def test_a_channel_whose_transport_lost_its_client_neither_restores_nor_reconnects() -> None:
    app = make_celery(Settings(redis_url="redis://127.0.0.1:1/0"))
    with app.connection_for_write() as conn:
        channel = Channel.__new__(Channel)  # no connection attempt: nothing listens on port 1
        channel.connection = conn.transport
        assert channel.do_restore is True
        conn.transport.client = None  # what Celery's collect() does on a lost connection
        assert channel.do_restore is False
        with pytest.raises(RedisConnectionError):
            channel._connparams()
