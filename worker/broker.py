"""The Redis transport our Celery processes use: kombu's own, with one repair.

Celery 5.7 handles a lost broker connection by collecting the connection (which detaches the
transport from its client) and then closing it. Closing a channel restores its unacknowledged
messages, and from a detached transport that raises ``AttributeError`` (kombu builds a new
connection pool from the missing client), which Celery treats as unrecoverable: the worker
exits in the middle of its jobs when Redis restarts. The same happens when a task that was
running during the loss finishes and acks on its old channel. Here a detached channel skips the
restore and answers with a connection error, which Celery handles ("Couldn't ack"). The messages
stay in the broker's unacked set, where the visibility-timeout sweep of any worker restores
them, exactly as for a worker that crashed (our jobs are idempotent on redelivery).

``install()`` points kombu's ``redis``/``rediss`` aliases at this transport, so broker URLs,
Celery's banner and Flower's broker view keep their ``redis://`` form.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import TRANSPORT_ALIASES, redis
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = "worker.broker:Transport"


class Channel(redis.Channel):
    def _detached(self) -> bool:
        return self.connection is None or self.connection.client is None

    # kombu's class attribute (True) says whether closing restores unacked messages.
    @property
    def do_restore(self) -> bool:  # type: ignore[override]  # an attribute there
        return not self._detached()

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        # A task that finishes after the loss acks on its old channel: a connection error is
        # what Celery expects there ("Couldn't ack", the message is redelivered); kombu's
        # AttributeError would stop the worker.
        if self._detached():
            raise RedisConnectionError("this channel's broker connection was lost")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call]
        return params


class Transport(redis.Transport):
    Channel = Channel


def install() -> None:
    """Resolve ``redis://`` and ``rediss://`` to this transport in this process (idempotent;
    before the first broker connection, which is when kombu resolves and caches the alias)."""
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = TRANSPORT
