# ruff: noqa: RUF001 (jest and playwright really print a right angle quote)
"""Failing commands with realistic output, one generator per toolchain.

Each generator returns a ``Failure``: the command (one line), its exit code, THE error line
(what a developer would quote), the output in up to three shapes, and what the same command
prints once the cause is fixed. Shapes:

* ``middle``: hundreds of lines, the error somewhere in the middle and a misleading trailer at
  the end (make's ``Error 1``, pytest's counts, npm's log pointer...);
* ``late``: just as long, but the error block close to the end (before the trailer), which is
  where an agent that shows only head and tail of a long output still shows it;
* ``short``: a few lines.

Names (modules, tests, crates, columns) are drawn from the generator's ``Random``, so one
session gets many distinct failures; the corpus checks that every needle is unique anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from random import Random

SHAPES = ("middle", "late", "short")


@dataclass(frozen=True, slots=True)
class Failure:
    toolchain: str
    command: str
    exit_code: int
    error_line: str  # as printed; the needle is this, stripped
    outputs: dict[str, str]  # shape -> full output
    success_output: str  # the same command after the fix
    fix_hint: str  # what the agent says it changed before the successful re-run
    cwd: str = "/workspace"
    extra: dict[str, str] = field(default_factory=dict)
    # What the agent runs to fix it, when the fix is not a code change (install, chmod...).
    fix_command: str | None = None


# --- name pools -----------------------------------------------------------------------------

ENTITIES = (
    "invoice", "cart", "session", "order", "subscription", "coupon", "shipment", "tenant",
    "ledger", "refund", "webhook", "payout", "profile", "booking", "report", "export",
    "inventory", "address", "voucher", "quota", "badge", "receipt", "forecast", "playlist",
)  # fmt: skip
VERBS = (
    "apply", "compute", "load", "merge", "reserve", "parse", "render", "sync", "resolve",
    "charge", "expire", "validate", "rotate", "split", "archive", "normalize", "reconcile",
)  # fmt: skip
FIELDS = (
    "tenant_id", "due_date", "amount_cents", "currency", "external_ref", "created_by",
    "retry_count", "locale", "expires_at", "sku", "region", "discount_pct", "seat_count",
)  # fmt: skip
CRATES = (
    "proc-macro2", "unicode-ident", "quote", "syn", "libc", "cfg-if", "autocfg", "memchr",
    "once_cell", "serde", "serde_derive", "itoa", "ryu", "serde_json", "log", "bytes",
    "pin-project-lite", "futures-core", "futures-sink", "futures-channel", "futures-task",
    "futures-util", "slab", "smallvec", "scopeguard", "lock_api", "parking_lot_core",
    "parking_lot", "mio", "socket2", "tokio-macros", "tokio", "tracing-core", "tracing",
    "tracing-attributes", "lazy_static", "fnv", "http", "httparse", "http-body", "tower-service",
    "tower-layer", "tower", "hashbrown", "equivalent", "indexmap", "tokio-util", "h2", "atoi",
    "hyper", "percent-encoding", "form_urlencoded", "idna", "url", "base64", "sha2", "digest",
    "generic-array", "typenum", "crypto-common", "block-buffer", "cpufeatures", "rand_core",
    "getrandom", "ppv-lite86", "rand_chacha", "rand", "thiserror-impl", "thiserror",
    "anyhow", "regex-syntax", "aho-corasick", "regex-automata", "regex", "chrono", "num-traits",
    "iana-time-zone", "time-core", "time-macros", "time", "uuid", "either", "itertools",
    "heck", "clap_lex", "anstyle", "strsim", "clap_builder", "clap_derive", "clap", "crc32fast",
    "flate2", "miniz_oxide", "adler2", "zerocopy", "ahash", "sqlx-core", "sqlx-macros",
    "sqlx-postgres", "sqlx", "rust_decimal", "arrayvec", "tinyvec", "unicode-normalization",
    "unicode-bidi", "dotenvy", "hex", "hmac", "md-5", "stringprep", "whoami", "home",
    "crossbeam-utils", "crossbeam-queue", "event-listener", "spin", "futures-intrusive",
    "tokio-stream", "axum-core", "axum", "matchit", "mime", "sync_wrapper", "serde_urlencoded",
    "tower-http", "tracing-subscriber", "sharded-slab", "thread_local", "nu-ansi-term",
)  # fmt: skip
GO_PKGS = (
    "internal/store", "internal/store/pg", "internal/api", "internal/api/middleware",
    "internal/auth", "internal/billing", "internal/inventory", "internal/queue",
    "internal/queue/retry", "internal/config", "internal/metrics", "internal/notify",
    "internal/notify/email", "internal/search", "internal/export", "pkg/clock", "pkg/ids",
    "pkg/money", "pkg/pagination", "pkg/validate", "cmd/api", "cmd/worker", "cmd/migrate",
)  # fmt: skip
C_UNITS = (
    "main", "net", "conn", "ring_buf", "arena", "hash", "log", "config", "timer", "poll",
    "http_parse", "router", "buf", "str", "cli", "signal", "pool", "tls_shim", "metrics",
)  # fmt: skip
NPM_SCOPES = ("@acme", "@northwind", "@lumen", "@kite")


def _pick(rng: Random, pool: Sequence[str]) -> str:
    return pool[rng.randrange(len(pool))]


def _plural(word: str) -> str:
    if word.endswith(("s", "x")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _camel(*words: str) -> str:
    parts = [p for w in words for p in w.split("_")]
    return parts[0] + "".join(p.title() for p in parts[1:])


def _pascal(*words: str) -> str:
    return "".join(p.title() for w in words for p in w.split("_"))


def _clock(rng: Random) -> str:
    return f"{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def _shaped(
    rng: Random,
    noise: Callable[[int], list[str]],
    block: list[str],
    trailer: list[str],
    *,
    head: list[str] | None = None,
    short_noise: int = 4,
) -> dict[str, str]:
    """The three shapes from one error block: noise lines around it, the trailer last."""
    head = head or []
    before, after = rng.randint(110, 220), rng.randint(80, 170)
    middle_lines = noise(before + after)
    middle = [*head, *middle_lines[:before], *block, *middle_lines[before:], *trailer]
    late_lines = noise(before + after)
    late = [*head, *late_lines, *block, *trailer]
    short = [*head, *noise(short_noise)[:short_noise], *block, *trailer]
    return {
        name: "\n".join(lines) + "\n"
        for name, lines in zip(SHAPES, (middle, late, short), strict=True)
    }


# --- Python -----------------------------------------------------------------------------------


def _pytest_noise(rng: Random, module: str) -> Callable[[int], list[str]]:
    def noise(n: int) -> list[str]:
        out = []
        files = [f"tests/test_{_pick(rng, ENTITIES)}_{_pick(rng, VERBS)}.py" for _ in range(9)]
        for i in range(n):
            f = files[i * len(files) // max(n, 1)]
            name = f"test_{_pick(rng, VERBS)}_{_pick(rng, ENTITIES)}_{_pick(rng, FIELDS)}"
            pct = min(99, (i + 1) * 100 // (n + 2))
            out.append(f"{f}::{name} PASSED{' ' * max(1, 58 - len(f) - len(name))}[{pct:3d}%]")
        return out

    return noise


def pytest_assert(rng: Random) -> Failure:
    ent, verb, fld = _pick(rng, ENTITIES), _pick(rng, VERBS), _pick(rng, FIELDS)
    test = f"test_{verb}_{ent}_keeps_{fld}"
    path = f"tests/test_{_plural(ent)}.py"
    got, want = rng.randint(2, 40), rng.randint(41, 90)
    use_summary = rng.random() < 0.5
    e_line = f"E       assert {got} == {want}"
    e_where = f"E        +  where {got} = {_camel(verb, ent)}(fixture).{fld}"
    failed = f"FAILED {path}::{test} - assert {got} == {want}"
    block = [
        "",
        "=================================== FAILURES ===================================",
        f"{'_' * 20} {test} {'_' * 20}",
        "",
        "    def " + test + "(fixture):",
        f"        result = {_camel(verb, ent)}(fixture)",
        f">       assert result.{fld} == {want}",
        e_line,
        e_where,
        "",
        f"{path}:{rng.randint(20, 300)}: AssertionError",
        "------------------------------ Captured log call -------------------------------",
    ]
    logs = [
        f"INFO     app.{ent}:{ent}.py:{rng.randint(10, 200)} {verb} {ent} id={rng.randint(1000, 9999)}"
        for _ in range(rng.randint(3, 8))
    ]
    passed = rng.randint(60, 400)
    trailer = [
        "=========================== short test summary info ============================",
        failed,
        f"=================== 1 failed, {passed} passed in {rng.uniform(2, 40):.2f}s ===================",
    ]
    cmd = f"python -m pytest {path} -v" if rng.random() < 0.5 else f"pytest -x -v {path}"
    outputs = _shaped(
        rng,
        _pytest_noise(rng, ent),
        block + logs,
        trailer,
        head=[
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.9, pytest-8.3.4, pluggy-1.5.0",
            f"collected {passed + 1} items",
            "",
        ],
    )
    return Failure(
        "pytest",
        cmd,
        1,
        failed if use_summary else e_line,
        outputs,
        success_output=f"{'.' * min(passed, 70)}\n{passed + 1} passed in {rng.uniform(2, 40):.2f}s\n",
        fix_hint=f"`{_camel(verb, ent)}` now carries `{fld}` through",
    )


def _py_log_noise(rng: Random, logger: str) -> Callable[[int], list[str]]:
    def noise(n: int) -> list[str]:
        out = []
        for _ in range(n):
            ent = _pick(rng, ENTITIES)
            out.append(
                f"2026-03-{rng.randint(1, 28):02d} {_clock(rng)},{rng.randint(100, 999)} INFO "
                f"{logger}: {_pick(rng, VERBS)} {ent} done batch={rng.randint(1, 500)} "
                f"rows={rng.randint(10, 5000)}"
            )
        return out

    return noise


def py_traceback(rng: Random) -> Failure:
    ent, fld, verb = _pick(rng, ENTITIES), _pick(rng, FIELDS), _pick(rng, VERBS)
    script = f"scripts/{verb}_{_plural(ent)}.py"
    kind = rng.randrange(4)
    last = (
        f"KeyError: '{fld}'",
        f"AttributeError: 'NoneType' object has no attribute '{fld}'",
        f"ValueError: invalid literal for int() with base 10: '{ent}-{rng.randint(10, 99)}'",
        f"TypeError: {_camel(verb, ent)}() got an unexpected keyword argument '{fld}'",
    )[kind]
    block = [
        "Traceback (most recent call last):",
        f'  File "/workspace/{script}", line {rng.randint(80, 200)}, in <module>',
        "    main()",
        f'  File "/workspace/{script}", line {rng.randint(40, 79)}, in main',
        f"    {_camel(verb, ent)}(row, {fld}=row.get('{fld}'))",
        f'  File "/workspace/app/{ent}/service.py", line {rng.randint(10, 300)}, in {_camel(verb, ent)}',
        f"    value = payload['{fld}']",
        last,
    ]
    via_make = rng.random() < 0.5
    target = f"{verb}-{_plural(ent)}"
    trailer = [f"make: *** [Makefile:{rng.randint(10, 60)}: {target}] Error 1"] if via_make else []
    cmd = f"make {target}" if via_make else f"python {script} --since 2026-01-01"
    return Failure(
        "python",
        cmd,
        2 if via_make else 1,
        last,
        _shaped(rng, _py_log_noise(rng, f"app.{ent}"), block, trailer),
        success_output="\n".join(_py_log_noise(rng, f"app.{ent}")(6))
        + f"\nINFO done: {rng.randint(100, 9000)} {_plural(ent)}\n",
        fix_hint=f"the `{fld}` lookup now tolerates rows written before the column existed",
    )


def mypy_error(rng: Random) -> Failure:
    ent, fld, verb = _pick(rng, ENTITIES), _pick(rng, FIELDS), _pick(rng, VERBS)
    line = rng.randint(12, 300)
    msg = _pick(
        rng,
        (
            f'Argument 1 to "{_camel(verb, ent)}" has incompatible type "str | None"; expected "str"  [arg-type]',
            f'Item "None" of "{_pascal(ent)} | None" has no attribute "{fld}"  [union-attr]',
            f'Incompatible return value type (got "dict[str, Any]", expected "{_pascal(ent)}")  [return-value]',
            f'"{_pascal(ent)}" has no attribute "{fld}"  [attr-defined]',
        ),
    )
    err = f"src/app/{ent}/{verb}.py:{line}: error: {msg}"
    notes = [
        f'src/app/{_pick(rng, ENTITIES)}/models.py:{rng.randint(5, 90)}: note: "{_pascal(ent)}" defined here'
        for _ in range(rng.randint(0, 2))
    ]
    checked = rng.randint(120, 480)

    def noise(n: int) -> list[str]:
        return [
            f"LOG:  Parsing src/app/{_pick(rng, ENTITIES)}/{_pick(rng, VERBS)}.py (app.{_pick(rng, ENTITIES)})"
            for _ in range(n)
        ]

    outputs = _shaped(
        rng, noise, [err, *notes], [f"Found 1 error in 1 file (checked {checked} source files)"]
    )
    cmd = f"mypy src/app/{ent}" if rng.random() < 0.5 else f"mypy --strict src/app/{ent}"
    outputs["middle"] = outputs["late"]  # mypy prints its errors last; -v noise comes first
    return Failure(
        "mypy",
        cmd if rng.random() < 0.7 else f"{cmd} -v",
        1,
        err,
        outputs,
        success_output=f"Success: no issues found in {checked} source files\n",
        fix_hint=f"narrowed the optional before calling `{_camel(verb, ent)}`",
    )


def pip_resolve(rng: Random) -> Failure:
    pkgs = (
        ("torch", "2.3.0+cu118", "2.4.0, 2.4.1, 2.5.0, 2.5.1"),
        ("psycopg-binary", "3.1.8", "3.2.1, 3.2.2, 3.2.3"),
        ("numpy", "1.21.6", "1.26.4, 2.0.2, 2.1.3"),
        ("pydantic-core", "2.14.1", "2.23.4, 2.27.1"),
        ("grpcio-tools", "1.48.2", "1.62.3, 1.64.1, 1.66.2"),
        ("tensorflow-io-gcs-filesystem", "0.31.0", "0.36.0, 0.37.1"),
    )
    name, ver, avail = pkgs[rng.randrange(len(pkgs))]
    err = f"ERROR: Could not find a version that satisfies the requirement {name}=={ver} (from versions: {avail})"
    req = _pick(rng, ("requirements/dev.txt", "requirements.txt", "requirements/ci.txt"))

    def noise(n: int) -> list[str]:
        out = []
        for _ in range(n):
            dep = _pick(rng, CRATES).replace("_", "-")
            out.append(
                _pick(
                    rng,
                    (
                        f"Collecting {dep}>=1.{rng.randint(0, 9)} (from -r {req} (line {rng.randint(1, 80)}))",
                        f"  Using cached {dep}-{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}-py3-none-any.whl.metadata ({rng.randint(2, 40)} kB)",
                        f"Requirement already satisfied: {dep} in ./.venv/lib/python3.11/site-packages ({rng.randint(1, 4)}.{rng.randint(0, 20)})",
                    ),
                )
            )
        return out

    trailer = [f"ERROR: No matching distribution found for {name}=={ver}"]
    return Failure(
        "pip",
        f"pip install -r {req}",
        1,
        err,
        _shaped(rng, noise, [err], trailer),
        success_output=f"Successfully installed {name}-{avail.split(', ')[-1]}\n",
        fix_hint=f"relaxed the `{name}` pin",
    )


def alembic_missing(rng: Random) -> Failure:
    table = _plural(_pick(rng, ENTITIES))
    fld = _pick(rng, FIELDS)
    rev = "".join(_pick(rng, "0123456789abcdef") for _ in range(12))
    err = (
        f'sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedTable) relation "{table}" '
        "does not exist"
    )
    head = [
        "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.",
        "INFO  [alembic.runtime.migration] Will assume transactional DDL.",
    ]

    def noise(n: int) -> list[str]:
        return [
            "INFO  [alembic.runtime.migration] Running upgrade "
            + "".join(_pick(rng, "0123456789abcdef") for _ in range(12))
            + " -> "
            + "".join(_pick(rng, "0123456789abcdef") for _ in range(12))
            + f", {_pick(rng, VERBS)} {_pick(rng, ENTITIES)} {_pick(rng, FIELDS)}"
            for _ in range(n)
        ]

    block = [
        f"INFO  [alembic.runtime.migration] Running upgrade -> {rev}, add {fld} to {table}",
        "Traceback (most recent call last):",
        '  File "/workspace/.venv/lib/python3.11/site-packages/sqlalchemy/engine/base.py", line 1967, in _exec_single_context',
        "    self.dialect.do_execute(",
        'psycopg.errors.UndefinedTable: relation "' + table + '" does not exist',
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        err,
    ]
    trailer = [
        f"[SQL: ALTER TABLE {table} ADD COLUMN {fld} VARCHAR(64)]",
        "(Background on this error at: https://sqlalche.me/e/20/f405)",
    ]
    out = _shaped(rng, noise, block, trailer, head=head)
    return Failure(
        "alembic",
        f"alembic -x tenant={_pick(rng, ENTITIES)}-{rng.randint(2, 99)} upgrade head",
        1,
        err,
        out,
        success_output=f"{head[0]}\n{head[1]}\nINFO  [alembic.runtime.migration] Running upgrade -> {rev}, add {fld} to {table}\n",
        fix_hint=f"the migration now depends on the one that creates `{table}`",
    )


# --- TypeScript / Node ------------------------------------------------------------------------


def _ts_error(rng: Random) -> tuple[str, str]:
    ent, fld = _pick(rng, ENTITIES), _camel(_pick(rng, FIELDS))
    file = f"src/{_pick(rng, ('routes', 'lib', 'services', 'components', 'hooks'))}/{ent}.ts"
    pos = f"({rng.randint(5, 240)},{rng.randint(3, 40)})"
    msg = _pick(
        rng,
        (
            f"error TS2339: Property '{fld}' does not exist on type '{_pascal(ent)}'.",
            f"error TS2322: Type '{_pascal(ent)}Status | undefined' is not assignable to type '{_pascal(ent)}Status'.",
            f"error TS2345: Argument of type '{_pascal(ent)}Input' is not assignable to parameter of type '{_pascal(ent)}'.",
            f"error TS2304: Cannot find name '{_camel('use', ent)}'.",
            f"error TS7006: Parameter '{fld}' implicitly has an 'any' type.",
        ),
    )
    return f"{file}{pos}: {msg}", ent


def tsc_short(rng: Random) -> Failure:
    err, ent = _ts_error(rng)
    cmd = _pick(
        rng, ("npx tsc --noEmit", "npx tsc --noEmit -p tsconfig.json", "pnpm exec tsc --noEmit")
    )
    out = {
        "short": f"{err}\n\nFound 1 error in {err.split('(')[0]}:{err.split('(')[1].split(',')[0]}\n\n"
    }
    return Failure(
        "tsc",
        cmd,
        2,
        err,
        out,
        success_output="",
        fix_hint=f"the `{_pascal(ent)}` type now declares the field",
    )


def tsc_turbo(rng: Random) -> Failure:
    scope = _pick(rng, NPM_SCOPES)
    pkg = _pick(rng, ("api", "web", "admin", "worker"))
    err_body, ent = _ts_error(rng)
    err = f"{scope}/{pkg}:build: {err_body}"
    others = ("ui", "config", "db", "emails", "sdk", "icons", "utils", "web", "admin")

    def noise(n: int) -> list[str]:
        out = []
        for _ in range(n):
            other = _pick(rng, others)
            out.append(
                _pick(
                    rng,
                    (
                        f"{scope}/{other}:build: dist/{_pick(rng, ENTITIES)}.js   {rng.uniform(0.2, 90):.2f} kB │ gzip: {rng.uniform(0.1, 30):.2f} kB",
                        f"{scope}/{other}:build: ✓ {rng.randint(20, 900)} modules transformed.",
                        f"{scope}/{other}:build: cache miss, executing {''.join(_pick(rng, '0123456789abcdef') for _ in range(16))}",
                        f"{scope}/{other}:build: > {scope}/{other}@0.{rng.randint(1, 30)}.0 build",
                    ),
                )
            )
        return out

    trailer = [
        f"{scope}/{pkg}:build: ERROR: command finished with error: command (/repo/packages/{pkg}) /usr/local/bin/npm run build exited (2)",
        f"{scope}/{pkg}#build: command (/repo/packages/{pkg}) /usr/local/bin/npm run build exited (2)",
        "",
        f" Tasks:    {rng.randint(5, 11)} successful, {rng.randint(12, 14)} total",
        f"Cached:    {rng.randint(1, 5)} cached, {rng.randint(12, 14)} total",
        f"  Time:    {rng.uniform(8, 90):.3f}s",
        "Failed:    " + f"{scope}/{pkg}#build",
        "",
        " ERROR  run failed: command  exited (2)",
    ]
    return Failure(
        "tsc",
        f"npx turbo run build --filter={scope}/{pkg}...",
        2,
        err,
        _shaped(rng, noise, [err], trailer),
        success_output=f" Tasks:    14 successful, 14 total\nCached:    9 cached, 14 total\n  Time:    {rng.uniform(8, 90):.3f}s\n",
        fix_hint=f"the `{_pascal(ent)}` type now declares the field",
    )


def jest_fail(rng: Random) -> Failure:
    ent, verb = _pick(rng, ENTITIES), _pick(rng, VERBS)
    suite = _pascal(ent)
    case = f"{verb}s {_pick(rng, ('percentage', 'expired', 'stacked', 'partial', 'zero', 'negative', 'duplicate'))} {ent} {_pick(rng, ('codes', 'rows', 'entries', 'amounts', 'ids'))}"
    err = f"● {suite} › {case}"
    test_file = f"src/__tests__/{ent}.test.ts"
    exp, rec = rng.randint(100, 999), rng.randint(100, 999)

    def noise(n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            e = _pick(rng, ENTITIES)
            out.append(
                f"PASS src/{_pick(rng, ('lib', 'api', 'ui'))}/__tests__/{e}.test.ts ({rng.uniform(0.3, 6):.3f} s)"
            )
            for _ in range(rng.randint(2, 6)):
                out.append(
                    f"  ✓ {_pick(rng, VERBS)}s {e} {_pick(rng, FIELDS).replace('_', ' ')} ({rng.randint(1, 90)} ms)"
                )
        return out[:n]

    block = [
        f"FAIL {test_file}",
        f"  {err}",
        "",
        "    expect(received).toBe(expected) // Object.is equality",
        "",
        f"    Expected: {exp}",
        f"    Received: {rec}",
        "",
        f"      {rng.randint(20, 90)} |     const total = {_camel(verb, ent)}(cart);",
        f"    > {rng.randint(91, 120)} |     expect(total.amount).toBe({exp});",
        "         |                          ^",
        "",
        f"      at Object.<anonymous> ({test_file}:{rng.randint(91, 120)}:26)",
        "",
    ]
    total = rng.randint(120, 600)
    trailer = [
        f"Test Suites: 1 failed, {rng.randint(20, 80)} passed, {rng.randint(81, 90)} total",
        f"Tests:       1 failed, {total} passed, {total + 1} total",
        "Snapshots:   0 total",
        f"Time:        {rng.uniform(4, 60):.3f} s",
        "Ran all test suites.",
    ]
    via_npm = rng.random() < 0.5
    if via_npm:
        trailer += [
            "npm ERR! Lifecycle script `test` failed with error: ",
            "npm ERR! Error: command failed ",
            f"npm ERR!   in workspace: {_pick(rng, NPM_SCOPES)}/web@0.{rng.randint(1, 30)}.0 ",
            "npm ERR!   at location: /repo/packages/web ",
        ]
    cmd = (
        f"npm test -w {_pick(rng, NPM_SCOPES)}/{ent} -- --ci"
        if via_npm
        else f"npx jest --ci {test_file}"
    )
    return Failure(
        "jest",
        cmd,
        1,
        err,
        _shaped(rng, noise, block, trailer),
        success_output=f"Test Suites: {rng.randint(20, 90)} passed\nTests:       {total + 1} passed, {total + 1} total\n",
        fix_hint=f"`{_camel(verb, ent)}` rounds after applying the discount, not before",
    )


def node_missing_module(rng: Random) -> Failure:
    mod = _pick(
        rng,
        (
            "dotenv-flow",
            "@aws-sdk/client-s3",
            "pg-format",
            "yaml",
            "zod",
            "undici",
            "p-limit",
            "nanoid",
            "sharp",
        ),
    )
    script = f"scripts/{_pick(rng, VERBS)}-{_plural(_pick(rng, ENTITIES))}.js"
    err = f"Error: Cannot find module '{mod}'"
    block = [
        "node:internal/modules/cjs/loader:1228",
        "  throw err;",
        "  ^",
        "",
        err,
        "Require stack:",
        f"- /app/{script}",
        "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
        "    at Module._load (node:internal/modules/cjs/loader:1051:27)",
        "    at Module.require (node:internal/modules/cjs/loader:1311:19)",
        "    at require (node:internal/modules/helpers:179:18)",
        f"    at Object.<anonymous> (/app/{script}:3:{rng.randint(10, 30)})",
        "{",
        "  code: 'MODULE_NOT_FOUND',",
        f"  requireStack: [ '/app/{script}' ]",
        "}",
        "",
        "Node.js v20.11.1",
    ]
    return Failure(
        "node",
        f"node {script}",
        1,
        err,
        {"short": "\n".join(block) + "\n"},
        success_output=f"done: {rng.randint(10, 900)} rows\n",
        fix_hint=f"added `{mod}` to the dependencies",
    )


def npm_eresolve(rng: Random) -> Failure:
    scope = _pick(rng, NPM_SCOPES)
    peer = _pick(
        rng, ('react@"^17.0.0"', 'eslint@"^8.0.0"', 'typescript@">=4.7 <5.4"', 'vite@"^4.0.0"')
    )
    have = _pick(rng, ("react@18.3.1", "eslint@9.17.0", "typescript@5.6.3", "vite@5.4.11"))
    dep = _pick(
        rng,
        (
            "react-beautiful-dnd@13.1.1",
            "eslint-plugin-import@2.27.5",
            "ts-jest@29.0.5",
            "vite-plugin-pwa@0.14.7",
        ),
    )
    err = "npm ERR! ERESOLVE unable to resolve dependency tree"
    block = [
        "npm ERR! code ERESOLVE",
        err,
        "npm ERR! ",
        f"npm ERR! While resolving: {scope}/web@0.{rng.randint(1, 30)}.0",
        f"npm ERR! Found: {have}",
        "npm ERR! node_modules/" + have.rsplit("@", 1)[0],
        "npm ERR! ",
        "npm ERR! Could not resolve dependency:",
        f"npm ERR! peer {peer} from {dep}",
        "npm ERR! ",
        "npm ERR! Fix the upstream dependency conflict, or retry",
        "npm ERR! this command with --force or --legacy-peer-deps",
        "npm ERR! to accept an incorrect (and potentially broken) dependency resolution.",
    ]

    def noise(n: int) -> list[str]:
        return [
            _pick(
                rng,
                (
                    f"npm http fetch GET 200 https://registry.npmjs.org/{_pick(rng, CRATES)} {rng.randint(5, 400)}ms (cache revalidated)",
                    f"npm timing idealTree:node_modules/{_pick(rng, CRATES)} Completed in {rng.randint(0, 40)}ms",
                    f"npm verb reify diffTrees for {_pick(rng, CRATES)}",
                ),
            )
            for _ in range(n)
        ]

    stamp = (
        f"2026-03-{rng.randint(1, 28):02d}T{_clock(rng).replace(':', '_')}_{rng.randint(100, 999)}Z"
    )
    trailer = [
        "npm ERR! ",
        f"npm ERR! For a full report see:\nnpm ERR! /root/.npm/_logs/{stamp}-eresolve-report.txt",
        "",
        "npm ERR! A complete log of this run can be found in: /root/.npm/_logs/"
        + stamp
        + "-debug-0.log",
    ]
    return Failure(
        "npm",
        f"npm install {dep} --loglevel=http"
        if rng.random() < 0.5
        else f"npm install -w {scope}/web {dep}",
        1,
        err,
        _shaped(rng, noise, block, trailer),
        success_output=f"added {rng.randint(400, 1800)} packages, and audited {rng.randint(1801, 1900)} packages in {rng.randint(8, 60)}s\n",
        fix_hint=f"moved to a version of `{dep.rsplit('@', 1)[0]}` that accepts {have.rsplit('@', 1)[0]}",
    )


def playwright_timeout(rng: Random) -> Failure:
    spec = f"e2e/{_pick(rng, ENTITIES)}.spec.ts"
    route = f"/{_pick(rng, ENTITIES)}s/{_pick(rng, ('new', 'confirm', 'review', 'done'))}"
    err = f'TimeoutError: page.waitForURL: Timeout 30000ms exceeded waiting for "**{route}"'

    def noise(n: int) -> list[str]:
        return [
            f"  ✓  {rng.randint(1, 300)} [chromium] › {_pick(rng, ('e2e/login.spec.ts', 'e2e/search.spec.ts', 'e2e/profile.spec.ts'))}:{rng.randint(5, 200)}:{rng.randint(3, 9)} › {_pick(rng, VERBS)}s {_pick(rng, ENTITIES)} ({rng.uniform(0.4, 9):.1f}s)"
            for _ in range(n)
        ]

    block = [
        f"  ✘  {rng.randint(1, 300)} [chromium] › {spec}:{rng.randint(5, 200)}:7 › completes {route} (30.1s)",
        f"    {err}",
        "    =========================== logs ===========================",
        f'    waiting for navigation to "**{route}" until "load"',
        "    ============================================================",
    ]
    return Failure(
        "playwright",
        f"timeout 600 npx playwright test {spec} --project=chromium",
        124,
        f"{err}",
        _shaped(
            rng, noise, block, [f"  Slow test file: [chromium] › {spec} ({rng.randint(60, 500)}s)"]
        ),
        success_output=f"  {rng.randint(10, 80)} passed ({rng.uniform(30, 300):.1f}s)\n",
        fix_hint="the redirect after payment waits for the webhook instead of polling",
    )


# --- Rust ---------------------------------------------------------------------------------------


def _cargo_noise(rng: Random) -> Callable[[int], list[str]]:
    def noise(n: int) -> list[str]:
        return [
            f"   Compiling {_pick(rng, CRATES)} v{rng.randint(0, 2)}.{rng.randint(0, 40)}.{rng.randint(0, 30)}"
            for _ in range(n)
        ]

    return noise


def cargo_error(rng: Random) -> Failure:
    crate = f"{_pick(rng, ENTITIES)}-{_pick(rng, ('core', 'api', 'store', 'cli'))}"
    ent, fld, verb = _pick(rng, ENTITIES), _pick(rng, FIELDS), _pick(rng, VERBS)
    kind = rng.randrange(5)
    err = (
        f"error[E0599]: no method named `{verb}_{fld}` found for struct `{_pascal(ent)}` in the current scope",
        f"error[E0425]: cannot find value `{fld}` in this scope",
        f"error[E0277]: the trait bound `{_pascal(ent)}: Serialize` is not satisfied",
        f"error[E0382]: borrow of moved value: `{ent}`",
        f"error[E0433]: failed to resolve: use of undeclared crate or module `{ent}_store`",
    )[kind]
    file = f"crates/{crate}/src/{_pick(rng, ENTITIES)}.rs"
    line = rng.randint(10, 400)
    block = [
        err,
        f"  --> {file}:{line}:{rng.randint(5, 40)}",
        "   |",
        f"{line} |         let out = {ent}.{verb}_{fld}(&ctx)?;",
        "   |                         ^^^^^^^^^^^^",
        "",
        f"For more information about this error, try `rustc --explain {err[6:11]}`.",
    ]
    trailer = [
        f"error: could not compile `{crate}` (lib) due to 1 previous error",
        "warning: build failed, waiting for other jobs to finish...",
    ]
    cmd = _pick(
        rng,
        (
            f"cargo build -p {crate}",
            f"cargo build -p {crate} --features {fld.replace('_', '-')}",
            f"cargo check -p {crate}",
            f"cargo clippy -p {crate} --all-targets",
        ),
    )
    return Failure(
        "cargo",
        cmd,
        101,
        err,
        _shaped(rng, _cargo_noise(rng), block, trailer),
        success_output=f"   Compiling {crate} v0.{rng.randint(1, 9)}.0 (/workspace/crates/{crate})\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in {rng.uniform(2, 80):.2f}s\n",
        fix_hint=f"`{_pascal(ent)}` gets the missing piece in `{file}`",
        extra={"crate": crate},
    )


def cargo_test_panic(rng: Random) -> Failure:
    ent, verb = _pick(rng, ENTITIES), _pick(rng, VERBS)
    test = f"{ent}::tests::{verb}_{_pick(rng, FIELDS)}_roundtrip"
    left, right = rng.randint(1, 500), rng.randint(501, 999)
    err = f"thread '{test}' panicked at src/{ent}.rs:{rng.randint(50, 500)}:9:"

    def noise(n: int) -> list[str]:
        return [
            f"test {_pick(rng, ENTITIES)}::tests::{_pick(rng, VERBS)}_{_pick(rng, FIELDS)} ... ok"
            for _ in range(n)
        ]

    block = [
        f"test {test} ... FAILED",
        "",
        "failures:",
        "",
        f"---- {test} stdout ----",
        err,
        "assertion `left == right` failed",
        f"  left: {left}",
        f" right: {right}",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    ]
    total = rng.randint(100, 400)
    trailer = [
        "",
        "failures:",
        f"    {test}",
        "",
        f"test result: FAILED. {total} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {rng.uniform(0.1, 9):.2f}s",
        "",
        "error: test failed, to rerun pass `--lib`",
    ]
    return Failure(
        "cargo",
        f"cargo test --lib {ent}",
        101,
        err,
        _shaped(rng, noise, block, trailer, head=[f"running {total + 1} tests"]),
        success_output=f"test result: ok. {total + 1} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {rng.uniform(0.1, 9):.2f}s\n",
        fix_hint=f"`{verb}` no longer truncates on the way back",
    )


# --- Go -----------------------------------------------------------------------------------------


def go_build(rng: Random) -> Failure:
    mod = f"github.com/{_pick(rng, ('acme', 'northwind', 'kite-labs'))}/{_pick(rng, ('warehouse', 'billing', 'relay', 'pager'))}"
    pkg = _pick(rng, GO_PKGS)
    ident = _camel(_pick(rng, VERBS), _pick(rng, ENTITIES))
    file = f"./{pkg}/{_pick(rng, ENTITIES)}.go"
    err = _pick(
        rng,
        (
            f"{file}:{rng.randint(5, 300)}:{rng.randint(2, 30)}: undefined: {ident}",
            f"{file}:{rng.randint(5, 300)}:{rng.randint(2, 30)}: cannot use {ident} (variable of type int64) as int value in argument to store.Put",
            f"{file}:{rng.randint(5, 300)}:{rng.randint(2, 30)}: {ident} declared and not used",
        ),
    )

    def noise(n: int) -> list[str]:
        return [f"{mod}/{_pick(rng, GO_PKGS)}" for _ in range(n)]

    verbose = rng.random() < 0.6
    outputs = _shaped(rng, noise, [f"# {mod}/{pkg}", err], [], short_noise=4 if verbose else 0)

    return Failure(
        "go",
        f"go build -v ./{pkg.split('/')[0]}/..." if verbose else f"go build ./{pkg}/...",
        1,
        err,
        outputs if verbose else {"short": outputs["short"]},
        success_output="",
        fix_hint=f"`{ident}` is defined where the package expects it",
    )


def go_test(rng: Random) -> Failure:
    mod = f"github.com/{_pick(rng, ('acme', 'northwind', 'kite-labs'))}/{_pick(rng, ('warehouse', 'billing', 'relay', 'pager'))}"
    ent, verb = _pick(rng, ENTITIES), _pick(rng, VERBS)
    test = f"Test{_pascal(verb, ent)}"
    pkg = _pick(rng, GO_PKGS)
    got, want = rng.randint(1, 40), rng.randint(41, 80)
    err = f"{ent}_test.go:{rng.randint(20, 300)}: {verb}: got {got} {_plural(ent)}, want {want}"

    def noise(n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            t = f"Test{_pascal(_pick(rng, VERBS), _pick(rng, ENTITIES))}"
            out += [f"=== RUN   {t}", f"--- PASS: {t} ({rng.uniform(0, 0.3):.2f}s)"]
        return out[:n]

    block = [
        f"=== RUN   {test}",
        f"    {err}",
        f"--- FAIL: {test} ({rng.uniform(0, 0.5):.2f}s)",
    ]
    trailer = ["FAIL", f"FAIL\t{mod}/{pkg}\t{rng.uniform(0.1, 3):.3f}s", "FAIL"]
    return Failure(
        "go",
        f"go test -v ./{pkg}/..." if rng.random() < 0.5 else "go test -v ./...",
        1,
        err,
        _shaped(rng, noise, block, trailer),
        success_output=f"ok  \t{mod}/{pkg}\t{rng.uniform(0.1, 3):.3f}s\n",
        fix_hint=f"`{verb}` counts the last page too",
    )


# --- C / make -----------------------------------------------------------------------------------


def _make_noise(rng: Random) -> Callable[[int], list[str]]:
    def noise(n: int) -> list[str]:
        out = []
        for _ in range(n):
            unit = _pick(rng, C_UNITS)
            if rng.random() < 0.12:
                out.append(
                    f"src/{unit}.c:{rng.randint(10, 400)}:{rng.randint(3, 30)}: warning: unused variable '{_pick(rng, ('tmp', 'rc', 'len', 'n', 'flags'))}' [-Wunused-variable]"
                )
            else:
                out.append(f"cc -O2 -g -Wall -Wextra -Iinclude -c src/{unit}.c -o build/{unit}.o")
        return out

    return noise


def make_gcc(rng: Random) -> Failure:
    unit = _pick(rng, C_UNITS)
    fn = f"{_pick(rng, ('rb', 'conn', 'arena', 'pool', 'tmr'))}_{_pick(rng, ('reset', 'grow', 'drain', 'peek', 'close_all', 'rehash'))}"
    line = rng.randint(20, 600)
    err = _pick(
        rng,
        (
            f"src/{unit}.c:{line}:5: error: implicit declaration of function '{fn}' [-Wimplicit-function-declaration]",
            f"src/{unit}.c:{line}:12: error: 'struct {unit}' has no member named '{fn}'",
            f"src/{unit}.c:{line}:1: error: conflicting types for '{fn}'; have 'int(void)'",
            f"src/{unit}.c:{line}:9: error: too few arguments to function '{fn}'",
        ),
    )
    block = [
        f"src/{unit}.c: In function '{_pick(rng, C_UNITS)}_{_pick(rng, ('init', 'run', 'step', 'free'))}':",
        err,
        f"  {line} |     {fn}(ctx);",
        "      |     ^~~~~~~~",
    ]
    target = _pick(rng, ("build", "all", "server"))
    trailer = [
        f"make: *** [Makefile:{rng.randint(8, 40)}: {target}] Error 1",
        "make: *** Waiting for unfinished jobs....",
    ]
    return Failure(
        "gcc",
        f"make -j4 {target}"
        if rng.random() < 0.5
        else f"make -j$(nproc) {target} CFLAGS_EXTRA=-DWITH_{unit.upper()}",
        2,
        err,
        _shaped(rng, _make_noise(rng), block, trailer),
        success_output=f"cc -O2 -g -Wall -Wextra -Iinclude -c src/{unit}.c -o build/{unit}.o\ncc -o bin/server build/*.o -lpthread\n",
        fix_hint=f"`{fn}` is declared in the header now",
    )


def make_ld(rng: Random) -> Failure:
    unit = _pick(rng, C_UNITS)
    fn = f"{_pick(rng, ('rb', 'conn', 'arena', 'pool'))}_{_pick(rng, ('free', 'push', 'pop', 'flush', 'stats'))}"
    err = f"/usr/bin/ld: src/{unit}.c:{rng.randint(20, 600)}: undefined reference to `{fn}'"
    block = [
        f"/usr/bin/ld: build/{unit}.o: in function `{unit}_close':",
        err,
        "collect2: error: ld returned 1 exit status",
    ]
    trailer = [f"make: *** [Makefile:{rng.randint(8, 40)}: bin/{unit}d] Error 1"]
    return Failure(
        "ld",
        f"make bin/{unit}d",
        2,
        err,
        _shaped(rng, _make_noise(rng), block, trailer),
        success_output=f"cc -o bin/{unit}d build/*.o -lpthread\n",
        fix_hint=f"the object with `{fn}` is linked in",
    )


def make_test_assert(rng: Random) -> Failure:
    unit = _pick(rng, C_UNITS)
    case = f"{unit}_{_pick(rng, ('wraps', 'grows', 'drains', 'rejects_overflow', 'keeps_order'))}"
    n = rng.randint(2, 9)
    err = f"tests/test_{unit}.c:{rng.randint(20, 300)}: {case}: Assertion `{unit}_len(&t) == {n}' failed."

    def noise(n_: int) -> list[str]:
        out: list[str] = []
        while len(out) < n_:
            c = f"{_pick(rng, C_UNITS)}_{_pick(rng, ('init', 'push', 'pop', 'free', 'grow'))}"
            out += [f"[ RUN      ] {c}", f"[       OK ] {c} ({rng.randint(0, 9)} ms)"]
        return out[:n_]

    block = [f"[ RUN      ] {case}", err]
    trailer = [
        "Aborted (core dumped)",
        f"make: *** [Makefile:{rng.randint(40, 70)}: test] Error 134",
    ]
    return Failure(
        "ctest",
        f"make test FILTER={case}",
        2,
        err,
        _shaped(rng, noise, block, trailer),
        success_output=f"[==========] {rng.randint(40, 200)} tests ran.\n[  PASSED  ] all\n",
        fix_hint=f"`{unit}` recomputes its length after wrapping",
    )


# --- SQL --------------------------------------------------------------------------------------


def psql_error(rng: Random) -> Failure:
    table = _plural(_pick(rng, ENTITIES))
    fld = _pick(rng, FIELDS)
    mig = f"db/migrations/2026{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}_{rng.randint(1, 99):04d}_{_pick(rng, VERBS)}_{table}.sql"
    line = rng.randint(3, 200)
    err = _pick(
        rng,
        (
            f'psql:{mig}:{line}: ERROR:  relation "{table}" does not exist',
            f'psql:{mig}:{line}: ERROR:  column "{fld}" of relation "{table}" already exists',
            f'psql:{mig}:{line}: ERROR:  syntax error at or near "{_pick(rng, ("CONSTRAINT", "USING", "IF", "ON"))}"',
        ),
    )

    def noise(n: int) -> list[str]:
        return [
            _pick(
                rng,
                (
                    "INSERT 0 1",
                    "INSERT 0 1",
                    "INSERT 0 1",
                    "UPDATE 1",
                    "CREATE INDEX",
                    "ALTER TABLE",
                ),
            )
            for _ in range(n)
        ]

    block = [
        err,
        f"LINE 1: ALTER TABLE {table} ADD COLUMN {fld} text REFERENCES tenant...",
        "                    ^",
    ]
    cmd = f'psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f {mig}'
    out = _shaped(rng, noise, block, [], head=["BEGIN", "SET"])
    return Failure(
        "psql",
        cmd,
        3,
        err,
        out,
        success_output="BEGIN\nSET\nALTER TABLE\nCREATE INDEX\nCOMMIT\n",
        fix_hint=f"the migration now creates `{table}` first",
    )


# --- anywhere -----------------------------------------------------------------------------------


def git_fatal(rng: Random) -> Failure:
    branch = f"{_pick(rng, ('feat', 'fix', 'chore'))}/{_pick(rng, ENTITIES)}-{_pick(rng, FIELDS).replace('_', '-')}"
    kind = rng.randrange(3)
    if kind == 0:
        err = f"error: pathspec '{branch}' did not match any file(s) known to git"
        return Failure(
            "git",
            f"git checkout {branch}",
            1,
            err,
            {"short": err + "\n"},
            f"Switched to branch '{branch}'\n",
            "fetched the branch first",
            fix_command=f"git fetch origin {branch}:{branch}",
        )
    if kind == 1:
        err = (
            "fatal: Authentication failed for 'https://github.com/acme/"
            + _pick(rng, ENTITIES)
            + "-service.git/'"
        )
        out = f"remote: Invalid username or token. Password authentication is not supported for Git operations.\n{err}\n"
        return Failure(
            "git",
            f"git push -u origin {branch}",
            128,
            err,
            {"short": out},
            f"To github.com:acme/service.git\n * [new branch]      {branch} -> {branch}\n",
            "switched the remote to SSH",
            fix_command="git remote set-url origin git@github.com:acme/service.git",
        )
    sha = "".join(_pick(rng, "0123456789abcdef") for _ in range(7))
    err = f"error: could not apply {sha}... {_pick(rng, VERBS)} {_pick(rng, ENTITIES)} {_pick(rng, FIELDS)}"
    out = (
        f"Auto-merging src/{_pick(rng, ENTITIES)}.ts\nCONFLICT (content): Merge conflict in src/{_pick(rng, ENTITIES)}.ts\n{err}\n"
        "hint: Resolve all conflicts manually, mark them as resolved with\n"
        'hint: "git add/rm <conflicted_files>", then run "git rebase --continue".\n'
    )
    return Failure(
        "git",
        f"git rebase origin/{_pick(rng, ('main', 'develop', 'release-2026.03'))}",
        1,
        err,
        {"short": out},
        "Successfully rebased and updated refs/heads/" + branch + ".\n",
        "kept both changes in the conflicting file and aborted the half-done rebase first",
        fix_command="git rebase --abort",
    )


def ssh_fail(rng: Random) -> Failure:
    host = f"10.{rng.randint(0, 40)}.{rng.randint(0, 255)}.{rng.randint(2, 250)}"
    svc = _pick(rng, ENTITIES)
    err = f"ssh: connect to host {host} port 22: Connection timed out"
    return Failure(
        "ssh",
        f"ssh deploy@{host} 'sudo systemctl restart {svc}-api'",
        255,
        err,
        {"short": err + "\n"},
        success_output="",
        fix_hint="the deploy key was not loaded in the agent",
        fix_command="ssh-add ~/.ssh/deploy_ed25519",
    )


def permission_denied(rng: Random) -> Failure:
    script = f"./scripts/{_pick(rng, ('deploy', 'rotate-keys', 'backup', 'seed'))}-{_pick(rng, ENTITIES)}.sh"
    if rng.random() < 0.5:
        err = f"bash: {script}: Permission denied"
        return Failure(
            "shell",
            f"{script} staging",
            126,
            err,
            {"short": err + "\n"},
            "done\n",
            "made the script executable",
            fix_command=f"chmod +x {script}",
        )
    path = f"/var/lib/{_pick(rng, ENTITIES)}/{_pick(rng, ('cache', 'spool', 'exports'))}.lock"
    err = f"{script}: line {rng.randint(5, 80)}: {path}: Permission denied"
    return Failure(
        "shell",
        f"{script} --dry-run",
        1,
        err,
        {"short": f"preparing...\n{err}\n"},
        "done\n",
        "the lock file goes under $XDG_RUNTIME_DIR now",
        fix_command=f"sed -i 's|/var/lib/|${{XDG_RUNTIME_DIR:-/tmp}}/|' {script}",
    )


def command_not_found(rng: Random) -> Failure:
    full = _pick(
        rng,
        (
            "pnpm install --frozen-lockfile",
            "golangci-lint run ./...",
            "sqlc generate",
            "protoc -I proto --go_out=. proto/relay/v1/relay.proto",
            "terraform -chdir=infra/staging plan",
            "cargo-nextest nextest run",
            "uv sync --frozen",
        ),
    )
    tool = full.split(" ", 1)[0]
    install = {
        "pnpm": "npm install -g pnpm@9",
        "golangci-lint": "go install github.com/golangci/golangci-lint/cmd/golangci-lint@v1.61.0",
        "sqlc": "go install github.com/sqlc-dev/sqlc/cmd/sqlc@v1.27.0",
        "protoc": "apt-get install -y protobuf-compiler",
        "terraform": "apt-get install -y terraform",
        "cargo-nextest": "cargo install cargo-nextest --locked",
        "uv": "pip install uv",
    }[tool]
    err = f"bash: {tool}: command not found"
    return Failure(
        "shell",
        full,
        127,
        err,
        {"short": err + "\n"},
        "ok\n",
        f"installed `{tool}`",
        fix_command=install,
    )


def curl_fail(rng: Random) -> Failure:
    url = f"https://{_pick(rng, ('downloads', 'releases', 'artifacts'))}.acme-internal.dev/{_pick(rng, ENTITIES)}/v{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}/install.sh"
    err = "curl: (22) The requested URL returned error: 404"
    return Failure(
        "curl",
        f"curl -fsSL {url} -o /tmp/install.sh",
        22,
        err,
        {"short": err + "\n"},
        "",
        "the release had not been published yet; it is now",
        fix_command=f"gh release view v{url.split('/v')[-1].split('/')[0]} --repo acme/installers",
    )


def killed(rng: Random) -> Failure:
    script = f"./scripts/reindex-{_plural(_pick(rng, ENTITIES))}.sh"
    pid = rng.randint(1000, 30000)
    err = f"{script}: line {rng.randint(10, 60)}: {pid} Killed                  python -m indexer.reindex --all"

    def noise(n: int) -> list[str]:
        return [
            f"indexed {rng.randint(1, 400) * 1000}/450000 docs ({rng.uniform(100, 4000):.0f} docs/s)"
            for _ in range(n)
        ]

    return Failure(
        "oom",
        f"{script} --batch-size 5000",
        137,
        err,
        _shaped(rng, noise, [err], []),
        success_output="indexed 450000/450000 docs\n",
        fix_hint="the batch size is smaller and the reader streams",
    )


def docker_build(rng: Random) -> Failure:
    step = _pick(
        rng, ("npm ci", "pip install -r requirements.txt", "go mod download", "cargo fetch")
    )
    err = f'ERROR: failed to solve: process "/bin/sh -c {step}" did not complete successfully: exit code: 1'

    def noise(n: int) -> list[str]:
        return [
            f"#{rng.randint(5, 14)} {rng.uniform(0.1, 90):.3f} {_pick(rng, ('Downloading', 'Extracting', 'Fetched', 'Unpacking'))} {_pick(rng, CRATES)} {rng.randint(1, 900)}kB"
            for _ in range(n)
        ]

    block = [
        f'#{rng.randint(9, 12)} ERROR: process "/bin/sh -c {step}" did not complete successfully: exit code: 1',
        "------",
        f" > [build {rng.randint(4, 7)}/9] RUN {step}:",
        "------",
        err,
    ]
    tag = f"{_pick(rng, ENTITIES)}-api:dev"
    return Failure(
        "docker",
        f"docker build -t {tag} .",
        1,
        err,
        _shaped(rng, noise, block, []),
        f"naming to docker.io/library/{tag} done\n",
        "the lock file is copied before the install step",
    )


def kubectl_invalid(rng: Random) -> Failure:
    app = _pick(rng, ENTITIES)
    field_name = _pick(rng, ("envFrom2", "resource", "livenessprobe", "imagePullSecret"))
    file = f"deploy/k8s/{app}-api.yaml"
    err = (
        f'error: error validating "{file}": error validating data: '
        f'ValidationError(Deployment.spec.template.spec.containers[0]): unknown field "{field_name}" in io.k8s.api.core.v1.Container'
    )
    err += "; if you choose to ignore these errors, turn validation off with --validate=false"
    out = f"service/{app}-api unchanged\nconfigmap/{app}-config configured\n{err}\n"
    return Failure(
        "kubectl",
        f"kubectl apply -f {file}",
        1,
        err,
        {"short": out},
        f"deployment.apps/{app}-api configured\n",
        "fixed the field name",
    )


# --- registry -----------------------------------------------------------------------------------

Generator = Callable[[Random], Failure]
BY_ECOSYSTEM: dict[str, tuple[Generator, ...]] = {
    "python": (
        pytest_assert,
        pytest_assert,
        py_traceback,
        mypy_error,
        pip_resolve,
        alembic_missing,
    ),
    "typescript": (
        tsc_short,
        tsc_turbo,
        jest_fail,
        jest_fail,
        node_missing_module,
        npm_eresolve,
        playwright_timeout,
    ),
    "rust": (cargo_error, cargo_error, cargo_test_panic),
    "go": (go_build, go_test, go_test),
    "c": (make_gcc, make_gcc, make_ld, make_test_assert),
    "sql": (psql_error, psql_error, alembic_missing),
}
ANYWHERE: tuple[Generator, ...] = (
    git_fatal, ssh_fail, permission_denied, command_not_found, curl_fail, killed, docker_build, kubectl_invalid,
)  # fmt: skip


# In a checkout of someone else's library (the replayed real sessions) there is no deploy.
ANYWHERE_BY_ECOSYSTEM: dict[str, tuple[Generator, ...]] = {
    "python-real": (git_fatal, command_not_found, permission_denied, curl_fail),
}


def failure_for(ecosystem: str, rng: Random) -> Failure:
    """A failure that fits the task at hand (one in five fits any task)."""
    pool = BY_ECOSYSTEM.get(ecosystem.removesuffix("-real"), ())
    if not pool or rng.random() < 0.2:
        pool = ANYWHERE_BY_ECOSYSTEM.get(ecosystem, ANYWHERE)
    return pool[rng.randrange(len(pool))](rng)
