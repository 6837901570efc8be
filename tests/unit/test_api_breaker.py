"""The API's broker breaker: after a failure, requests skip the broker for a while."""

from __future__ import annotations

from api.deps import BrokerBreaker


def test_the_api_breaker_skips_the_broker_for_a_while_after_a_failure() -> None:
    now = [100.0]
    breaker = BrokerBreaker(open_s=5.0, clock=lambda: now[0])
    assert breaker.down() is None
    error = ConnectionError("refused")
    breaker.failed(error)
    now[0] += 4.9
    assert breaker.down() is error  # still open: requests skip the broker
    now[0] += 0.2
    assert breaker.down() is None  # one request may try again
    breaker.failed(error)
    breaker.closed()  # /readyz saw the broker answer
    assert breaker.down() is None
