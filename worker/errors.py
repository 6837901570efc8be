"""Errors of the engine around the core: locks, callbacks, the launcher.

    WorkerError                     root of the engine's own errors (the store has StoreError)
    ├── LockError
    │   ├── LockBusyError           another job holds the session's lock: defer, never overlap
    │   └── LockLostError           our lease expired or was taken over: abort, write nothing
    ├── JobDeadlineError            the job ran past its soft time limit (error_class "timeout")
    ├── LLMPoolBusyError            no free connection to the LLM in time: ours, not the model's
    ├── JobFailedError              the job finished failed: its task ends in Celery's FAILURE
    ├── CallbackDeliveryError       the callback endpoint failed (HTTP status or transport)
    └── LaunchError                 a component of the stack could not start (busy port, no URL)

Redis and SQLAlchemy operational errors are not translated here: the task is the one place
that decides retry versus fail, and it decides on their types.
"""

from __future__ import annotations


class WorkerError(Exception):
    """Root of the worker engine's own errors."""


class LockError(WorkerError):
    """A per-session lock could not be taken or kept."""


class LockBusyError(LockError):
    """Another job holds the session's lock."""

    def __init__(self, session_id: str, holder: str | None) -> None:
        self.session_id = session_id
        self.holder = holder
        super().__init__(f"session {session_id!r} is locked by {holder or 'another job'}")


class LockLostError(LockError):
    """Our lease on the session expired or another holder took it."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"lost the lock on session {session_id!r}")


class JobDeadlineError(WorkerError):
    """The job ran past its soft time limit; it fails with error_class ``timeout``."""

    error_class = "timeout"


class LLMPoolBusyError(WorkerError):
    """Every connection of the LLM client's pool stayed in use past the pool timeout.

    The worker's own capacity ran out (the pool is sized to the worker's concurrency, so this
    means something else holds connections): not the provider's failure, so no fallback to
    another model and no cooldown; the job is retried like any operational trouble.
    """


class CallbackDeliveryError(WorkerError):
    """The callback endpoint did not accept the notification; ``final``: retrying cannot help."""

    def __init__(self, message: str, *, status: int | None = None, final: bool = False) -> None:
        self.status, self.final = status, final
        super().__init__(message)


class LaunchError(WorkerError):
    """A component of the stack could not start; the message says what to change."""


class JobFailedError(WorkerError):
    """The job finished ``failed``; raised by its task so Celery and Flower say FAILURE.

    The message is the job's telemetry (the row in the database has it too).
    """
