"""Held-out filler: synthetic tasks in the toolchains of ``heldout_failures``.

Java and Kotlin services, .NET, Rails, Laravel, a Swift package, Phoenix, infrastructure
(Terraform, Helm, Ansible, shell), a web front end, Python data jobs, Go, Rust and C++. A task is
a request, steps and a closing message like the dev corpus's, but its projects, files, commands
and outputs are this module's own, and so is the mix of steps (environment checks, git history,
``rg``/``fd`` and ``sed -n`` in shell-only agents, a plan that gets updated...).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from random import Random

from bench.retention import heldout_failures as hf
from bench.retention import heldout_texts as ht
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
from bench.retention.heldout_failures import ACTIONS, ATTRS, NOUNS, _camel, _p, _pascal
from bench.retention.synth import Task

ECOSYSTEMS = (
    "jvm", "dotnet", "ruby", "php", "swift", "elixir", "infra", "web", "python", "go", "rust",
    "cpp",
)  # fmt: skip
WEIGHTS = (3, 2, 2, 2, 1, 1, 3, 3, 2, 2, 1, 2)
STACK = {
    "jvm": "Spring Boot, Gradle",
    "dotnet": ".NET 8",
    "ruby": "Rails 7.1",
    "php": "Laravel 11",
    "swift": "SwiftPM",
    "elixir": "Phoenix",
    "infra": "Terraform + Helm",
    "web": "React + Vite",
    "python": "Python 3.12",
    "go": "Go 1.22",
    "rust": "Rust",
    "cpp": "C++20 / CMake",
}


# --- file contents --------------------------------------------------------------------------------


def java_file(org: str, noun: str, attr: str, action: str) -> str:
    N, a = _pascal(noun), _camel(attr)
    return f"""package org.{org}.{noun}s;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

public final class {N}Service {{
    private static final int PAGE_LIMIT = 250;

    private final {N}Repository repository;
    private final Clock clock;

    public {N}Service({N}Repository repository, Clock clock) {{
        this.repository = repository;
        this.clock = clock;
    }}

    public Optional<{N}> {_camel(action)}(long id, String {a}) {{
        var current = repository.findById(id);
        if (current.isEmpty() || {a} == null) {{
            return Optional.empty();
        }}
        var updated = current.get().with{_pascal(attr)}({a}).touchedAt(Instant.now(clock));
        return Optional.of(repository.save(updated));
    }}

    public List<{N}> pending(int limit) {{
        return repository.findPending(Math.min(limit, PAGE_LIMIT));
    }}
}}
"""


def kotlin_file(org: str, noun: str, attr: str, action: str) -> str:
    N, a = _pascal(noun), _camel(attr)
    return f"""package org.{org}.{noun}s

import java.time.Duration

data class {N}(val id: Long, val {a}: String?, val retries: Int = 0)

class {N}Rules(private val grace: Duration = Duration.ofMinutes(15)) {{
    fun {_camel(action)}(item: {N}): {N}? {{
        val value = item.{a} ?: return null
        if (item.retries > 3) return null
        return item.copy({a} = value.trim(), retries = item.retries + 1)
    }}

    fun isLate(waited: Duration): Boolean = waited > grace
}}
"""


def csharp_file(org: str, noun: str, attr: str, action: str) -> str:
    Org, N, A = _pascal(org), _pascal(noun), _pascal(attr)
    return f"""namespace {Org}.{N}s;

public sealed record {N}(Guid Id, string? {A}, DateTimeOffset UpdatedAt);

public sealed class {N}Service(I{N}Store store, TimeProvider time)
{{
    private const int MaxBatch = 200;

    public async Task<{N}?> {_pascal(action)}Async(Guid id, string? {_camel(attr)}, CancellationToken ct)
    {{
        var current = await store.FindAsync(id, ct);
        if (current is null || string.IsNullOrWhiteSpace({_camel(attr)}))
        {{
            return null;
        }}
        var next = current with {{ {A} = {_camel(attr)}, UpdatedAt = time.GetUtcNow() }};
        await store.SaveAsync(next, ct);
        return next;
    }}

    public Task<IReadOnlyList<{N}>> PendingAsync(CancellationToken ct) => store.PendingAsync(MaxBatch, ct);
}}
"""


def ruby_file(org: str, noun: str, attr: str, action: str) -> str:
    N = _pascal(noun)
    return f"""class {N} < ApplicationRecord
  GRACE_DAYS = 14

  belongs_to :account
  has_many :{noun}_events, dependent: :destroy

  validates :{attr}, presence: true
  scope :pending, -> {{ where(state: "pending").order(:created_at) }}

  def {action}!(by:)
    transaction do
      update!(state: "{action}ed", {action}ed_by: by, {action}ed_at: Time.current)
      {noun}_events.create!(kind: "{action}", actor: by)
    end
  end

  def overdue?(today = Date.current)
    created_at.to_date + GRACE_DAYS < today
  end
end
"""


def php_file(org: str, noun: str, attr: str, action: str) -> str:
    N, a = _pascal(noun), _camel(attr)
    return f"""<?php

