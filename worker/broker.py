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

**Live messages stay invisible.** A message a worker holds (a running task, or one waiting for its
countdown) sits in kombu's ``unacked`` hash, scored by when it was delivered; any worker moves
one back to the queue once its score is older than the visibility timeout. With a timeout
longer than the longest job, a dead worker's job waits that long (20 minutes with a 15-minute
job). Here each worker re-scores the messages it holds every third of the timeout, from its own
event loop: a live worker's messages never come due, so the timeout can be short (a minute),
and a dead worker's come back within it.

``install()`` points kombu's ``redis``/``rediss`` aliases at this transport, so broker URLs,
Celery's banner and Flower's broker view keep their ``redis://`` form.

**No broker is an error, not an address.** An app made without ``COMPACTION_REDIS_URL`` gets
``NO_BROKER_URL``, whose transport refuses every connection with the error a component started
without a URL gets: nothing falls back to a default address (Celery's own default is
amqp://localhost, and another Redis or RabbitMQ may well listen there).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, base, redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

TRANSPORT = "worker.broker:Transport"
NO_BROKER_URL = "compaction-no-broker://"


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

    def keep_invisible(self) -> int:
        """Re-score the messages this channel holds as delivered now; how many it held."""
        if self._detached():
            return 0
        # Delivered and not yet flushed: acknowledged ones are in it until the next delivery
        # (from the event loop, this timer's thread; a pool thread's ack only marks them).
        held = list(self.qos._delivered)
        if held:
            now = time.time()
            # XX: a message acknowledged meanwhile is gone from the index and stays gone.
            with self.conn_or_acquire() as client:
                client.zadd(self.unacked_index_key, dict.fromkeys(held, now), xx=True)
        return len(held)


class Transport(redis.Transport):
    Channel = Channel

    def register_with_event_loop(self, connection: Any, loop: Any) -> None:
        super().register_with_event_loop(connection, loop)  # type: ignore[no-untyped-call]
        cycle: Any = self.cycle  # kombu's MultiChannelPoller
        old = getattr(cycle, "_keep_invisible_tref", None)
        if old is not None:
            old.cancel()  # a reconnect registers again: one timer, not one per connection
        timeout = connection.client.transport_options.get(
            "visibility_timeout", Channel.visibility_timeout
        )
        cycle._keep_invisible_tref = loop.call_repeatedly(
            keep_invisible_interval_s(timeout), self._keep_invisible
        )

    def _keep_invisible(self) -> None:
        cycle: Any = self.cycle
        for channel in list(cycle._channels):
            try:
                channel.keep_invisible()
            except (RedisError, OSError) as exc:
                # The broker is away: nothing can be restored meanwhile either; next tick.
                log.info("could not keep this worker's messages invisible: %s", exc)


def keep_invisible_interval_s(visibility_timeout_s: float) -> float:
    """How often a worker re-scores its messages: three times per visibility timeout, so two
    missed ticks still leave them invisible."""
    return max(visibility_timeout_s / 3, 0.5)


class NoBroker(base.Transport):
    """The transport of ``NO_BROKER_URL``: every connection fails with ``LaunchError``."""

    driver_type = driver_name = "none"

    def establish_connection(self) -> Any:
        from worker.celery_app import missing_broker_error
        from worker.settings import get_settings

        raise missing_broker_error(get_settings())

    def close_connection(self, connection: Any) -> None:
        return None  # never opened


def install() -> None:
    """Resolve ``redis://`` and ``rediss://`` to this transport in this process (idempotent;
    before the first broker connection, which is when kombu resolves and caches the alias)."""
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = TRANSPORT
    TRANSPORT_ALIASES[NO_BROKER_URL.split(":", 1)[0]] = "worker.broker:NoBroker"
