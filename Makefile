# Two commands on a fresh machine: `make run` and `make test`. Needs Python 3.11+ and make.
PYTHON ?= python3
VENV   := .venv
UV     := $(VENV)/bin/uv
SYNCED := $(VENV)/.synced
BIN    := $(VENV)/bin

.PHONY: install compile run test test-unit test-integration test-llm lint format typecheck bench chaos clean

$(UV):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9

# The lock file pins every dependency. --locked fails when uv.lock is out of date with
# pyproject.toml (--frozen would install the stale lock without a word): run `uv lock`.
$(SYNCED): $(UV) uv.lock pyproject.toml
	$(UV) sync --locked --quiet
	@touch $@

# The compressor core compiled with mypyc where this machine can (a C compiler and Python's
# headers; about 1.5 min, again only when its sources change). Where it cannot, it says so and
# the core runs as Python, the same code (worker/compiled.py).
install: $(SYNCED)
	@$(BIN)/compaction compile

compile: $(SYNCED)
	$(BIN)/compaction compile --force

run: install
	$(BIN)/compaction up

test: install
	$(BIN)/pytest

test-unit: install
	$(BIN)/pytest tests/unit

test-integration: install
	$(BIN)/pytest -m integration

test-llm: install
	$(BIN)/python -m tests.llm.setup_llama && $(BIN)/pytest -m llm tests/llm -p no:cacheprovider

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: install
	$(BIN)/mypy

# Ours against Hermes' ContextCompressor: speed, then what survives compaction (the dev corpus and
# the held-out one, then again with Claude Code, Codex and the chats in their own wire formats)
# and how many of the decisions kept are decisions (a labeled set); the first run
# also makes bench/.hermes-venv (1-2 min). Then the conformance kit's canaries in long chats over
# five rounds and its fixed-budget benchmark (~1 min; the first run also makes bench/.kit-venv);
# CHAT_ARGS="--seeds 9-40" runs other seeds. Then archive search and paging over 1,000,000
# archived messages on SQLite (built once under var/bench, ~3 min);
# ARCHIVE_ARGS="--backend sqlite postgresql --postgres-url URL" adds PostgreSQL. Then the service's
# worker (jobs in flight, overhead per job, a burst, the sweep; ~5 min a database) and the API's
# hot path (appends beside a bare-FastAPI floor at 1, 4 and 16 clients under wrk; ~1.5 min a
# database); SERVICE_ARGS="--backend sqlite postgresql --postgres-url URL" adds PostgreSQL.
bench: install
	$(BIN)/python -m bench.compress_vs_hermes $(BENCH_ARGS)
	$(BIN)/python -m bench.retention.run $(RETENTION_ARGS)
	$(BIN)/python -m bench.retention.run --corpus heldout $(RETENTION_ARGS)
	$(BIN)/python -m bench.retention.run --wire native $(RETENTION_ARGS)
	$(BIN)/python -m bench.retention.run --wire native --corpus heldout $(RETENTION_ARGS)
	$(BIN)/python -m bench.decision_precision
	$(BIN)/python -m bench.chat_retention $(CHAT_ARGS)
	$(BIN)/python -m bench.archive_search $(or $(ARCHIVE_ARGS),--backend sqlite)
	$(BIN)/python -m bench.service_worker $(SERVICE_ARGS)
	$(BIN)/python -m bench.service_api $(SERVICE_ARGS)

# Faults under load: Redis stopped, killed, wiped and frozen, the database gone, a worker killed,
# while gateways append without pause (about 10 minutes; docs/faults.md has the table).
chaos: install
	$(BIN)/python -m bench.chaos $(CHAOS_ARGS)

clean:
	rm -rf $(VENV) var worker/_compiled .pytest_cache .mypy_cache .ruff_cache .hypothesis