declare(strict_types=1);

namespace App\\{N}s;

use App\\Models\\{N};
use Illuminate\\Support\\Carbon;

final class {N}{_pascal(action)}er
{{
    private const BATCH = 500;

    public function __construct(private readonly {N}Repository $repository) {{}}

    public function handle(int $id, ?string ${a}): ?{N}
    {{
        $model = $this->repository->find($id);
        if ($model === null || ${a} === null) {{
            return null;
        }}
        $model->{attr} = ${a};
        $model->{action}ed_at = Carbon::now();
        $this->repository->save($model);

        return $model;
    }}
}}
"""


def swift_file(org: str, noun: str, attr: str, action: str) -> str:
    N, a = _pascal(noun), _camel(attr)
    return f"""import Foundation

public struct {N}: Codable, Identifiable, Sendable {{
    public let id: UUID
    public var {a}: Double
    public var updatedAt: Date
}}

public actor {N}Store {{
    private var items: [UUID: {N}] = [:]
    private let maxItems = 500

    public func {_camel(action)}(_ id: UUID, {a}: Double) throws -> {N} {{
        guard var item = items[id] else {{ throw StoreError.notFound(id) }}
        item.{a} = min({a}, 14.5)
        item.updatedAt = .now
        items[id] = item
        return item
    }}
}}
"""


def elixir_file(org: str, noun: str, attr: str, action: str) -> str:
    Org, N = _pascal(org), _pascal(noun)
    return f"""defmodule {Org}.{N}s do
  @moduledoc "Context for {noun}s."

  import Ecto.Query
  alias {Org}.Repo
  alias {Org}.{N}s.{N}

  @max_batch 200

  def {action}(%{N}{{}} = {noun}, attrs) do
    {noun}
    |> {N}.changeset(attrs)
    |> Ecto.Changeset.put_change(:{attr}, attrs["{attr}"])
    |> Repo.update()
  end

  def pending(limit \\\\ @max_batch) do
    from(x in {N}, where: x.state == "pending", limit: ^min(limit, @max_batch))
    |> Repo.all()
  end
end
"""


def terraform_file(org: str, noun: str, attr: str, action: str) -> str:
    return f"""variable "{noun}_instance_count" {{
  type    = number
  default = 2
}}

resource "aws_ecs_service" "{noun}" {{
  name            = "{org}-{noun}"
  cluster         = var.cluster_arn
  task_definition = aws_ecs_task_definition.{noun}.arn
  desired_count   = var.{noun}_instance_count

  deployment_circuit_breaker {{
    enable   = true
    rollback = true
  }}

  tags = {{
    owner = "{org}-platform"
    cost  = "{noun}"
  }}
}}
"""


def helm_values(org: str, noun: str, attr: str, action: str) -> str:
    return f"""replicaCount: 2
image:
  repository: ghcr.io/{org}/{noun}
  tag: "1.14.2"
resources:
  requests:
    cpu: 250m
    memory: 256Mi
  limits:
    memory: 512Mi
env:
  {attr.upper()}_DEFAULT: "7"
  LOG_FORMAT: json
"""


def shell_file(org: str, noun: str, attr: str, action: str) -> str:
    return f"""#!/usr/bin/env bash
set -euo pipefail

TARGET="${{1:?usage: {action}-{noun}.sh <env>}}"
KEEP_DAYS=14

echo "==> {action} {noun}s on $TARGET"
aws s3 sync "s3://{org}-{noun}-exports/$TARGET/" "./out/$TARGET/" --only-show-errors
find "./out/$TARGET" -type f -mtime +"$KEEP_DAYS" -delete
"""


def tsx_file(org: str, noun: str, attr: str, action: str) -> str:
    N, a = _pascal(noun), _camel(attr)
    return f"""import {{ useQuery }} from "@tanstack/react-query";
import {{ fetch{N}s }} from "../api/{noun}s";

type Props = {{ accountId: string; pageSize?: number }};

export function {N}List({{ accountId, pageSize = 25 }}: Props) {{
  const {{ data, isPending, error }} = useQuery({{
    queryKey: ["{noun}s", accountId, pageSize],
    queryFn: () => fetch{N}s(accountId, {{ limit: pageSize }}),
  }});
  if (isPending) return <p aria-busy="true">Loading…</p>;
  if (error) return <p role="alert">{{error.message}}</p>;
  return (
    <ul>
      {{data.items.map((item) => (
        <li key={{item.id}}>{{item.{a} ?? "-"}}</li>
      ))}}
    </ul>
  );
}}
"""


def python_file(org: str, noun: str, attr: str, action: str) -> str:
    return f'''"""{_pascal(noun)} {action} job."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

log = logging.getLogger(__name__)
BATCH_SIZE = 500


@dataclass(frozen=True)
class {_pascal(noun)}Row:
    id: int
    {attr}: str | None
    seen_at: datetime


