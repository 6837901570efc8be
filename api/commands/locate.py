"""What the maintenance commands (demo, sweep, stats) talk to: the running stack's API and
Redis, as ``compaction up`` recorded them under var/, and a database that already exists.

Settings the user gave win; the running stack fills in what they left out.
"""

from __future__ import annotations

from pathlib import Path

from worker.errors import LaunchError
from worker.launcher import running_stack
from worker.settings import Settings


def with_stack_redis(settings: Settings) -> Settings:
    """``settings`` with the running stack's Redis when ``COMPACTION_REDIS_URL`` is unset."""
    if settings.redis_url:
        return settings
    stack = running_stack(settings)
    if stack is None or stack.redis_url is None:
        return settings
    return settings.model_copy(update={"redis_url": stack.redis_url})


def api_base_url(settings: Settings, given: str | None = None) -> str:
    """``given``; else the API that COMPACTION_API_HOST/PORT name, when either is set; else the
    running stack's (on whatever port it was started with); else the default address."""
    if given:
        return given
    explicit = {"api_host", "api_port"} & settings.model_fields_set
    stack = None if explicit else running_stack(settings)
    if stack is not None and stack.api is not None:
        return stack.api
    return f"http://{settings.api_host}:{settings.api_port}"


def existing_database(settings: Settings) -> str:
    """The database URL, or ``LaunchError`` when it names a SQLite file that does not exist:
    opening it would leave an empty database behind and then fail on its missing tables."""
    from sqlalchemy.engine import make_url

    from worker.store.db import is_sqlite_file

    url = settings.database_url
    path = Path(str(make_url(url).database))
    if is_sqlite_file(url) and not path.exists():
        raise LaunchError(
            f"no database at {_shown(path)}: start the stack here with `compaction up` (or "
            "create it with `compaction migrate`), or set COMPACTION_DATABASE_URL"
        )
    return url


def _shown(path: Path) -> str:
    return str(path) if path.is_absolute() else f"{path} (in {Path.cwd()})"


def database_problem(exc: Exception) -> str:
    """A database error in one line: the driver's own message, without SQLAlchemy's SQL echo
    and link."""
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).strip().splitlines()
    return lines[0] if lines else type(cause).__name__
