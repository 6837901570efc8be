"""The callback signing rule, in one place: the worker signs with it, receivers verify with it.

``X-Compaction-Signature: sha256=<hex>`` is HMAC-SHA256 of the exact body bytes with
``COMPACTION_CALLBACK_SECRET``. Standard library only, so a gateway's webhook receiver (through
``api.client``) can import it without the worker's dependencies.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Compaction-Signature"
TIMESTAMP_HEADER = "X-Compaction-Timestamp"
EVENT_HEADER = "X-Compaction-Event"
EVENT = "compaction.job.finished"


def sign(body: bytes, secret: str) -> str:
    """The signature header's value for ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(body: bytes, signature: str | None, secret: str) -> bool:
    """What a receiver does: recompute and compare in constant time."""
    return signature is not None and hmac.compare_digest(sign(body, secret), signature)