def {action}_{noun}s(rows: list[{_pascal(noun)}Row], now: datetime) -> list[int]:
    cutoff = now - timedelta(days=30)
    done = [r.id for r in rows if r.{attr} and r.seen_at >= cutoff]
    log.info("{action} %d of %d {noun}s", len(done), len(rows))
    return done[:BATCH_SIZE]
'''


def go_file(org: str, noun: str, attr: str, action: str) -> str:
    N = _pascal(noun)
    return f"""package {noun}s

import (
\t"context"
\t"errors"
\t"time"
)

const maxBatch = 200

var ErrNotFound = errors.New("{noun} not found")

type {N} struct {{
\tID        int64
\t{_pascal(attr)} string
\tUpdatedAt time.Time
}}

func (s *Service) {_pascal(action)}(ctx context.Context, id int64, v string) (*{N}, error) {{
\tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
\tdefer cancel()
\tcur, err := s.store.Get(ctx, id)
\tif err != nil {{
\t\treturn nil, err
\t}}
\tcur.{_pascal(attr)} = v
\treturn cur, s.store.Put(ctx, cur)
}}
"""


def rust_file(org: str, noun: str, attr: str, action: str) -> str:
    N = _pascal(noun)
    return f"""use std::collections::BTreeMap;

use crate::error::SolveError;

const MAX_WEEKS: usize = 52;

#[derive(Debug, Clone, PartialEq)]
pub struct {N} {{
    pub id: u32,
    pub {attr}: f64,
}}

pub fn {action}(items: &[{N}], weeks: usize) -> Result<BTreeMap<u32, f64>, SolveError> {{
    if weeks > MAX_WEEKS {{
        return Err(SolveError::Horizon(weeks));
    }}
    Ok(items.iter().map(|x| (x.id, x.{attr} * weeks as f64)).collect())
}}
"""


def cpp_file(org: str, noun: str, attr: str, action: str) -> str:
    N, a = _pascal(noun), _camel(attr)
    return f"""#include "{org}/{noun}/{noun}.hpp"

#include <algorithm>
#include <stdexcept>

namespace {org} {{

constexpr double kMaxRate = 12.5;

double {N}Controller::{_camel(action)}(double {a}) const {{
    if ({a} < 0.0) {{
        throw std::invalid_argument("{a} must be positive");
    }}
    const double limited = std::min({a}, kMaxRate);
    return limited * state_.gain;
}}

}}  // namespace {org}
"""


Writer = Callable[[str, str, str, str], str]


@dataclass(frozen=True)
class Kit:
    eco: str
    projects: tuple[str, ...]
    files: tuple[tuple[str, Writer], ...]  # path template ({org}, {noun}, {N}, {action}), writer
    checks: tuple[tuple[str, Callable[[Random], str]], ...]  # command, its success output
    docs: tuple[tuple[str, str], ...]  # url, text
    probes: tuple[tuple[str, str], ...]  # environment checks: command, output


def _n(rng: Random, lo: int, hi: int) -> int:
    return rng.randint(lo, hi)


KITS: dict[str, Kit] = {
    "jvm": Kit(
        "jvm",
        ("harborline-berths", "wardbook-dosing", "tillage-yield"),
        (
            ("src/main/java/org/{org}/{noun}s/{N}Service.java", java_file),
            ("src/main/kotlin/org/{org}/{noun}s/{N}Rules.kt", kotlin_file),
        ),
        (
            (
                "./gradlew test --console=plain",
                lambda r: (
                    f"BUILD SUCCESSFUL in {_n(r, 12, 90)}s\n{_n(r, 10, 40)} actionable tasks: {_n(r, 2, 9)} executed, {_n(r, 5, 30)} up-to-date\n"
                ),
            ),
            (
                "./gradlew spotlessCheck --console=plain",
                lambda r: (
                    f"> Task :spotlessJavaCheck\n> Task :spotlessCheck\n\nBUILD SUCCESSFUL in {_n(r, 3, 20)}s\n"
                ),
            ),
            (
                "./mvnw -B -q verify",
                lambda r: (
                    f"[INFO] Tests run: {_n(r, 80, 400)}, Failures: 0, Errors: 0, Skipped: {_n(r, 0, 3)}\n[INFO] BUILD SUCCESS\n"
                ),
            ),
        ),
        (
            (
                "https://docs.gradle.org/current/userguide/java_testing.html",
                "Testing in Java & JVM projects\n\nThe test task runs tests on a separate JVM. Filter with --tests, which accepts a fully qualified class or method name and wildcards. Tests that are up to date are skipped; use --rerun to force them.\n",
            ),
            (
                "https://docs.spring.io/spring-boot/reference/features/testing.html",
                "Testing\n\n@SpringBootTest starts the whole application context. Slice annotations such as @DataJpaTest start only the JPA part and use an embedded database unless told otherwise with @AutoConfigureTestDatabase(replace = NONE).\n",
            ),
        ),
        (
            ("java -version", 'openjdk version "21.0.3" 2024-04-16 LTS\n'),
            (
                "./gradlew --version | head -5",
                "\n------------------------------------------------------------\nGradle 8.8\n------------------------------------------------------------\n",
            ),
        ),
    ),
    "dotnet": Kit(
        "dotnet",
        ("Wardbook", "Lockerbay.Api", "Meterly.Billing"),
        (
            ("src/{O}.Api/{N}s/{N}Service.cs", csharp_file),
            ("src/{O}.Domain/{N}s/{N}Rules.cs", csharp_file),
        ),
        (
            (
                "dotnet test --nologo",
                lambda r: (
                    f"Passed!  - Failed:     0, Passed:   {_n(r, 80, 500)}, Skipped:     0, Total:   {_n(r, 80, 500)}, Duration: {_n(r, 2, 30)} s\n"
                ),
            ),
            (
                "dotnet build -c Release --nologo",
                lambda r: (
                    f"Build succeeded.\n    0 Warning(s)\n    0 Error(s)\n\nTime Elapsed 00:00:{_n(r, 10, 59)}.{_n(r, 10, 99)}\n"
                ),
            ),
            ("dotnet format --verify-no-changes", lambda r: ""),
        ),
        (
            (
                "https://learn.microsoft.com/en-us/dotnet/core/testing/selective-unit-tests",
                "Run selected unit tests\n\nWith the --filter option you select tests by FullyQualifiedName, Name, Category or Priority. Operators: = (exact), != , ~ (contains). Combine conditions with | and &.\n",
            ),
        ),
        (("dotnet --list-sdks", "8.0.301 [/usr/share/dotnet/sdk]\n"),),
    ),
    "ruby": Kit(
        "ruby",
        ("lockerbay", "kilnworks-shop", "pledgebox"),
        (("app/models/{noun}.rb", ruby_file), ("app/services/{noun}s/{action}.rb", ruby_file)),
        (
            (
                "bundle exec rspec",
                lambda r: (
                    f"Finished in {_n(r, 5, 90)}.{_n(r, 10, 99)} seconds (files took {_n(r, 1, 5)}.{_n(r, 10, 99)} seconds to load)\n{_n(r, 200, 900)} examples, 0 failures\n"
                ),
            ),
            (
                "bundle exec rubocop --parallel",
                lambda r: (
                    f"Inspecting {_n(r, 100, 600)} files\n\n{_n(r, 100, 600)} files inspected, no offenses detected\n"
                ),
            ),
        ),
        (
            (
                "https://guides.rubyonrails.org/active_record_migrations.html",
                "Active Record Migrations\n\nadd_index with algorithm: :concurrently must run outside a transaction: call disable_ddl_transaction! in the migration class. Columns referenced by an index must exist when the migration runs.\n",
            ),
        ),
        (("ruby -v", "ruby 3.3.1 (2024-04-23 revision c56cd86388) [x86_64-linux]\n"),),
    ),
    "php": Kit(
        "php",
        ("meterly-portal", "rostra-web", "pledgebox-admin"),
        (("app/{N}s/{N}{A}er.php", php_file), ("app/Services/{N}{A}er.php", php_file)),
        (
            (
                "vendor/bin/phpunit",
                lambda r: f"OK ({_n(r, 100, 700)} tests, {_n(r, 300, 1500)} assertions)\n",
            ),
            ("vendor/bin/phpstan analyse --memory-limit=1G", lambda r: " [OK] No errors\n"),
        ),
        (
            (
                "https://laravel.com/docs/11.x/artisan",
                "Artisan Console\n\nCommands live in app/Console/Commands. The handle method receives its dependencies from the service container. Options declared as {--month=} are read with $this->option('month').\n",
            ),
        ),
        (("php -v | head -1", "PHP 8.3.7 (cli) (built: May 10 2024 08:14:22) (NTS)\n"),),
    ),
    "swift": Kit(
        "swift",
        ("HarborPilot", "WardbookMobile"),
        (
            ("Sources/{N}Kit/{N}Store.swift", swift_file),
            ("Sources/{N}Kit/{N}+Formatting.swift", swift_file),
        ),
        (
            (
                "swift test --parallel",
                lambda r: (
                    f"Test Suite 'All tests' passed.\n\t Executed {_n(r, 40, 300)} tests, with 0 failures (0 unexpected) in {_n(r, 1, 20)}.{_n(r, 100, 999)} seconds\n"
                ),
            ),
        ),
        (
            (
                "https://www.swift.org/documentation/package-manager/",
                "Swift Package Manager\n\nswift build compiles a package; swift test builds and runs its test targets. --filter selects tests by regular expression over the test identifier.\n",
            ),
        ),
        (
            (
                "swift --version",
                "Swift version 5.10 (swift-5.10-RELEASE)\nTarget: x86_64-unknown-linux-gnu\n",
            ),
        ),
    ),
    "elixir": Kit(
        "elixir",
        ("lockerbay_core", "rostra_live"),
        (("lib/{org}/{noun}s.ex", elixir_file), ("lib/{org}/{noun}s/{action}.ex", elixir_file)),
        (
            (
                "mix test",
                lambda r: (
                    f"Finished in {_n(r, 1, 20)}.{_n(r, 1, 9)} seconds ({_n(r, 0, 5)}.{_n(r, 1, 9)}s async, {_n(r, 1, 9)}.{_n(r, 1, 9)}s sync)\n{_n(r, 60, 400)} tests, 0 failures\n"
                ),
            ),
            (
                "mix format --check-formatted && mix credo --strict",
                lambda r: (
                    f"Checking {_n(r, 40, 200)} source files ...\n\nAnalysis took {_n(r, 1, 9)}.{_n(r, 1, 9)} seconds\n{_n(r, 200, 900)} mods/funs, found no issues.\n"
                ),
            ),
        ),
        (
            (
                "https://hexdocs.pm/ecto/Ecto.Query.html",
                "Ecto.Query\n\nQueries are composable. from/2 builds a query; pinned values (^value) are interpolated safely. Repo.all/2 runs it.\n",
            ),
        ),
        (("elixir --version | tail -1", "Elixir 1.17.1 (compiled with Erlang/OTP 27)\n"),),
    ),
    "infra": Kit(
        "infra",
        ("platform-infra", "harborline-ops", "meterly-deploy"),
        (
            ("envs/staging/{noun}.tf", terraform_file),
            ("charts/{noun}/values-staging.yaml", helm_values),
            ("scripts/{action}-{noun}.sh", shell_file),
        ),
        (
            ("terraform fmt -check -recursive", lambda r: ""),
            (
                "terraform -chdir=envs/staging validate",
                lambda r: "Success! The configuration is valid.\n",
            ),
            (
                "helm lint charts/*",
                lambda r: (
                    f"==> Linting charts/api\n[INFO] Chart.yaml: icon is recommended\n\n{_n(r, 2, 6)} chart(s) linted, 0 chart(s) failed\n"
                ),
            ),
        ),
        (
            (
                "https://developer.hashicorp.com/terraform/language/meta-arguments/lifecycle",
                "The lifecycle Meta-Argument\n\ncreate_before_destroy replaces a resource by creating the new one first. prevent_destroy rejects any plan that would destroy the resource. ignore_changes lists attributes Terraform leaves alone after creation.\n",
            ),
            (
                "https://helm.sh/docs/chart_template_guide/control_structures/",
                "Flow Control\n\nwith sets the scope to a value and skips the block when the value is empty, which avoids nil pointer errors on nested keys that a values file leaves out.\n",
            ),
        ),
        (
            ("terraform version", "Terraform v1.8.4\non linux_amd64\n"),
            ("helm version --short", "v3.15.1+ge211f2a\n"),
        ),
    ),
    "web": Kit(
        "web",
        ("lockerbay-web", "meterly-dashboard", "kilnworks-storefront"),
        (
            ("src/features/{noun}s/{N}List.tsx", tsx_file),
            ("src/features/{noun}s/{N}Filters.tsx", tsx_file),
        ),
        (
            (
                "npx vitest run",
                lambda r: (
                    f" Test Files  {_n(r, 20, 90)} passed ({_n(r, 20, 90)})\n      Tests  {_n(r, 200, 900)} passed ({_n(r, 200, 900)})\n   Duration  {_n(r, 2, 40)}.{_n(r, 10, 99)}s\n"
                ),
            ),
            ("npx tsc -b --pretty false", lambda r: ""),
            (
                "npm run lint",
                lambda r: (
                    f"\n> lint\n> eslint src\n\n✖ {_n(r, 3, 40)} problems (0 errors, {_n(r, 3, 40)} warnings)\n"
                ),
            ),
        ),
        (
            (
                "https://tanstack.com/query/latest/docs/framework/react/guides/query-keys",
                "Query Keys\n\nQuery keys must be arrays. Everything the query function depends on belongs in the key, so that the query refetches when one of those values changes.\n",
            ),
        ),
        (("node -v && npm -v", "v20.14.0\n10.7.0\n"),),
    ),
    "python": Kit(
        "python",
        ("meterly-etl", "tillage-models", "wardbook-reports"),
        (
            ("{org}/{noun}s/{action}.py", python_file),
            ("{org}/jobs/{noun}_{action}.py", python_file),
        ),
        (
            (
                "pytest -n auto -q",
                lambda r: (
                    f"{'.' * _n(r, 30, 70)}\n{_n(r, 100, 800)} passed in {_n(r, 5, 90)}.{_n(r, 10, 99)}s\n"
                ),
            ),
            (
                "ruff check . && ruff format --check .",
                lambda r: f"All checks passed!\n{_n(r, 60, 300)} files already formatted\n",
            ),
            (
                "mypy --strict src",
                lambda r: f"Success: no issues found in {_n(r, 40, 300)} source files\n",
            ),
        ),
        (
            (
                "https://pytest-xdist.readthedocs.io/en/stable/distribution.html",
                "Running tests across multiple CPUs\n\n-n auto starts one worker per CPU. --dist loadscope keeps tests of one module or class on the same worker, which helps when fixtures are expensive.\n",
            ),
        ),
        (("python --version && uv --version", "Python 3.12.3\nuv 0.2.11\n"),),
    ),
    "go": Kit(
        "go",
        ("rostra-scheduler", "lockerbay-router"),
        (("internal/{noun}s/service.go", go_file), ("internal/{noun}s/{action}.go", go_file)),
        (
            (
                "go test ./...",
                lambda r: "".join(
                    f"ok  \tgithub.com/rostra-app/rostra/internal/{_p(r, NOUNS)}s\t{r.uniform(0.01, 2):.3f}s\n"
                    for _ in range(6)
                ),
            ),
            ("go vet ./... && staticcheck ./...", lambda r: ""),
        ),
        (
            (
                "https://pkg.go.dev/context#WithTimeout",
                "func WithTimeout\n\nWithTimeout returns WithDeadline(parent, time.Now().Add(timeout)). Canceling this context releases resources associated with it, so code should call cancel as soon as the operations running in this Context complete.\n",
            ),
        ),
        (("go version", "go version go1.22.4 linux/amd64\n"),),
    ),
    "rust": Kit(
        "rust",
        ("rostra-solver", "meterly-edge"),
        (
            ("crates/{org}-core/src/{noun}.rs", rust_file),
            ("crates/{org}-core/src/{action}.rs", rust_file),
        ),
        (
            (
                "cargo nextest run --workspace",
                lambda r: (
                    f"    Starting {_n(r, 50, 400)} tests across {_n(r, 3, 12)} binaries\n     Summary [   {_n(r, 1, 20)}.{_n(r, 100, 999)}s] {_n(r, 50, 400)} tests run: {_n(r, 50, 400)} passed, 0 skipped\n"
                ),
            ),
            ("cargo fmt --all -- --check", lambda r: ""),
        ),
        (
            (
                "https://doc.rust-lang.org/std/collections/struct.BTreeMap.html",
                "Struct BTreeMap\n\nAn ordered map based on a B-Tree. Iteration yields entries in key order, which makes output deterministic across runs.\n",
            ),
        ),
        (("rustc --version", "rustc 1.79.0 (129f3b996 2024-06-10)\n"),),
    ),
    "cpp": Kit(
        "cpp",
        ("turbine-sim", "kilnworks-controller"),
        (("src/{noun}/{noun}_controller.cpp", cpp_file), ("src/{noun}/{action}.cpp", cpp_file)),
        (
            (
                "cmake --build build -j 8",
                lambda r: f"[{_n(r, 100, 400)}/{_n(r, 100, 400)}] Linking CXX executable bin/sim\n",
            ),
            (
                "ctest --test-dir build --output-on-failure",
                lambda r: (
                    f"100% tests passed, 0 tests failed out of {_n(r, 20, 120)}\n\nTotal Test time (real) = {_n(r, 2, 60)}.{_n(r, 10, 99)} sec\n"
                ),
            ),
            (
                "clang-tidy -p build src/**/*.cpp --quiet",
                lambda r: (
                    f"{_n(r, 20, 200)} warnings generated.\nSuppressed {_n(r, 20, 200)} warnings ({_n(r, 20, 200)} in non-user code).\n"
                ),
            ),
        ),
        (
            (
                "https://en.cppreference.com/w/cpp/algorithm/clamp",
                "std::clamp\n\nIf v compares less than lo, returns lo; otherwise if hi compares less than v, returns hi; otherwise returns v. The behavior is undefined if lo is greater than hi.\n",
            ),
        ),
        (("c++ --version | head -1", "c++ (Ubuntu 13.2.0-23ubuntu4) 13.2.0\n"),),
    ),
}


# --- tasks -----------------------------------------------------------------------------------------

ROOTS = ("/workspace/{p}", "/home/dev/src/{p}", "/code/{p}", "/srv/checkouts/{p}")


@dataclass
class _Ctx:
    kit: Kit
    rng: Random
    lang: str
    root: str
    files: list[tuple[str, str]]
    file_tools: bool
    org: str
    noun: str
    attr: str


def _layout(kit: Kit, rng: Random, org: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _ in range(rng.randint(3, 5)):
        template, writer = _p(rng, kit.files)
        noun, attr, action = _p(rng, NOUNS), _p(rng, ATTRS), _p(rng, ACTIONS)
        path = template.format(
            org=org, noun=noun, N=_pascal(noun), O=_pascal(org), action=action, A=_pascal(action)
        )
        if path not in seen:
            seen.add(path)
            out.append((path, writer(org, noun, attr, action)))
    return out


def synthetic_task(rng: Random, lang: str, *, n_steps: int, file_tools: bool) -> Task:
    eco = rng.choices(ECOSYSTEMS, weights=WEIGHTS)[0]
    kit = KITS[eco]
    project = _p(rng, kit.projects)
    org = project.split("-")[0].split("_")[0].split(".")[0].lower()
    root = _p(rng, ROOTS).format(p=project)
    files = _layout(kit, rng, org)
    noun, attr = _p(rng, NOUNS), _p(rng, ATTRS)
    ctx = _Ctx(kit, rng, lang, root, files, file_tools, org, noun, attr)
    request = _p(rng, ht.REQUESTS[lang]).format(
        project=project, noun=noun, attr=attr, stack=STACK[eco]
    )
    n_steps = min(n_steps, rng.randint(10, 30))  # shorter tasks than asked: more of them
    steps: list[list[Turn]] = [[_probe(ctx)]]
    if file_tools and rng.random() < 0.5:
        steps.append([Act((Plan(_plan(ctx, 0)),), None)])
    while len(steps) < n_steps:
        steps.append(_step(ctx))
        if file_tools and rng.random() < 0.04:
            steps.append([Act((Plan(_plan(ctx, rng.randint(1, 3))),), None)])
    close = _p(rng, ht.CLOSES[lang]).format(noun=noun, attr=attr)
    return Task(eco, request, steps, close, root, [p for p, _ in files])


def _plan(ctx: _Ctx, done: int) -> tuple[tuple[str, str], ...]:
    items = [s.format(noun=ctx.noun, attr=ctx.attr) for s in ht.PLAN_ITEMS[ctx.lang]]
    states = ["completed"] * done + ["in_progress"] + ["pending"] * len(items)
    return tuple(zip(items, states[: len(items)], strict=True))


def _thought(ctx: _Ctx) -> str | None:
    return _p(ctx.rng, ht.THOUGHTS[ctx.lang]) or None


def _probe(ctx: _Ctx) -> Act:
    command, output = _p(ctx.rng, ctx.kit.probes)
    if ctx.rng.random() < 0.5:
        tree = "\n".join(sorted({p.split("/")[0] for p, _ in ctx.files} | {"README.md", ".github"}))
        return Act(
            (
                Shell(
                    f"cd {ctx.root} && git status -sb && ls",
                    f"## main...origin/main\n{tree}\n",
                    0,
                    cwd=ctx.root,
                ),
            ),
            _thought(ctx),
        )
    return Act((Shell(command, output, 0, cwd=ctx.root),), _thought(ctx))


def _read(ctx: _Ctx) -> list[Turn]:
    path, content = _p(ctx.rng, ctx.files)
    if ctx.file_tools:
        return [Act((Read(f"{ctx.root}/{path}", content),), _thought(ctx))]
    q = shlex.quote(path)
    command = _p(ctx.rng, (f"cat -n {q}", f"sed -n '1,80p' {q}", f"head -n 60 {q}"))
    shown = content
    if command.startswith("cat -n"):
        shown = "".join(f"{i + 1:6d}\t{line}\n" for i, line in enumerate(content.splitlines()))
    return [Act((Shell(command, shown, 0, cwd=ctx.root),), _thought(ctx))]


def _search(ctx: _Ctx) -> list[Turn]:
    words = [
        w
        for _, c in ctx.files
        for w in c.replace("(", " ").replace(".", " ").split()
        if w.isidentifier() and len(w) > 5
    ]
    word = _p(ctx.rng, words or ["TODO"])
    hits = tuple(
        f"{p}:{i + 1}:{line.strip()}"
        for p, c in ctx.files
        for i, line in enumerate(c.splitlines())
        if word in line
    )[:25]
    if ctx.file_tools:
        return [Act((Search(word, ctx.root, hits),), _thought(ctx))]
    command = _p(
        ctx.rng, (f"rg -n {word}", f"git grep -n {word}", f"grep -rn --include='*' {word} .")
    )
    return [
        Act(
            (Shell(command, "".join(h + "\n" for h in hits), 0 if hits else 1, cwd=ctx.root),),
            _thought(ctx),
        )
    ]


def _find(ctx: _Ctx) -> list[Turn]:
    path = _p(ctx.rng, ctx.files)[0]
    ext = path.rsplit(".", 1)[-1]
    found = tuple(p for p, _ in ctx.files if p.endswith("." + ext))
    if ctx.file_tools:
        return [Act((FindFiles(f"**/*.{ext}", found),), _thought(ctx))]
    return [
        Act(
            (Shell(f"fd -e {ext}", "".join(f + "\n" for f in found), 0, cwd=ctx.root),),
            _thought(ctx),
        )
    ]


def tweak(path: str, content: str, rng: Random) -> tuple[str, str]:
    """(old, new): a small change to ``content``; ``old`` occurs in it exactly once."""
    lines = [ln for ln in content.splitlines() if ln.strip() and content.count(ln) == 1]
    numbered = [ln for ln in lines if any(c.isdigit() for c in ln)]
    if numbered and rng.random() < 0.6:
        line = _p(rng, numbered)
        i = next(i for i, c in enumerate(line) if c.isdigit())
        return line, line[:i] + str((int(line[i]) + rng.randint(1, 8)) % 10) + line[i + 1 :]
    line = _p(rng, [ln for ln in lines if len(ln.strip()) > 6] or lines)
    ext = path.rsplit(".", 1)[-1]
    mark = "#" if ext in ("py", "rb", "ex", "exs", "tf", "yaml", "yml", "sh", "toml") else "//"
    note = _p(
        rng,
        (
            "checked against prod data",
            "see review",
            "keep in sync with the schema",
            "was off by one",
        ),
    )
    return line, f"{line}  {mark} {note}"


def shell_edit(path: str, old: str, new: str, rng: Random) -> str:
    """A shell command that replaces ``old`` with ``new`` in ``path`` (relative to the cwd)."""
    q = shlex.quote(path)
    if rng.random() < 0.5 and not any(c in old + new for c in "\n/|$@\\{}'"):
        script = (
            "s/\\Q"
            + old.replace("/", "\\/")
            + "\\E/"
            + new.replace("/", "\\/").replace("$", "\\$").replace("@", "\\@")
            + "/"
        )
        return f"perl -0pi -e {shlex.quote(script)} {q}"
    body = f"import pathlib\np = pathlib.Path({path!r})\np.write_text(p.read_text().replace({old!r}, {new!r}, 1))"
    return f"python3 - <<'EOF'\n{body}\nEOF"


def _edit(ctx: _Ctx) -> list[Turn]:
    path, content = _p(ctx.rng, ctx.files)
    old, new = tweak(path, content, ctx.rng)
    event: Event = (
        Edit(f"{ctx.root}/{path}", old, new)
        if ctx.file_tools
        else Shell(shell_edit(path, old, new, ctx.rng), "", 0, cwd=ctx.root)
    )
    return [Act((event,), _thought(ctx))]


def _docs(ctx: _Ctx) -> list[Turn]:
    url, text = _p(ctx.rng, ctx.kit.docs)
    if ctx.file_tools:
        return [Act((Fetch(url, text),), _thought(ctx))]
    return [
        Act(
            (
                Shell(
                    f"curl -fsSL {url} | pandoc -f html -t plain | sed -n '1,40p'",
                    text,
                    0,
                    cwd=ctx.root,
                ),
            ),
            _thought(ctx),
        )
    ]


def _check(ctx: _Ctx) -> list[Turn]:
    command, output = _p(ctx.rng, ctx.kit.checks)
    return [Act((Shell(command, output(ctx.rng), 0, cwd=ctx.root),), _thought(ctx))]


def _history(ctx: _Ctx) -> list[Turn]:
    rng = ctx.rng
    if rng.random() < 0.5:
        log = "".join(
            f"{hf._hex(rng, 7)} {_p(rng, ('fix', 'feat', 'chore', 'refactor'))}({ctx.noun}): {_p(rng, ACTIONS)} {_p(rng, ATTRS).replace('_', ' ')}\n"
            for _ in range(rng.randint(4, 10))
        )
        return [Act((Shell("git log --oneline -n 10", log, 0, cwd=ctx.root),), _thought(ctx))]
    changed = rng.sample(ctx.files, min(2, len(ctx.files)))
    stat = "".join(
        f" {p} | {rng.randint(1, 30)} {'+' * rng.randint(1, 8)}{'-' * rng.randint(0, 4)}\n"
        for p, _ in changed
    )
    return [
        Act(
            (Shell("git diff --stat", f"{stat} {len(changed)} files changed\n", 0, cwd=ctx.root),),
            _thought(ctx),
        )
    ]


def _new_file(ctx: _Ctx) -> list[Turn]:
    path, content = _p(ctx.rng, ctx.files)
    base, _, ext = path.rpartition(".")
    target = f"{base}_{_p(ctx.rng, ('spec', 'test', 'fixture', 'bench'))}.{ext}"
    if ctx.file_tools:
        return [Act((Write(f"{ctx.root}/{target}", content),), _thought(ctx))]
    return [
        Act(
            (
                Shell(
                    f"cat > {shlex.quote(target)} <<'EOF'\n{content.rstrip()}\nEOF",
                    "",
                    0,
                    cwd=ctx.root,
                ),
            ),
            _thought(ctx),
        )
    ]


def _hiccup(ctx: _Ctx) -> list[Turn]:
    """A short failure fixed on the spot (not planted: nothing is checked about it)."""
    failure = hf.failure_for(ctx.kit.eco, ctx.rng)
    if "short" not in failure.outputs:
        return _check(ctx)
    first = Act(
        (Shell(failure.command, failure.outputs["short"], failure.exit_code, cwd=ctx.root),),
        _thought(ctx),
    )
    if failure.fix_command:
        fix: Event = Shell(failure.fix_command, "", 0, cwd=ctx.root)
    else:
        fix = _edit(ctx)[0].events[0]  # type: ignore[union-attr]
    again = Act((Shell(failure.command, failure.success_output, 0, cwd=ctx.root),))
    return [first, Act((fix,)), again]


_STEPS: tuple[tuple[float, Callable[[_Ctx], list[Turn]]], ...] = (
    (0.22, _read),
    (0.12, _search),
    (0.06, _find),
    (0.18, _edit),
    (0.05, _docs),
    (0.20, _check),
    (0.08, _history),
    (0.04, _new_file),
    (0.05, _hiccup),
)


def _step(ctx: _Ctx) -> list[Turn]:
    roll = ctx.rng.random()
    for share, make in _STEPS:
        if roll < share:
            return make(ctx)
        roll -= share
    return _check(ctx)
