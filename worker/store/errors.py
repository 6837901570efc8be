"""Errors raised by the store.

    StoreError                     the store refused or could not do what was asked
    ├── SessionNotFoundError       no session with that id
    ├── JobNotFoundError           no job with that id
    ├── VersionConflictError       If-Match named a version that is not the current one
    ├── OpenJobExistsError         the session already has a queued or running job
    ├── JobFencedError             the job is not open at this attempt: a stale worker is fenced out
    ├── IdempotencyKeyReusedError  an Idempotency-Key came back with another request body
    ├── IntegrityViolationError    a database constraint refused the write (names the constraint)
    ├── ArchivedMessageNotFoundError  no archived message at that seq of the session
    └── RevertRefusedError         that compaction cannot be undone now (the reason says why)

SQLAlchemy's ``IntegrityError`` is translated once, here, by the name of the constraint that
failed (PostgreSQL reports it; SQLite reports the table and columns, which we map back to the
constraint through the models' metadata).
"""

from __future__ import annotations

import re

from sqlalchemy import Index, UniqueConstraint
from sqlalchemy.exc import IntegrityError

from worker.store.models import Base


class StoreError(Exception):
    """Root of the store's own errors."""


class SessionNotFoundError(StoreError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} does not exist")
        self.session_id = session_id


class JobNotFoundError(StoreError):
    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id!r} does not exist")
        self.job_id = job_id


class VersionConflictError(StoreError):
    """``current_version`` is None when the session does not exist yet."""

    def __init__(self, current_version: int | None, expected: int) -> None:
        if current_version is None:
            message = f"If-Match names version {expected} but the session does not exist"
        else:
            message = (
                f"If-Match names version {expected} but the current version is {current_version}"
            )
        super().__init__(message)
        self.current_version = current_version
        self.expected = expected


class OpenJobExistsError(StoreError):
    def __init__(self, job_id: str, session_id: str) -> None:
        super().__init__(f"session {session_id!r} already has an open compaction job {job_id}")
        self.job_id = job_id
        self.session_id = session_id


class JobFencedError(StoreError):
    def __init__(self, job_id: str, attempt: int, status: str, current_attempt: int) -> None:
        super().__init__(
            f"job {job_id} is {status} at attempt {current_attempt}; "
            f"attempt {attempt} may no longer write"
        )
        self.job_id = job_id
        self.attempt = attempt
        self.status = status
        self.current_attempt = current_attempt


class IdempotencyKeyReusedError(StoreError):
    """A retry must repeat its request: the same key with another body is another request."""

    def __init__(self, key: str, session_id: str, route: str) -> None:
        super().__init__(
            f"Idempotency-Key {key!r} was already used on this session's {route} with another "
            "request body; a retry must send the same body, a new request needs a new key"
        )
        self.key = key
        self.session_id = session_id
        self.route = route


class IntegrityViolationError(StoreError):
    def __init__(self, constraint: str | None, message: str) -> None:
        super().__init__(f"constraint {constraint or 'unknown'} refused the write: {message}")
        self.constraint = constraint


_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: (?P<cols>[\w.]+(?:, [\w.]+)*)")


def violated_constraint(exc: IntegrityError) -> str | None:
    """The name of the constraint behind ``exc``, when the driver lets us know it."""
    diag = getattr(exc.orig, "diag", None)  # psycopg: the server names the constraint
    name = getattr(diag, "constraint_name", None)
    if isinstance(name, str):
        return name
    match = _SQLITE_UNIQUE.search(str(exc.orig))
    if match is None:
        return None
    return _unique_by_columns().get(tuple(match["cols"].split(", ")))


def _unique_by_columns() -> dict[tuple[str, ...], str]:
    """("table.col", ...) -> name, for every unique constraint and unique index in the models.
    Primary keys get PostgreSQL's default name, ``<table>_pkey``."""
    out: dict[tuple[str, ...], str] = {}
    for table in Base.metadata.tables.values():
        out[tuple(f"{table.name}.{col.name}" for col in table.primary_key)] = f"{table.name}_pkey"
        uniques: list[UniqueConstraint | Index] = [
            c for c in table.constraints if isinstance(c, UniqueConstraint)
        ]
        uniques += [i for i in table.indexes if i.unique]
        for item in uniques:
            if isinstance(item.name, str):
                out[tuple(f"{table.name}.{col.name}" for col in item.columns)] = item.name
    return out


def translate_integrity_error(exc: IntegrityError) -> IntegrityViolationError:
    return IntegrityViolationError(violated_constraint(exc), str(exc.orig))


class ArchivedMessageNotFoundError(StoreError):
    def __init__(self, session_id: str, seq: int) -> None:
        super().__init__(f"session {session_id!r} has no archived message at seq {seq}")
        self.session_id = session_id
        self.seq = seq


class RevertRefusedError(StoreError):
    """The job did not write the session's current transcript: it failed or was skipped, was
    already reverted, or a later compaction or snapshot replaced what it wrote."""

    def __init__(self, job_id: str, reason: str) -> None:
        super().__init__(f"job {job_id} cannot be reverted: {reason}")
        self.job_id = job_id
        self.reason = reason
