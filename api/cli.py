"""The ``compaction`` console script: one subcommand per module in ``api/commands/``.

Each command module defines ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; it is
imported only when chosen, so ``compaction compress`` does not load Celery or FastAPI.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

COMMANDS: dict[str, str] = {
    "up": "the whole embedded stack in the foreground (Redis, API, worker, beat, Flower)",
    "api": "the HTTP API",
    "worker": "a Celery worker",
    "beat": "Celery beat: nightly idle sweep and stuck-job reaper",
    "flower": "Flower, the Celery monitor",
    "migrate": "apply database migrations",
    "compress": "compact one transcript file offline and print messages + report",
    "demo": "post a long sample session to a running stack and follow its job",
    "sweep": "run the idle-session sweep now",
    "stats": "a table of recent jobs",
    "compile": "build the compiled compressor core (mypyc); --status says which one runs",
    "mcp": "the service's recall tools as an MCP server (stdio; streamable HTTP with --http)",
}


def build_parser(names: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compaction", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in names or COMMANDS:
        sub.add_parser(name, help=COMMANDS[name], description=COMMANDS[name])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    if chosen not in COMMANDS:
        build_parser().parse_args(argv)  # prints usage or the unknown-command error
        return 2
    module = importlib.import_module(f"api.commands.{chosen}")
    parser = argparse.ArgumentParser(prog=f"compaction {chosen}", description=COMMANDS[chosen])
    module.add_arguments(parser)
    args = parser.parse_args(argv[argv.index(chosen) + 1 :])
    from pydantic import ValidationError  # light; pydantic is loaded by every command anyway

    try:
        return int(module.run(args))
    except KeyboardInterrupt:  # Ctrl-C: a line, not a traceback; 130 as a shell reports SIGINT
        print(f"\ncompaction {chosen}: interrupted", file=sys.stderr)
        return 130
    except ValidationError as exc:
        if exc.title != "Settings":
            raise
        print(f"compaction {chosen}: bad configuration: {settings_problems(exc)}", file=sys.stderr)
        return 2


def settings_problems(exc: ValidationError) -> str:
    """``COMPACTION_SUMMARY_MODEL: String should have at most 200 characters; ...``"""
    return "; ".join(
        f"COMPACTION_{str(e['loc'][0]).upper()}: {_message(e)}" if e["loc"] else _message(e)
        for e in exc.errors()
    )


def _message(error: ErrorDetails) -> str:
    # A validator's own ValueError already says what is wrong; pydantic's msg prefixes it with
    # "Value error, ", which reads as noise to someone fixing an environment variable.
    cause = error.get("ctx", {}).get("error")
    if error["type"] == "value_error" and isinstance(cause, ValueError):
        return str(cause)
    return error["msg"]


if __name__ == "__main__":
    sys.exit(main())
