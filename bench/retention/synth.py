# ruff: noqa: RUF001 (Chinese text uses full-width punctuation)
"""Synthetic tasks for the ecosystems the real sessions lack: TypeScript, Rust, Go, C, Python
services, SQL migrations, with a docs fetch now and then.

A task is a user request, steps (each a short list of turns: an action with its output, now
and then a thought or a short failure fixed on the spot) and a closing message. Projects,
files and identifiers are drawn from small vocabularies by the session's seeded generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random

from bench.retention import failures
from bench.retention.events import (
    Act,
    Edit,
    Event,
    Fetch,
    FindFiles,
    Plan,
    Read,
    Search,
    Shell,
    Turn,
    Write,
)
from bench.retention.failures import ENTITIES, FIELDS, VERBS, _camel, _pascal, _plural

ECOSYSTEMS = ("typescript", "rust", "go", "c", "python", "sql")
WEIGHTS = (3, 2, 2, 2, 1, 2)  # Python also comes from the replayed real sessions


@dataclass
class Task:
    ecosystem: str
    request: str
    steps: list[list[Turn]]
    wrap_up: str
    root: str
    files: list[str] = field(default_factory=list)


# --- file contents by language -----------------------------------------------------------------


def ts_module(ent: str, fld: str, verb: str) -> str:
    E, f = _pascal(ent), _camel(fld)
    return f"""import {{ z }} from "zod";
import {{ db }} from "../lib/db";
import {{ logger }} from "../lib/logger";

export const {E}Schema = z.object({{
  id: z.string().uuid(),
  {f}: z.string().min(1),
  createdAt: z.coerce.date(),
}});

export type {E} = z.infer<typeof {E}Schema>;

export async function {_camel(verb, ent)}(id: string): Promise<{E} | null> {{
  const row = await db.selectFrom("{_plural(ent)}").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) {{
    logger.warn({{ id }}, "{ent} not found");
    return null;
  }}
  return {E}Schema.parse(row);
}}

export function {_camel("format", ent)}({ent}: {E}): string {{
  return `${{{ent}.id}} (${{{ent}.{f}}})`;
}}
"""


def ts_test(ent: str, verb: str) -> str:
    E = _pascal(ent)
    return f"""import {{ describe, expect, it, vi }} from "vitest";
import {{ {_camel(verb, ent)}, {_camel("format", ent)} }} from "../{ent}";

vi.mock("../../lib/db");

describe("{E}", () => {{
  it("returns null for an unknown id", async () => {{
    expect(await {_camel(verb, ent)}("00000000-0000-0000-0000-000000000000")).toBeNull();
  }});

  it("formats for display", () => {{
    expect({_camel("format", ent)}({{ id: "a1", createdAt: new Date(0) }} as never)).toContain("a1");
  }});
}});
"""


def rs_module(ent: str, fld: str, verb: str) -> str:
    E = _pascal(ent)
    return f"""use serde::{{Deserialize, Serialize}};
use sqlx::PgPool;

use crate::error::Error;

#[derive(Debug, Clone, Serialize, Deserialize, sqlx::FromRow)]
pub struct {E} {{
    pub id: i64,
    pub {fld}: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}}

