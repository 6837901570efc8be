"""``compaction compile [--force | --status]``: build the compiled compressor core (mypyc).

``make install`` runs it; it builds only when the sources changed since the last build, which
takes a minute or two. Without mypy, a C compiler or Python's headers it says what is missing
and exits 0: the core then runs as Python, the same code, taking about 1.4 times as long.
"""

from __future__ import annotations

import argparse
import sys

from worker import compiled

HELP = "build the compiled compressor core (mypyc); --status says which one runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--force", action="store_true", help="build even when the build is fresh")
    what.add_argument(
        "--status", action="store_true", help="say which one runs and why; exit 1 if the Python"
    )


def run(args: argparse.Namespace) -> int:
    if args.status:
        print(compiled.state)
        return 0 if compiled.state.compiled else 1
    try:
        print(compiled.build(force=args.force))
    except compiled.BuildError as exc:
        # Not fatal: the Python is the same code, only slower (the worker's log says which).
        print(
            f"{exc}\nthe compressor runs interpreted (taking about 1.4 times as long)",
            file=sys.stderr,
        )
    return 0
