"""Migrations step by step: an empty database to migrate (SQLite, or a PostgreSQL schema of its
own) and ``alembic()`` to move it to a revision, so a test can plant rows as an older schema
held them. Import the fixture into a test module (``from tests.support.migrations import
empty_url``)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.conftest import POSTGRES_URL_ENV
from worker.store.db import alembic_config, make_engine


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with nothing in it yet."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
        return
    base = os.environ.get(POSTGRES_URL_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set")
    schema = f"cq_test_{int(time.time())}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def alembic(url: str, verb: str, revision: str) -> None:
    """``alembic upgrade|downgrade <revision>`` on ``url``, committed."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            config = alembic_config(url)
            config.attributes["connection"] = conn
            getattr(command, verb)(config, revision)
            conn.commit()
    finally:
        engine.dispose()