pub async fn {verb}_{ent}(pool: &PgPool, id: i64) -> Result<Option<{E}>, Error> {{
    let row = sqlx::query_as::<_, {E}>("SELECT id, {fld}, created_at FROM {_plural(ent)} WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await?;
    Ok(row)
}}

#[cfg(test)]
mod tests {{
    use super::*;

    #[test]
    fn serializes_{fld}() {{
        let v = {E} {{ id: 1, {fld}: "x".into(), created_at: chrono::Utc::now() }};
        assert!(serde_json::to_string(&v).unwrap().contains("{fld}"));
    }}
}}
"""


def go_module(ent: str, fld: str, verb: str) -> str:
    E = _pascal(ent)
    return f"""package {ent}

import (
\t"context"
\t"database/sql"
\t"errors"
\t"fmt"
)

var ErrNotFound = errors.New("{ent}: not found")

type {E} struct {{
\tID        int64
\t{_pascal(fld)} string
}}

type Store struct {{
\tdb *sql.DB
}}

func (s *Store) {_pascal(verb)}(ctx context.Context, id int64) (*{E}, error) {{
\tvar v {E}
\terr := s.db.QueryRowContext(ctx, `SELECT id, {fld} FROM {_plural(ent)} WHERE id = $1`, id).Scan(&v.ID, &v.{_pascal(fld)})
\tif errors.Is(err, sql.ErrNoRows) {{
\t\treturn nil, ErrNotFound
\t}}
\tif err != nil {{
\t\treturn nil, fmt.Errorf("{verb} {ent} %d: %w", id, err)
\t}}
\treturn &v, nil
}}
"""


def c_module(unit: str) -> str:
    return f"""#include <stdlib.h>
#include <string.h>

#include "{unit}.h"

int {unit}_init(struct {unit} *t, size_t cap)
{{
    t->buf = calloc(cap, sizeof *t->buf);
    if (t->buf == NULL)
        return -1;
    t->cap = cap;
    t->head = t->tail = 0;
    return 0;
}}

size_t {unit}_len(const struct {unit} *t)
{{
    return (t->tail + t->cap - t->head) % t->cap;
}}

void {unit}_free(struct {unit} *t)
{{
    free(t->buf);
    memset(t, 0, sizeof *t);
}}
"""


def py_module(ent: str, fld: str, verb: str) -> str:
    E = _pascal(ent)
    return f'''"""{E} service: {verb} and lookups."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from app.db import Session

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class {E}:
    id: int
    {fld}: str
    created_at: datetime


def {verb}_{ent}(session: Session, {ent}_id: int) -> {E} | None:
    row = session.execute(
        "SELECT id, {fld}, created_at FROM {_plural(ent)} WHERE id = :id", {{"id": {ent}_id}}
    ).one_or_none()
    if row is None:
        log.info("{ent} %s not found", {ent}_id)
        return None
    return {E}(*row)
'''


def sql_migration(ent: str, fld: str) -> str:
    table = _plural(ent)
    return f"""-- {fld} on {table}
BEGIN;

ALTER TABLE {table} ADD COLUMN {fld} text;
UPDATE {table} SET {fld} = 'unknown' WHERE {fld} IS NULL;
ALTER TABLE {table} ALTER COLUMN {fld} SET NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS {table}_{fld}_idx ON {table} ({fld});

COMMIT;
"""


# --- per-ecosystem kits ------------------------------------------------------------------------


@dataclass(frozen=True)
class Kit:
    eco: str
    projects: tuple[str, ...]
    layout: Callable[[Random], list[tuple[str, str]]]  # (relative path, content)
    checks: tuple[tuple[str, str], ...]  # (command, success output)
    docs: tuple[tuple[str, str], ...]  # (url, text)
    requests: dict[str, tuple[str, ...]]


def _ts_layout(rng: Random) -> list[tuple[str, str]]:
    out = []
    for _ in range(4):
        ent, fld, verb = rng.choice(ENTITIES), rng.choice(FIELDS), rng.choice(VERBS)
        out.append((f"src/services/{ent}.ts", ts_module(ent, fld, verb)))
        out.append((f"src/services/__tests__/{ent}.test.ts", ts_test(ent, verb)))
    return out


def _rs_layout(rng: Random) -> list[tuple[str, str]]:
    return [
        (f"src/{ent}.rs", rs_module(ent, rng.choice(FIELDS), rng.choice(VERBS)))
        for ent in rng.sample(ENTITIES, 4)
    ]


def _go_layout(rng: Random) -> list[tuple[str, str]]:
    return [
        (f"internal/{ent}/store.go", go_module(ent, rng.choice(FIELDS), rng.choice(VERBS)))
        for ent in rng.sample(ENTITIES, 4)
    ]


def _c_layout(rng: Random) -> list[tuple[str, str]]:
    return [(f"src/{unit}.c", c_module(unit)) for unit in rng.sample(failures.C_UNITS, 4)]


def _py_layout(rng: Random) -> list[tuple[str, str]]:
    return [
        (f"app/{ent}/service.py", py_module(ent, rng.choice(FIELDS), rng.choice(VERBS)))
        for ent in rng.sample(ENTITIES, 4)
    ]


def _sql_layout(rng: Random) -> list[tuple[str, str]]:
    out = []
    for i, ent in enumerate(rng.sample(ENTITIES, 4)):
        fld = rng.choice(FIELDS)
        out.append(
            (f"db/migrations/{40 + i:04d}_{fld}_on_{_plural(ent)}.sql", sql_migration(ent, fld))
        )
    return out


def _jest_ok(rng: Random) -> str:
    n = rng.randint(40, 300)
    return (
        f"Test Suites: {rng.randint(8, 40)} passed, {rng.randint(8, 40)} total\n"
        f"Tests:       {n} passed, {n} total\nSnapshots:   0 total\nTime:        {rng.uniform(2, 30):.3f} s\n"
        "Ran all test suites.\n"
    )


DOCS_TS = (
    (
        "https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Intl/DateTimeFormat",
        "Intl.DateTimeFormat\n\nThe Intl.DateTimeFormat object formats dates and times according to a locale.\n\n"
        "Constructor\n  new Intl.DateTimeFormat(locales, options)\n\nOptions of note\n"
        '  timeZone: the IANA zone to format in, e.g. "Europe/Madrid"; the default is the runtime\'s zone.\n'
        '  dateStyle / timeStyle: "full", "long", "medium" or "short"; cannot be combined with\n'
        '  individual fields such as weekday or hour.\n  hourCycle: "h11", "h12", "h23" or "h24".\n\n'
        "Instance methods\n  format(date) returns a string.\n  formatToParts(date) returns the pieces as objects,\n"
        "  useful when only some of them are needed.\n  formatRange(start, end) collapses what both dates share.\n\n"
        "Creating a formatter is comparatively expensive; reuse one instance for many dates.\n",
    ),
    (
        "https://www.typescriptlang.org/tsconfig/#exactOptionalPropertyTypes",
        "exactOptionalPropertyTypes\n\nWith this flag on, TypeScript distinguishes a property that is absent from one\n"
        'that is present with the value undefined. An optional property declared as `theme?: "dark" | "light"`\n'
        'then does not accept `undefined` unless the type says so explicitly: `theme?: "dark" | "light" | undefined`.\n\n'
        "Default: false. Related: strictNullChecks (required for this flag to have an effect).\n",
    ),
)
DOCS_RS = (
    (
        "https://doc.rust-lang.org/std/sync/struct.OnceLock.html",
        "Struct std::sync::OnceLock\n\nA synchronization primitive which can nominally be written to only once.\n"
        "It is a thread-safe OnceCell and can be used in statics.\n\nMethods\n  get(&self) -> Option<&T>\n"
        "  set(&self, value: T) -> Result<(), T>  fails if already initialized\n"
        "  get_or_init(&self, f: F) -> &T  runs f at most once, even if called from several threads\n\n"
        "Stable since 1.70.0.\n",
    ),
    (
        "https://docs.rs/sqlx/latest/sqlx/macro.query_as.html",
        "Macro sqlx::query_as\n\nMake a SQL query, with the given arguments, that is mapped to a concrete type using\n"
        "FromRow. The query is checked against the database at compile time when DATABASE_URL is set or an\n"
        "offline query cache (.sqlx) is present; otherwise compilation fails with an error asking for one.\n\n"
        "Nullability: a column is inferred as Option<T> when the database reports it nullable; override\n"
        'with `AS "name!"` (force not null) or `AS "name?"` (force nullable).\n',
    ),
)
DOCS_GO = (
    (
        "https://pkg.go.dev/context#WithTimeout",
        "func WithTimeout(parent Context, timeout time.Duration) (Context, CancelFunc)\n\n"
        "WithTimeout returns WithDeadline(parent, time.Now().Add(timeout)).\n\n"
        "Canceling this context releases resources associated with it, so code should call cancel as soon\n"
        "as the operations running in this Context complete:\n\n"
        "\tfunc slowOperationWithTimeout(ctx context.Context) (Result, error) {\n"
        "\t\tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)\n"
        "\t\tdefer cancel()  // releases resources if slowOperation completes before timeout elapses\n"
        "\t\treturn slowOperation(ctx)\n\t}\n",
    ),
)
DOCS_C = (
    (
        "https://man7.org/linux/man-pages/man3/strtol.3.html",
        "STRTOL(3)                Linux Programmer's Manual               STRTOL(3)\n\nNAME\n"
        "       strtol, strtoll, strtoq - convert a string to a long integer\n\nRETURN VALUE\n"
        "       The strtol() function returns the result of the conversion, unless the value would\n"
        "       underflow or overflow. If an underflow occurs, strtol() returns LONG_MIN. If an overflow\n"
        "       occurs, strtol() returns LONG_MAX. In both cases, errno is set to ERANGE.\n\nNOTES\n"
        "       Since strtol() can legitimately return 0, LONG_MAX, or LONG_MIN on both success and\n"
        "       failure, the calling program should set errno to 0 before the call, and then determine\n"
        "       if an error occurred by checking whether errno has a nonzero value after the call.\n",
    ),
)
DOCS_PY = (
    (
        "https://docs.python.org/3/library/zoneinfo.html",
        "zoneinfo — IANA time zone support\n\nThe zoneinfo module provides a concrete time zone implementation\n"
        "to support the IANA time zone database. ZoneInfo(key) returns an object usable as tzinfo.\n\n"
        "Data sources: the system time zone data when available, else the first-party tzdata package.\n"
        "ZoneInfo objects are cached: calling ZoneInfo with the same key twice returns the same object.\n"
        "ZoneInfo.no_cache(key) bypasses the cache; ZoneInfo.clear_cache() empties it.\n",
    ),
)
DOCS_SQL = (
    (
        "https://www.postgresql.org/docs/16/sql-altertable.html",
        "ALTER TABLE\n\nADD COLUMN [ IF NOT EXISTS ]\n    This form adds a new column to the table. If IF NOT EXISTS is\n"
        "    specified and a column already exists with this name, no error is thrown.\n\nNotes\n"
        "    Adding a column with a volatile DEFAULT or changing the type of an existing column will\n"
        "    require the entire table and its indexes to be rewritten. Adding a column with a non-volatile\n"
        "    default does not require a rewrite: the default is stored in the catalog.\n\n"
        "    SET NOT NULL scans the whole table to verify no row holds a null, under an ACCESS EXCLUSIVE lock,\n"
        "    unless a valid CHECK constraint proves it.\n",
    ),
    (
        "https://www.postgresql.org/docs/16/sql-createindex.html",
        "CREATE INDEX\n\nCONCURRENTLY\n    When this option is used, PostgreSQL will build the index without taking\n"
        "    any locks that prevent concurrent inserts, updates, or deletes on the table. The build takes\n"
        "    longer and cannot run inside a transaction block.\n\n    If a problem arises while scanning the table,\n"
        "    the command fails but leaves behind an INVALID index that should be dropped and recreated.\n",
    ),
)

_REQ = {
    "typescript": {
        "en": (
            "In the {project} frontend, the {ent} list shows stale data after an edit. Can you fix the cache invalidation?",
            "Add a `{fld}` field to the {ent} form in {project}, with validation, and make sure the type checks pass.",
            "The {project} build started failing on CI after the dependency bump. Can you look?",
        ),
        "es": (
            "En {project}, la lista de {ent} muestra datos viejos tras editar. ¿Puedes arreglar la invalidación de la caché?",
            "Añade el campo `{fld}` al formulario de {ent} en {project}, con validación.",
        ),
        "zh": (
            "{project} 前端里，{ent} 列表编辑后显示的还是旧数据，帮忙修一下缓存失效。",
            "给 {project} 的 {ent} 表单加一个 `{fld}` 字段，带校验，类型检查要通过。",
        ),
    },
    "rust": {
        "en": (
            "In {project}, add `{fld}` to the {ent} model and the API that returns it.",
            "The {project} service panics under load when a {ent} is deleted mid-request. Please investigate.",
        ),
        "es": ("En {project}, añade `{fld}` al modelo {ent} y a la API que lo devuelve.",),
        "zh": ("在 {project} 里给 {ent} 模型加上 `{fld}`，返回它的 API 也要改。",),
    },
    "go": {
        "en": (
            "{project}: the {ent} store should return ErrNotFound instead of a wrapped sql error. Fix it and the callers.",
            "Add a timeout to every outgoing call in {project}'s {ent} client.",
        ),
        "es": (
            "{project}: el store de {ent} debería devolver ErrNotFound en vez del error de SQL envuelto.",
        ),
        "zh": (
            "{project}：{ent} 的 store 应该返回 ErrNotFound，而不是包一层的 sql 错误。调用方也一起改。",
        ),
    },
    "c": {
        "en": (
            "The {project} daemon leaks memory when a connection closes early. Can you track it down?",
            "Port {project}'s ring buffer to the new allocator API.",
        ),
        "es": (
            "El demonio de {project} pierde memoria cuando una conexión se cierra antes de tiempo. ¿Lo buscas?",
        ),
        "zh": ("{project} 守护进程在连接提前关闭时会内存泄漏，帮忙查一下。",),
    },
    "python": {
        "en": (
            "In {project}, {verb} of {ent} records is slow and sometimes wrong for old rows. Please fix and add tests.",
            "Type-check {project} with mypy --strict and fix what it finds in the {ent} package.",
        ),
        "es": (
            "En {project}, el {verb} de {ent} es lento y a veces falla con filas antiguas. Arréglalo y añade tests.",
        ),
        "zh": ("{project} 里 {ent} 记录的 {verb} 很慢，旧数据有时还会出错，修一下并补测试。",),
    },
    "sql": {
        "en": (
            "We need `{fld}` on {table} in {project}, without locking the table in production. Write the migration.",
            "Clean up the {project} migrations: two of them fail on a fresh database.",
        ),
        "es": (
            "Necesitamos `{fld}` en {table} ({project}) sin bloquear la tabla en producción. Escribe la migración.",
        ),
        "zh": ("{project} 需要在 {table} 上加 `{fld}`，生产环境不能锁表。写一下迁移。",),
    },
}

KITS: dict[str, Kit] = {
    "typescript": Kit(
        "typescript",
        ("storefront-web", "ops-console", "partner-portal", "checkout-sdk"),
        _ts_layout,
        (
            ("npx tsc --noEmit", ""),
            ("npx vitest run", "JEST"),
            ("npm run lint", "\n> lint\n> eslint . --max-warnings=0\n\n"),
            (
                "npm run build",
                "\n> build\n> vite build\n\nvite v5.4.11 building for production...\n✓ 812 modules transformed.\ndist/index.html                 0.62 kB\ndist/assets/index-4f9c2a1b.js  412.77 kB │ gzip: 131.02 kB\n✓ built in 9.84s\n",
            ),
        ),
        DOCS_TS,
        _REQ["typescript"],
    ),
    "rust": Kit(
        "rust",
        ("ledger-svc", "relay", "tallyd", "ingest-rs"),
        _rs_layout,
        (
            (
                "cargo build",
                "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 6.31s\n",
            ),
            ("cargo test", "CARGO"),
            (
                "cargo clippy -- -D warnings",
                "    Checking ledger v0.4.0 (/workspace)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 3.02s\n",
            ),
            ("cargo fmt --check", ""),
        ),
        DOCS_RS,
        _REQ["rust"],
    ),
    "go": Kit(
        "go",
        ("warehouse", "pager", "billing-api", "relay-gw"),
        _go_layout,
        (
            ("go build ./...", ""),
            ("go test ./...", "GO"),
            ("go vet ./...", ""),
            ("gofmt -l .", ""),
        ),
        DOCS_GO,
        _REQ["go"],
    ),
    "c": Kit(
        "c",
        ("ringd", "tinyhttpd", "logshipper", "edge-agent"),
        _c_layout,
        (
            ("make -j4", "MAKE"),
            ("make check", "[==========] 58 tests ran.\n[  PASSED  ] 58 tests.\n"),
            (
                "valgrind --leak-check=full --error-exitcode=1 ./bin/server --selftest",
                "==4121== HEAP SUMMARY:\n==4121==     in use at exit: 0 bytes in 0 blocks\n==4121==   total heap usage: 1,204 allocs, 1,204 frees, 311,552 bytes allocated\n==4121== \n==4121== All heap blocks were freed -- no leaks are possible\n",
            ),
        ),
        DOCS_C,
        _REQ["c"],
    ),
    "python": Kit(
        "python",
        ("billing-core", "reports", "notify-svc", "catalog-api"),
        _py_layout,
        (
            ("python -m pytest -q", "PYTEST"),
            ("mypy app", "Success: no issues found in 64 source files\n"),
            ("ruff check .", "All checks passed!\n"),
        ),
        DOCS_PY,
        _REQ["python"],
    ),
    "sql": Kit(
        "sql",
        ("billing-core", "analytics-db", "crm-backend"),
        _sql_layout,
        (
            ('psql "$DATABASE_URL" -c "\\d+ orders"', "TABLE"),
            (
                "make db-migrate",
                "applying 0040..0043\nBEGIN\nALTER TABLE\nUPDATE 18234\nALTER TABLE\nCOMMIT\nCREATE INDEX\n",
            ),
            (
                "make db-reset && make db-migrate",
                "dropped database app_dev\ncreated database app_dev\napplying 0001..0043\nok\n",
            ),
        ),
        DOCS_SQL,
        _REQ["sql"],
    ),
}


def _check_output(marker: str, rng: Random) -> str:
    if marker == "JEST":
        return _jest_ok(rng)
    if marker == "CARGO":
        n = rng.randint(20, 140)
        lines = [
            f"test {rng.choice(ENTITIES)}::tests::{rng.choice(VERBS)}_{rng.choice(FIELDS)} ... ok"
            for _ in range(min(n, 25))
        ]
        return (
            f"running {n} tests\n"
            + "\n".join(lines)
            + f"\n\ntest result: ok. {n} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {rng.uniform(0.01, 3):.2f}s\n"
        )
    if marker == "GO":
        mod = f"github.com/acme/{rng.choice(('warehouse', 'pager', 'relay'))}"
        return "".join(
            f"ok  \t{mod}/{p}\t{rng.uniform(0.01, 2):.3f}s\n"
            for p in rng.sample(failures.GO_PKGS, 8)
        )
    if marker == "MAKE":
        units = rng.sample(failures.C_UNITS, 8)
        return (
            "".join(
                f"cc -O2 -g -Wall -Wextra -Iinclude -c src/{u}.c -o build/{u}.o\n" for u in units
            )
            + "cc -o bin/server build/*.o -lpthread\n"
        )
    if marker == "PYTEST":
        n = rng.randint(40, 400)
        return "." * min(n, 80) + f"  [100%]\n{n} passed in {rng.uniform(0.5, 30):.2f}s\n"
    if marker == "TABLE":
        return (
            '                                  Table "public.orders"\n'
            "   Column    |           Type           | Collation | Nullable |      Default\n"
            "-------------+--------------------------+-----------+----------+--------------------\n"
            " id          | bigint                   |           | not null | generated by default as identity\n"
            " tenant_id   | bigint                   |           | not null |\n"
            " total_cents | integer                  |           | not null |\n"
            " status      | text                     |           | not null | 'open'::text\n"
            " created_at  | timestamp with time zone |           | not null | now()\n"
            'Indexes:\n    "orders_pkey" PRIMARY KEY, btree (id)\n    "orders_tenant_id_idx" btree (tenant_id)\n'
        )
    return marker


THOUGHTS = {
    "en": (
        "Let me look at the layout first.",
        "Now the tests.",
        "Checking where this is used.",
        "That's the culprit, I think. Let me change it.",
        "Build again to be sure.",
        "Quick look at the docs for this API before changing it.",
        "OK, that part works. Next piece.",
        "",
        "",
        "",
    ),
    "es": (
        "Primero miro la estructura.",
        "Ahora los tests.",
        "Busco dónde se usa.",
        "Creo que el problema está aquí; lo cambio.",
        "Compilo otra vez para asegurarme.",
        "Miro la documentación de esta API antes de tocarla.",
        "",
        "",
        "",
    ),
    "zh": (
        "先看一下目录结构。",
        "接下来看测试。",
        "查一下哪里用到了它。",
        "问题应该在这里，改一下。",
        "再编译一次确认。",
        "改之前先看看这个 API 的文档。",
        "",
        "",
        "",
    ),
}

CLOSE = {
    "en": (
        "Done — the change is in and the checks pass.",
        "Finished. Build and tests are green; the diff is small and confined to the {ent} code.",
        "That's it. Let me know if you want me to open the PR.",
    ),
    "es": (
        "Listo: el cambio está hecho y las comprobaciones pasan.",
        "Terminado. Compila y los tests pasan; el diff se limita al código de {ent}.",
    ),
    "zh": (
        "好了，改动已完成，检查都通过了。",
        "完成。编译和测试都通过，改动只涉及 {ent} 相关代码。",
    ),
}


def _say_thought(rng: Random, lang: str) -> str | None:
    text = rng.choice(THOUGHTS[lang])
    return text or None


def synthetic_task(eco: str, rng: Random, lang: str, *, n_steps: int, file_tools: bool) -> Task:
    """One task in ``eco``: a request, about ``n_steps`` steps, a closing line."""
    kit = KITS[eco]
    project = rng.choice(kit.projects)
    root = f"/workspace/{project}"
    files = kit.layout(rng)
    ent, fld, verb = rng.choice(ENTITIES), rng.choice(FIELDS), rng.choice(VERBS)
    request = rng.choice(kit.requests[lang]).format(
        project=project, ent=ent, fld=fld, verb=verb, table=_plural(ent)
    )
    steps: list[list[Turn]] = []
    tree = "\n".join(sorted({p.split("/")[0] for p, _ in files} | {"README.md", ".gitignore"}))
    steps.append(
        [Act((Shell(f"cd {root} && ls", tree + "\n", 0, cwd=root),), _say_thought(rng, lang))]
    )
    if file_tools and rng.random() < 0.6:
        items = (
            (f"Reproduce the {ent} issue", "in_progress"),
            (f"Change the {ent} code", "pending"),
            ("Run type checks and tests", "pending"),
        )
        steps.append([Act((Plan(items),))])
    while len(steps) < n_steps:
        steps.append(_step(kit, rng, lang, files, root, file_tools=file_tools))
    close = rng.choice(CLOSE[lang]).format(ent=ent)
    return Task(eco, request, steps, close, root, [p for p, _ in files])


_STATEMENTS = {
    "ts": '{indent}logger.debug({{ {word} }}, "{phrase}");',
    "tsx": '{indent}logger.debug({{ {word} }}, "{phrase}");',
    "js": '{indent}console.debug("{phrase}", {word});',
    "rs": '{indent}tracing::debug!({word} = ?{word}, "{phrase}");',
    "go": '{indent}slog.Debug("{phrase}", "{word}", {word})',
    "c": "{indent}assert({word} != NULL);",
    "h": "{indent}/* {phrase} */",
    "py": '{indent}log.debug("{phrase}: %s", {word})',
}
_PHRASES = (
    "entering",
    "cache miss",
    "retrying",
    "skipping stale row",
    "fallback path",
    "slow path",
)


def _last_param(signature: str, ext: str) -> str:
    if ext in ("c", "h"):
        return "t"
    inside = signature[signature.rfind("(") + 1 : signature.rfind(")")] if "(" in signature else ""
    names = [
        p.strip().split(":")[0].split(" ")[0].strip("&*") for p in inside.split(",") if p.strip()
    ]
    names = [n for n in names if n.isidentifier() and n not in ("self", "cls")]
    return names[-1] if names else ""


def code_edit(path: str, content: str, rng: Random) -> tuple[str, str]:
    """(old, new): a small, plausible change to ``content`` (old occurs in it exactly once)."""
    ext = path.rsplit(".", 1)[-1]
    lines = content.splitlines()
    unique = [ln for ln in lines if ln.strip() and content.count(ln) == 1]
    if ext == "sql":
        target = next((ln for ln in unique if ln.startswith("ALTER TABLE")), unique[0])
        return target, "SET lock_timeout = '5s';\n" + target
    openers = [
        i
        for i, ln in enumerate(lines[:-1])
        if ln in unique
        and any(k in ln for k in ("fn ", "function ", "func ", "def ", "_init(", "_len(", "_free("))
        and (ln.rstrip().endswith(("{", ":", ")")))
    ]
    if openers and ext in _STATEMENTS and rng.random() < 0.75:
        i = rng.choice(openers)
        if not lines[i].rstrip().endswith(("{", ":")):  # C: the brace is on the next line
            i += 1
        body = lines[i + 1] if i + 1 < len(lines) else ""
        indent = body[: len(body) - len(body.lstrip())] or "    "
        word = _last_param(lines[i if ext != "c" else i - 1], ext)
        phrase = rng.choice(_PHRASES)
        stmt = (
            _STATEMENTS[ext].format(indent=indent, word=word, phrase=phrase)
            if word
            else f"{indent}// {phrase}"
        )
        return lines[i] if content.count(lines[i]) == 1 else lines[i - 1] + "\n" + lines[i], (
            lines[i] if content.count(lines[i]) == 1 else lines[i - 1] + "\n" + lines[i]
        ) + "\n" + stmt
    numbered = [ln for ln in unique if any(c.isdigit() for c in ln)]
    if numbered:
        line = rng.choice(numbered)
        digit = next(c for c in line if c.isdigit())
        return line, line.replace(digit, str((int(digit) + rng.randint(1, 8)) % 10), 1)
    line = rng.choice(unique)
    mark = "#" if ext in ("py", "yaml", "yml", "toml") else "//"
    return line, f"{line}  {mark} TODO: {rng.choice(_PHRASES)}"


def _step(
    kit: Kit, rng: Random, lang: str, files: list[tuple[str, str]], root: str, *, file_tools: bool
) -> list[Turn]:
    path, content = rng.choice(files)
    full = f"{root}/{path}"
    roll = rng.random()
    thought = _say_thought(rng, lang)
    if roll < 0.25:
        event: Event = (
            Read(full, content) if file_tools else Shell(f"cat {path}", content, 0, cwd=root)
        )
        return [Act((event,), thought)]
    if roll < 0.37:
        word = rng.choice(
            [w for w in content.replace("(", " ").split() if w.isidentifier() and len(w) > 4]
            or ["TODO"]
        )
        hits = tuple(
            f"{p}:{i + 1}:{line.strip()}"
            for p, c in files
            for i, line in enumerate(c.splitlines())
            if word in line
        )[:30]
        if file_tools:
            return [Act((Search(word, root, hits),), thought)]
        return [
            Act(
                (
                    Shell(
                        f"grep -rn {word} .",
                        "".join(h + "\n" for h in hits),
                        0 if hits else 1,
                        cwd=root,
                    ),
                ),
                thought,
            )
        ]
    if roll < 0.45 and file_tools:
        ext = path.rsplit(".", 1)[-1]
        return [
            Act((FindFiles(f"**/*.{ext}", tuple(p for p, _ in files if p.endswith(ext))),), thought)
        ]
    if roll < 0.62:
        old, new = code_edit(path, content, rng)
        event = (
            Edit(full, old, new)
            if file_tools
            else Shell(f"sed -i 's|{_sed_escape(old)}|{_sed_escape(new)}|' {path}", "", 0, cwd=root)
        )
        return [Act((event,), thought)]
    if roll < 0.68:
        url, text = rng.choice(kit.docs)
        event = (
            Fetch(url, text)
            if file_tools
            else Shell(f"curl -sL {url} | html2text | head -60", text, 0, cwd=root)
        )
        return [Act((event,), thought)]
    if roll < 0.76:
        failure = failures.failure_for(kit.eco, rng)
        out = failure.outputs["short"]
        first = Act((Shell(failure.command, out, failure.exit_code, cwd=root),), thought)
        fix_path, fix_content = rng.choice(files)
        old, new = code_edit(fix_path, fix_content, rng)
        fix: Event = (
            Edit(f"{root}/{fix_path}", old, new)
            if file_tools
            else Shell(
                f"sed -i 's|{_sed_escape(old)}|{_sed_escape(new)}|' {fix_path}", "", 0, cwd=root
            )
        )
        if failure.fix_command:
            fix = Shell(failure.fix_command, "", 0, cwd=root)
        again = Act((Shell(failure.command, failure.success_output, 0, cwd=root),))
        return [first, Act((fix,)), again]
    if roll < 0.79:
        base, ext = path.rsplit(".", 1)
        new_path = f"{base}_regression.{ext}" if not path.endswith(".sql") else f"{base}_down.sql"
        event = (
            Write(f"{root}/{new_path}", content)
            if file_tools
            else Shell(f"cat > {new_path} << 'EOF'\n{content.rstrip()}\nEOF", "", 0, cwd=root)
        )
        return [Act((event,), thought)]
    if roll < 0.84:
        stat = "".join(
            f" {p} | {rng.randint(1, 40)} {'+' * rng.randint(1, 9)}{'-' * rng.randint(0, 5)}\n"
            for p, _ in rng.sample(files, 2)
        )
        return [Act((Shell("git diff --stat", stat + " 2 files changed\n", 0, cwd=root),), thought)]
    command, marker = rng.choice(kit.checks)
    return [Act((Shell(command, _check_output(marker, rng), 0, cwd=root),), thought)]


def _sed_escape(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("|", "\\|").replace("&", "\\&")
    return escaped.replace("'", "'\\''").replace("\n", "\\n")
