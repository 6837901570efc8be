"""A private PostgreSQL schema for one run of a test session or a benchmark: created, migrated,
and dropped afterwards, so that runs never see each other's rows."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from worker.store.db import migrate


def schema_url(base: str, schema: str) -> str:
    """``base`` with its search_path set to ``schema`` (password kept: it is handed on)."""
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


def new_schema_name(prefix: str) -> str:
    return f"{prefix}_{int(time.time())}_{uuid.uuid4().hex[:8]}"


@contextmanager
def private_schema(base: str, prefix: str) -> Iterator[str]:
    """A new schema in the database at ``base``, migrated; its URL. Dropped on exit."""
    schema = new_schema_name(prefix)
    admin = create_engine(base, connect_args={"connect_timeout": 5})
    try:
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        try:
            url = schema_url(base, schema)
            migrate(url)
            yield url
        finally:
            with admin.begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    finally:
        admin.dispose()
