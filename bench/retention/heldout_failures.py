# ruff: noqa: RUF001 (tools print box-drawing characters, crosses and arrows)
"""Held-out failing commands: toolchains and wordings the dev corpus does not use.

Written for the held-out corpus without looking at the dev generators' outputs nor at the
compressor: Java (Gradle, Maven, JUnit), Kotlin, .NET, Ruby (RSpec, Rails, Bundler), PHP
(PHPUnit, Composer), Swift, Elixir, Terraform, Helm, Ansible, docker build, webpack, vite,
esbuild, ESLint, vitest, pytest with xdist, chained Python exceptions, ruff, go vet, Go panics,
clippy, CMake, ninja, Catch2, AddressSanitizer, shellcheck, MySQL and pg_restore, wget, HTTPie,
git merges and pushes, full disks, permissions, heap exhaustion and crashes.

Each generator returns a ``Failure``: a command, its exit code, the ``needle`` (the error as a
developer would quote it, free of colour codes and of the indentation or gutter it is printed
with) and the output in one or more placements of the error block:

* ``start``: the error first, then a long tail (a stack, a sanitizer report, more progress);
* ``middle``: somewhere inside a long output (parallel jobs, test runners that go on);
* ``end``: close to the end of a long output, before a trailer that names a different, vaguer
  failure (Gradle's ``BUILD FAILED``, Maven's ``Failed to execute goal``, ninja's ``build
  stopped``, a compile error that only says errors were logged...);
* ``short``: a few lines.

Long outputs are 100-400 lines. ``style`` says how the line is printed: ``plain``, ``ansi``
(colour codes around or inside the line), ``indented`` (under a test name, in a gutter) or
``chained`` (the cause is the second exception of a chain, after a first one that misleads).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from random import Random
from typing import TypeVar

PLACEMENTS = ("middle", "end", "start", "short")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Failure:
    toolchain: str
    command: str
    exit_code: int
    needle: str  # occurs verbatim in every output
    outputs: dict[str, str]  # placement -> the whole output
    success_output: str  # the same command once the cause is gone
    fix_hint: str  # what the agent says it changed
    fix_command: str | None = None  # when the fix is a command, not an edit
    style: str = "plain"


Noise = Callable[[int], list[str]]

# --- vocabulary -----------------------------------------------------------------------------------

NOUNS = (
    "berth", "pilot", "vessel", "manifest", "pallet", "carrier", "locker", "parcel", "meter",
    "tariff", "lease", "patient", "dosage", "ward", "roster", "shift", "turbine", "blade",
    "sensor", "harvest", "plot", "claim", "premium", "enrollment", "venue", "pledge", "donor",
    "kiln", "glaze", "assay", "courier", "tide",
)  # fmt: skip
ATTRS = (
    "draft_m", "eta_utc", "gross_kg", "hazmat_class", "postcode", "kwh_total", "serial_no",
    "lot_code", "expires_on", "dose_mg", "bed_no", "shift_start", "yaw_deg", "pitch_deg",
    "rpm_limit", "yield_t", "policy_ref", "term_months", "seat_row", "firing_temp", "tare_kg",
    "berth_code", "night_band", "grace_days",
)  # fmt: skip
ACTIONS = (
    "assign", "schedule", "quote", "settle", "allocate", "dispatch", "renew", "calibrate",
    "ingest", "audit", "throttle", "rebalance", "stamp", "reroute", "price", "grade", "book",
)  # fmt: skip
ORGS = ("harborline", "meterly", "wardbook", "kilnworks", "rostra", "tillage", "lockerbay")
PEOPLE_FIRST = ("ana", "bruno", "chiara", "dmitri", "eun", "farah", "gustavo", "hanne")
RUST_CRATES = (
    "rustls", "ring", "webpki-roots", "prost", "tonic", "bitflags", "toml", "serde_yaml",
    "dashmap", "rayon", "crossbeam-epoch", "governor", "moka", "camino", "walkdir", "globset",
    "ignore", "tempfile", "insta", "proptest", "jiff", "zstd", "zstd-sys", "cc", "pkg-config",
    "openssl-sys", "native-tls", "reqwest", "hyper-util", "tokio-rustls", "async-trait",
    "arc-swap", "metrics", "opentelemetry", "ulid", "petgraph", "fixedbitset", "nom", "winnow",
    "toml_edit", "semver", "humantime", "bytesize", "secrecy", "validator", "tower-sessions",
)  # fmt: skip
MAVEN_ARTIFACTS = (
    "com/fasterxml/jackson/core/jackson-databind/2.17.1/jackson-databind-2.17.1.jar",
    "org/postgresql/postgresql/42.7.3/postgresql-42.7.3.jar",
    "io/micrometer/micrometer-core/1.13.0/micrometer-core-1.13.0.pom",
    "org/flywaydb/flyway-core/10.13.0/flyway-core-10.13.0.jar",
    "org/testcontainers/postgresql/1.19.8/postgresql-1.19.8.pom",
    "org/mapstruct/mapstruct/1.5.5.Final/mapstruct-1.5.5.Final.jar",
    "com/google/guava/guava/33.2.0-jre/guava-33.2.0-jre.jar",
    "org/apache/commons/commons-lang3/3.14.0/commons-lang3-3.14.0.jar",
    "io/projectreactor/reactor-core/3.6.6/reactor-core-3.6.6.jar",
    "org/junit/jupiter/junit-jupiter-params/5.10.2/junit-jupiter-params-5.10.2.jar",
)  # fmt: skip

ESC = "\x1b"


def _p(rng: Random, pool: Sequence[T]) -> T:
    return pool[rng.randrange(len(pool))]


def _pascal(*words: str) -> str:
    return "".join(part[:1].upper() + part[1:] for w in words for part in w.split("_"))


def _camel(*words: str) -> str:
    s = _pascal(*words)
    return s[:1].lower() + s[1:]


def _kebab(*words: str) -> str:
    return "-".join(part for w in words for part in w.split("_"))


def _hex(rng: Random, n: int) -> str:
    return "".join(_p(rng, "0123456789abcdef") for _ in range(n))


def _org(rng: Random) -> str:
    return _p(rng, ORGS)


def _stamp(rng: Random) -> str:
    return f"2026-0{rng.randint(4, 6)}-{rng.randint(10, 28)} {rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def shapes(
    rng: Random,
    noise: Noise,
    block: Sequence[str],
    trailer: Sequence[str] = (),
    head: Sequence[str] = (),
    *,
    only: Sequence[str] = PLACEMENTS,
    lines: tuple[int, int] = (100, 400),
) -> dict[str, str]:
    """The error ``block`` placed in ``noise``, for each placement in ``only``."""
    target = rng.randint(*lines)
    n = max(target - len(head) - len(block) - len(trailer), 12)
    out: dict[str, str] = {}
    for placement in only:
        if placement == "short":
            body = [*head, *noise(rng.randint(1, 5)), *block, *trailer]
        elif placement == "start":
            body = [*head, *block, *noise(n), *trailer]
        elif placement == "middle":
            filler = noise(n)
            cut = rng.randint(n // 4, 3 * n // 4)
            body = [*head, *filler[:cut], *block, *filler[cut:], *trailer]
        else:  # end: a few lines may still come between the block and the trailer
            after = rng.randint(0, 6)
            filler = noise(n + after)
            body = [*head, *filler[:n], *block, *filler[n:], *trailer]
        out[placement] = "\n".join(body) + "\n"
    return out


def _each(rng: Random, makers: Sequence[Callable[[], str]]) -> Noise:
    def noise(n: int) -> list[str]:
        return [makers[rng.randrange(len(makers))]() for _ in range(n)]

    return noise


# --- Java / Kotlin ---------------------------------------------------------------------------------


def _gradle_noise(rng: Random, module: str) -> Noise:
    modules = (module, "common", "persistence", "api-contracts", "testing-support", "app")
    return _each(
        rng,
        (
            lambda: (
                f"> Task :{_p(rng, modules)}:{_p(rng, ('processResources', 'compileJava', 'classes', 'jar', 'processTestResources', 'compileTestJava', 'testClasses'))}{_p(rng, ('', ' UP-TO-DATE', ' NO-SOURCE', ' FROM-CACHE'))}"
            ),
            lambda: (
                f"Download https://repo.maven.apache.org/maven2/{_p(rng, MAVEN_ARTIFACTS)}, took {rng.randint(40, 900)} ms"
            ),
            lambda: (
                f"warning: [deprecation] {_camel('get', _p(rng, ATTRS))}() in {_pascal(_p(rng, NOUNS))} has been deprecated"
            ),
            lambda: "Note: Some input files use unchecked or unsafe operations.",
        ),
    )


def _gradle_trailer(module: str, task: str, reason: str, secs: int) -> list[str]:
    return [
        "",
        "FAILURE: Build failed with an exception.",
        "",
        "* What went wrong:",
        f"Execution failed for task ':{module}:{task}'.",
        f"> {reason}",
        "",
        "* Try:",
        "> Run with --stacktrace option to get the stack trace.",
        "> Run with --info or --debug option to get more log output.",
        "> Run with --scan to get full insights.",
        "> Get more help at https://help.gradle.org.",
        "",
        f"BUILD FAILED in {secs}s",
        f"{secs // 3 + 4} actionable tasks: {secs // 5 + 2} executed, {secs // 4 + 1} up-to-date",
    ]


def _jvm_names(rng: Random) -> tuple[str, str, str, str]:
    org, noun = _org(rng), _p(rng, NOUNS)
    module = f"{noun}-{_p(rng, ('service', 'core', 'engine', 'api'))}"
    pkg = f"org.{org}.{noun}s.{_p(rng, ('planning', 'domain', 'pricing', 'intake', 'export'))}"
    return org, noun, module, pkg


def javac_error(rng: Random) -> Failure:
    org, noun, module, pkg = _jvm_names(rng)
    cls = f"{_pascal(noun)}{_p(rng, ('Planner', 'Allocator', 'Calculator', 'Importer'))}"
    attr, other = _p(rng, ATTRS), _p(rng, NOUNS)
    path = f"/workspace/{org}/{module}/src/main/java/{pkg.replace('.', '/')}/{cls}.java"
    line = rng.randint(30, 400)
    message, code, extra = _p(
        rng,
        (
            (
                "cannot find symbol",
                f"        var limit = {other}.{_camel(attr)}() + margin;",
                [
                    f"  symbol:   method {_camel(attr)}()",
                    f"  location: variable {other} of type {_pascal(other)}",
                ],
            ),
            (
                "incompatible types: possible lossy conversion from double to int",
                f"        int {_camel(attr)} = {noun}.ratio() * 100;",
                [],
            ),
            (
                f"method {_camel(_p(rng, ACTIONS))} in class {cls} cannot be applied to given types;",
                f"        {_camel(_p(rng, ACTIONS))}({noun}, {_camel(attr)});",
                [
                    "  required: " + _pascal(noun),
                    f"  found:    {_pascal(noun)},{_pascal(attr)}",
                    "  reason: actual and formal argument lists differ in length",
                ],
            ),
            (
                "unreported exception IOException; must be caught or declared to be thrown",
                f"        Files.writeString(out, {noun}.toCsv());",
                [],
            ),
        ),
    )
    error = f"{path}:{line}: error: {message}"
    block = [error, code, "                " + "^", *extra, "1 error"]
    secs = rng.randint(9, 80)
    trailer = [
        "",
        f"> Task :{module}:compileJava FAILED",
        *_gradle_trailer(
            module,
            "compileJava",
            "Compilation failed; see the compiler error output for details.",
            secs,
        ),
    ]
    cmd = _p(
        rng,
        (
            f"./gradlew :{module}:compileJava --console=plain",
            f"cd {org} && ./gradlew :{module}:build -x test --console=plain",
            f"JAVA_HOME=/opt/jdk-21 ./gradlew :{module}:assemble --console=plain --warning-mode=all",
        ),
    )
    return Failure(
        "gradle",
        cmd,
        1,
        error,
        shapes(rng, _gradle_noise(rng, module), block, trailer, only=("end", "middle", "short")),
        f"> Task :{module}:compileJava\n> Task :{module}:classes\n\nBUILD SUCCESSFUL in {secs}s\n",
        f"`{cls}` compiles again (the call matches what `{_pascal(other)}` offers)",
    )


def junit_failure(rng: Random) -> Failure:
    org, noun, module, pkg = _jvm_names(rng)
    cls = f"{_pascal(noun)}{_p(rng, ('Planner', 'Ledger', 'Scheduler', 'Policy'))}Test"
    test = f"{_camel(_p(rng, ACTIONS))}{_pascal(_p(rng, ATTRS))}{_p(rng, ('WhenEmpty', 'AtBoundary', 'ForLateArrival', 'AcrossMidnight', ''))}()"
    want, got = (
        _p(
            rng,
            (
                f"<{rng.randint(2, 60)}>",
                f"<{_pascal(noun)[:1]}{rng.randint(1, 9)}>",
                f"<{rng.randint(10, 99)}.5>",
            ),
        ),
        f"<{rng.randint(61, 140)}>",
    )
    error = f"org.opentest4j.AssertionFailedError: expected: {want} but was: {got}"
    block = [
        f"{cls} > {test} FAILED",
        f"    {error}",
        "        at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)",
        "        at app//org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)",
        "        at app//org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)",
        "        at app//org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:182)",
        "        at app//org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1156)",
        f"        at app//{pkg}.{cls}.{test[:-2]}({cls}.java:{rng.randint(30, 300)})",
        "",
    ]

    def passed() -> str:
        return f"{_pascal(_p(rng, NOUNS))}{_p(rng, ('Planner', 'Mapper', 'Repository', 'Controller'))}Test > {_camel(_p(rng, ACTIONS))}{_pascal(_p(rng, ATTRS))}() PASSED"

    total = rng.randint(80, 500)
    secs = rng.randint(20, 200)
    trailer = [
        f"{total} tests completed, 1 failed",
        "",
        f"> Task :{module}:test FAILED",
        *_gradle_trailer(
            module,
            "test",
            f"There were failing tests. See the report at: file:///workspace/{org}/{module}/build/reports/tests/test/index.html",
            secs,
        ),
    ]
    cmd = _p(
        rng,
        (
            f"./gradlew :{module}:test --tests '{pkg}.*' --console=plain",
            f"SPRING_PROFILES_ACTIVE=test ./gradlew :{module}:test --console=plain -i | grep -v DEBUG",
            f"./gradlew :{module}:check --continue --console=plain",
        ),
    )
    return Failure(
        "junit",
        f"set -o pipefail; {cmd}" if "|" in cmd else cmd,
        1,
        error,
        shapes(rng, _each(rng, (passed,)), block, trailer, only=("middle", "end", "short")),
        f"{total} tests completed\n\nBUILD SUCCESSFUL in {secs}s\n",
        f"`{test[:-2]}` expectation and `{cls.removesuffix('Test')}` agree on the boundary now",
        style="indented",
    )


def maven_chained(rng: Random) -> Failure:
    org, noun, module, pkg = _jvm_names(rng)
    table, column = f"{noun}s", _p(rng, ATTRS)
    cls = f"{_pascal(noun)}RepositoryIT"
    test = f"{_camel('saves', _p(rng, ATTRS))}"
    cause = f'Caused by: org.postgresql.util.PSQLException: ERROR: column "{column}" of relation "{table}" does not exist'
    block = [
        f"[ERROR] Tests run: {rng.randint(3, 12)}, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: {rng.uniform(1, 9):.3f} s <<< FAILURE! -- in {pkg}.{cls}",
        f"[ERROR] {pkg}.{cls}.{test} -- Time elapsed: {rng.uniform(0.01, 0.4):.3f} s <<< ERROR!",
        f"org.springframework.dao.InvalidDataAccessResourceUsageException: could not execute statement [insert into {table} ({column},id) values (?,?)]; SQL [insert into {table} ({column},id) values (?,?)]",
        "\tat org.springframework.orm.jpa.vendor.HibernateJpaDialect.convertHibernateAccessException(HibernateJpaDialect.java:277)",
        "\tat org.springframework.orm.jpa.vendor.HibernateJpaDialect.translateExceptionIfPossible(HibernateJpaDialect.java:241)",
        f"\tat {pkg}.{cls}.{test}({cls}.java:{rng.randint(30, 200)})",
        f"Caused by: org.hibernate.exception.SQLGrammarException: could not execute statement [insert into {table} ({column},id) values (?,?)]",
        "\tat org.hibernate.exception.internal.SQLStateConversionDelegate.convert(SQLStateConversionDelegate.java:91)",
        "\t... 12 more",
        cause,
        f"  Position: {rng.randint(14, 60)}",
        "\tat org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)",
        "\tat org.postgresql.core.v3.QueryExecutorImpl.processResults(QueryExecutorImpl.java:2412)",
        "\t... 31 more",
        "",
    ]

    def noise_line() -> str:
        if rng.random() < 0.5:
            return f"[INFO] Downloading from central: https://repo.maven.apache.org/maven2/{_p(rng, MAVEN_ARTIFACTS)}"
        other = _pascal(_p(rng, NOUNS))
        return f"[INFO] Tests run: {rng.randint(1, 30)}, Failures: 0, Errors: 0, Skipped: {rng.randint(0, 2)}, Time elapsed: {rng.uniform(0.1, 6):.3f} s -- in {pkg}.{other}{_p(rng, ('ServiceTest', 'MapperTest', 'ControllerIT'))}"

    total = rng.randint(60, 400)
    trailer = [
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[ERROR] Errors: ",
        f"[ERROR]   {cls}.{test} » InvalidDataAccessResourceUsage could not execute statement",
        "[INFO] ",
        f"[ERROR] Tests run: {total}, Failures: 0, Errors: 1, Skipped: {rng.randint(0, 4)}",
        "[INFO] ",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD FAILURE",
        "[INFO] ------------------------------------------------------------------------",
        f"[INFO] Total time:  {rng.uniform(20, 200):.3f} s",
        "[INFO] ------------------------------------------------------------------------",
        f"[ERROR] Failed to execute goal org.apache.maven.plugins:maven-failsafe-plugin:3.2.5:verify (default) on project {module}: There are test failures.",
        "[ERROR] -> [Help 1]",
    ]
    cmd = _p(
        rng,
        (
            f"./mvnw -B -pl {module} -am verify -Dit.test={cls}",
            f"mvn -B -ntp verify -pl {module} -Dsurefire.skip=true",
            f"cd {org}-backend && ./mvnw -B -Pintegration verify -pl {module}",
        ),
    )
    return Failure(
        "maven",
        cmd,
        1,
        cause,
        shapes(rng, _each(rng, (noise_line,)), block, trailer, only=("middle", "end")),
        f"[INFO] Tests run: {total}, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS\n",
        f"the Flyway migration that adds `{table}.{column}` runs before the tests",
        style="chained",
    )


def kotlin_error(rng: Random) -> Failure:
    org, noun, module, pkg = _jvm_names(rng)
    file = f"/workspace/{org}/{module}/src/main/kotlin/{pkg.replace('.', '/')}/{_pascal(noun)}{_p(rng, ('Estimator', 'Rules', 'Mapper'))}.kt"
    attr = _camel(_p(rng, ATTRS))
    message = _p(
        rng,
        (
            f"Unresolved reference '{attr}'.",
            "Argument type mismatch: actual type is 'Double?', but 'Double' was expected.",
            f"'when' expression must be exhaustive. Add the '{_p(rng, ATTRS).upper()}' branch or an 'else' branch.",
            f"Only safe (?.) or non-null asserted (!!.) calls are allowed on a nullable receiver of type '{_pascal(noun)}?'.",
        ),
    )
    error = f"e: file://{file}:{rng.randint(10, 300)}:{rng.randint(5, 60)} {message}"
    block = [error]
    secs = rng.randint(15, 120)
    trailer = [
        "",
        f"> Task :{module}:compileKotlin FAILED",
        *_gradle_trailer(
            module,
            "compileKotlin",
            "A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n   > Compilation error. See log for more details",
            secs,
        ),
    ]
    noise = _gradle_noise(rng, module)

    def kotlin_noise(n: int) -> list[str]:
        return [
            line.replace("compileJava", "compileKotlin")
            if rng.random() < 0.5
            else f"w: file://{file.rsplit('/', 1)[0]}/{_pascal(_p(rng, NOUNS))}.kt:{rng.randint(5, 200)}:{rng.randint(3, 40)} Parameter '{_camel(_p(rng, ATTRS))}' is never used"
            for line in noise(n)
        ]

    return Failure(
        "kotlin",
        f"./gradlew :{module}:compileKotlin --console=plain"
        if rng.random() < 0.6
        else f"./gradlew :{module}:installDist --console=plain --offline",
        1,
        error,
        shapes(rng, kotlin_noise, block, trailer, only=("end", "middle", "short")),
        f"> Task :{module}:compileKotlin\n\nBUILD SUCCESSFUL in {secs}s\n",
        f"`{_pascal(noun)}` code handles the case the compiler pointed at ({message.split(' ')[0].strip(chr(39))}...)",
    )


def jvm_heap(rng: Random) -> Failure:
    _, noun, module, pkg = _jvm_names(rng)
    thread = f"{noun}-{_p(rng, ('loader', 'importer', 'replayer', 'indexer'))}-{rng.randint(1, 16)}"
    error = f'Exception in thread "{thread}" java.lang.OutOfMemoryError: Java heap space'
    block = [
        error,
        "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3541)",
        "\tat java.base/java.util.ArrayList.grow(ArrayList.java:237)",
        f"\tat {pkg}.{_pascal(noun)}Replay.load({_pascal(noun)}Replay.java:{rng.randint(40, 200)})",
        f"\tat {pkg}.{_pascal(noun)}Replay.lambda$run$0({_pascal(noun)}Replay.java:{rng.randint(20, 39)})",
        "\tat java.base/java.lang.Thread.run(Thread.java:1583)",
    ]
    month = f"2026-0{rng.randint(1, 5)}"

    def progress() -> str:
        return f"{rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(100, 999)} [{noun}-loader-{rng.randint(1, 16)}] INFO  {pkg}.{_pascal(noun)}Replay - batch {rng.randint(1, 900)} of {month}: {rng.randint(1000, 50000)} rows"

    cmd = f"JAVA_OPTS='-Xmx512m' ./gradlew :{module}:run --args='replay --month {month}' --console=plain"
    trailer = [
        "",
        f"> Task :{module}:run FAILED",
        *_gradle_trailer(
            module,
            "run",
            "Process 'command '/opt/jdk-21/bin/java'' finished with non-zero exit value 1",
            rng.randint(60, 600),
        ),
    ]
    return Failure(
        "jvm",
        cmd,
        1,
        error,
        shapes(rng, _each(rng, (progress,)), block, trailer, only=("end", "middle")),
        f"INFO  {pkg}.{_pascal(noun)}Replay - replay of {month} done\n\nBUILD SUCCESSFUL\n",
        "the replay streams rows per batch instead of collecting the month in one list",
    )


# --- .NET ----------------------------------------------------------------------------------------


def _dotnet_names(rng: Random) -> tuple[str, str, str]:
    org = _pascal(_org(rng))
    noun = _p(rng, NOUNS)
    return org, noun, f"{org}.{_p(rng, ('Api', 'Domain', 'Worker', 'Billing'))}"


def dotnet_build(rng: Random) -> Failure:
    org, noun, project = _dotnet_names(rng)
    file = f"/src/{project}/{_p(rng, ('Endpoints', 'Services', 'Handlers'))}/{_pascal(noun)}{_p(rng, ('Endpoints', 'Service', 'Handler'))}.cs"
    attr = _camel(_p(rng, ATTRS))
    code, message = _p(
        rng,
        (
            ("CS0103", f"The name '{attr}' does not exist in the current context"),
            (
                "CS1061",
                f"'{_pascal(noun)}' does not contain a definition for '{_pascal(attr)}' and no accessible extension method '{_pascal(attr)}' accepting a first argument of type '{_pascal(noun)}' could be found (are you missing a using directive or an assembly reference?)",
            ),
            (
                "CS0246",
                f"The type or namespace name '{_pascal(noun)}Calculator' could not be found (are you missing a using directive or an assembly reference?)",
            ),
            (
                "CS8604",
                f"Possible null reference argument for parameter '{attr}' in '{_pascal(noun)}.{_pascal(_p(rng, ACTIONS))}'.",
            ),
        ),
    )
    csproj = f"/src/{project}/{project}.csproj"
    error = (
        f"{file}({rng.randint(10, 300)},{rng.randint(5, 60)}): error {code}: {message} [{csproj}]"
    )

    def warn() -> str:
        return f"/src/{project}/{_pascal(_p(rng, NOUNS))}.cs({rng.randint(5, 200)},{rng.randint(5, 40)}): warning CS8618: Non-nullable property '{_pascal(_p(rng, ATTRS))}' must contain a non-null value when exiting constructor. Consider adding the 'required' modifier or declaring the property as nullable. [{csproj}]"

    def built() -> str:
        p = f"{org}.{_p(rng, ('Domain', 'Contracts', 'Persistence', 'Shared', 'Testing'))}"
        return f"  {p} -> /src/{p}/bin/Debug/net8.0/{p}.dll"

    head = [
        "  Determining projects to restore...",
        f"  Restored {csproj} (in {rng.randint(200, 900)} ms).",
    ]
    warnings = rng.randint(3, 40)
    colour = rng.random() < 0.35
    shown = f"{ESC}[31m{error}{ESC}[39m" if colour else error
    trailer = [
        "",
        "Build FAILED.",
        "",
        shown,
        f"    {warnings} Warning(s)",
        "    1 Error(s)",
        "",
        f"Time Elapsed 00:00:{rng.randint(10, 59)}.{rng.randint(10, 99)}",
    ]
    cmd = _p(
        rng,
        (
            f"dotnet build src/{project}/{project}.csproj -c Release",
            f"dotnet build {org}.sln -warnaserror:nullable --no-restore",
            f"cd src && dotnet publish {project} -c Release -o /tmp/publish",
        ),
    )
    return Failure(
        "dotnet",
        cmd,
        1,
        error,
        shapes(rng, _each(rng, (warn, built)), [shown], trailer, head, only=("middle", "start")),
        f"  {project} -> /src/{project}/bin/Release/net8.0/{project}.dll\n\nBuild succeeded.\n    0 Error(s)\n",
        f"`{project}` builds: the {code} in `{file.rsplit('/', 1)[-1]}` is gone",
        style="ansi" if colour else "plain",
    )


def dotnet_test(rng: Random) -> Failure:
    org, noun, _ = _dotnet_names(rng)
    suite = f"{org}.Tests.{_pascal(noun)}.{_pascal(noun)}{_p(rng, ('Calculator', 'Rules', 'Scheduler'))}Tests"
    case = f"{_pascal(_p(rng, ACTIONS))}{_pascal(_p(rng, ATTRS))}{_p(rng, ('', 'ForChildren', 'OnWeekend', 'WhenMissing'))}"
    arg = (
        f"({_camel(_p(rng, ATTRS))}: {rng.randint(1, 90)}.{rng.choice((0, 5))})"
        if rng.random() < 0.5
        else ""
    )
    error = f"Failed {suite}.{case}{arg} [{rng.randint(2, 90)} ms]"
    block = [
        f"  {error}",
        "  Error Message:",
        "   Assert.Equal() Failure: Values differ",
        f"Expected: {rng.randint(10, 400)}.5",
        f"Actual:   {rng.randint(401, 900)}",
        "  Stack Trace:",
        f"     at {suite}.{case}() in /src/tests/{org}.Tests/{_pascal(noun)}/{suite.rsplit('.', 1)[-1]}.cs:line {rng.randint(20, 200)}",
        "   at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, Signature sig, Boolean isConstructor)",
        "   at System.Reflection.MethodBaseInvoker.InvokeWithNoArgs(Object obj, BindingFlags invokeAttr)",
    ]

    def passed() -> str:
        return f"  Passed {org}.Tests.{_pascal(_p(rng, NOUNS))}.{_pascal(_p(rng, ACTIONS))}{_pascal(_p(rng, ATTRS))} [{rng.randint(1, 60)} ms]"

    total = rng.randint(100, 600)
    trailer = [
        "",
        "Test Run Failed.",
        f"Total tests: {total}",
        f"     Passed: {total - 1}",
        "     Failed: 1",
        f" Total time: {rng.uniform(2, 40):.4f} Seconds",
        f"Failed!  - Failed:     1, Passed:   {total - 1}, Skipped:     0, Total:   {total}, Duration: {rng.randint(2, 40)} s - {org}.Tests.dll (net8.0)",
    ]
    cmd = f'dotnet test tests/{org}.Tests --filter "FullyQualifiedName~{_pascal(noun)}" --logger "console;verbosity=normal"'
    return Failure(
        "dotnet",
        cmd,
        1,
        error,
        shapes(rng, _each(rng, (passed,)), block, trailer, only=("middle", "end", "short")),
        f"Passed!  - Failed:     0, Passed:   {total}, Skipped:     0, Total:   {total}\n",
        f"`{case}` gets the capped value the test expects",
        style="indented",
    )


# --- Ruby ----------------------------------------------------------------------------------------


def rspec_failure(rng: Random) -> Failure:
    noun, attr = _p(rng, NOUNS), _p(rng, ATTRS)
    model = _pascal(noun)
    spec = f"spec/{_p(rng, ('models', 'services', 'jobs'))}/{noun}_{_p(rng, ('spec', 'renewal_spec', 'pricing_spec'))}.rb"
    line = rng.randint(12, 200)
    y, m, d = rng.randint(2026, 2029), rng.randint(1, 12), rng.randint(2, 28)
    expected = f"Date.new({y}, {m}, {d})"
    description = f"{model}#{_p(rng, ACTIONS)} {_p(rng, ('keeps', 'moves', 'extends', 'clears'))} the {attr.replace('_', ' ')}"
    error = f"Failure/Error: expect({noun}.{attr}).to eq({expected})"
    colour = rng.random() < 0.4
    shown = f"{ESC}[31m     {error}{ESC}[0m" if colour else f"     {error}"
    block = [
        "",
        "Failures:",
        "",
        f"  1) {description}",
        shown,
        "",
        f"       expected: {y}-{m:02d}-{d:02d}",
        f"            got: {y}-{m:02d}-01",
        "",
        "       (compared using ==)",
        f"     # ./{spec}:{line + 3}:in `block (3 levels) in <top (required)>'",
        "",
    ]

    def documented() -> str:
        return f"{'  ' * rng.randint(1, 3)}{_p(rng, ('returns', 'rejects', 'keeps', 'schedules', 'sends'))} {_p(rng, ('nil', 'the default', 'a warning', 'the next slot', 'one email'))} when {_p(rng, ATTRS).replace('_', ' ')} is {_p(rng, ('blank', 'in the past', 'zero', 'missing', 'out of range'))}"

    total = rng.randint(120, 900)
    seed = rng.randint(1000, 65000)
    trailer = [
        f"Finished in {rng.uniform(3, 60):.2f} seconds (files took {rng.uniform(1, 5):.2f} seconds to load)",
        f"{total} examples, 1 failure",
        "",
        "Failed examples:",
        "",
        f"rspec ./{spec}:{line} # {description}",
        "",
        f"Randomized with seed {seed}",
    ]
    cmd = _p(
        rng,
        (
            f"bundle exec rspec {spec} --format documentation",
            f"RAILS_ENV=test bundle exec rspec --format documentation --seed {seed}",
            f"docker compose exec -T web bin/rspec {spec.rsplit('/', 1)[0]}",
        ),
    )
    body = block[:-1] if colour else block
    return Failure(
        "rspec",
        cmd,
        1,
        error,
        shapes(rng, _each(rng, (documented,)), body, trailer, only=("end", "short")),
        f"{total} examples, 0 failures\n",
        f"`{model}#{attr}` is computed from the term, not from today's date",
        style="ansi" if colour else "indented",
    )


def rails_migration(rng: Random) -> Failure:
    noun, attr = _p(rng, NOUNS), _p(rng, ATTRS)
    table = f"{noun}s"
    version = f"2026{rng.randint(1, 6):02d}{rng.randint(10, 28)}{rng.randint(100000, 235959)}"
    name = f"Add{_pascal(attr)}IndexTo{_pascal(table)}"
    mig = f"db/migrate/{version}_{_kebab(name).lower().replace('-', '_')}.rb"
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    mig = f"db/migrate/{version}_{snake}.rb"
    error = f'ActiveRecord::StatementInvalid: PG::UndefinedColumn: ERROR:  column "{attr}" does not exist (ActiveRecord::StatementInvalid)'
    block = [
        f"== {version} {name}: migrating " + "=" * 20,
        f"-- add_index(:{table}, [:{attr}, :created_at], {{:algorithm=>:concurrently}})",
        "bin/rails aborted!",
        "StandardError: An error has occurred, all later migrations canceled: (StandardError)",
        "",
        f'PG::UndefinedColumn: ERROR:  column "{attr}" does not exist',
        f"/app/{mig}:{rng.randint(5, 9)}:in `change'",
        "",
        "Caused by:",
        error,
        f"/app/{mig}:{rng.randint(5, 9)}:in `change'",
        "",
        "Caused by:",
        f'PG::UndefinedColumn: ERROR:  column "{attr}" does not exist (PG::UndefinedColumn)',
        f"/app/{mig}:{rng.randint(5, 9)}:in `change'",
        "Tasks: TOP => db:migrate",
        "(See full trace by running task with --trace)",
    ]

    def earlier() -> str:
        v = f"2026{rng.randint(1, 6):02d}{rng.randint(10, 28)}{rng.randint(100000, 235959)}"
        return _p(
            rng,
            (
                f"== {v} Create{_pascal(_p(rng, NOUNS))}{_pascal(_p(rng, ATTRS))}s: migrated ({rng.uniform(0, 0.2):.4f}s) "
                + "=" * 12,
                f"-- create_table(:{_p(rng, NOUNS)}_{_p(rng, ('events', 'notes', 'snapshots'))})",
                f"   -> {rng.uniform(0, 0.05):.4f}s",
                f"-- add_column(:{_p(rng, NOUNS)}s, :{_p(rng, ATTRS)}, :string)",
            ),
        )

    cmd = _p(
        rng,
        (
            "bin/rails db:migrate",
            "RAILS_ENV=staging bundle exec rails db:migrate",
            f"docker compose run --rm web bin/rails db:migrate:up VERSION={version}",
        ),
    )
    return Failure(
        "rails",
        cmd,
        1,
        error,
        shapes(rng, _each(rng, (earlier,)), block, only=("end", "short"), lines=(40, 160)),
        f"== {version} {name}: migrated ({rng.uniform(0.01, 2):.4f}s) " + "=" * 20 + "\n",
        f"the migration that adds `{table}.{attr}` now runs first",
        style="chained",
    )


def bundler_missing(rng: Random) -> Failure:
    gem, want, have = _p(
        rng,
        (
            ("sidekiq", "~> 8.1", ("7.2.4", "7.3.0")),
            ("pg", "= 1.6.0.rc1", ("1.5.6", "1.5.7")),
            ("rails", "~> 8.1.0", ("8.0.1", "8.0.2")),
            ("rubocop-rails-omakase", ">= 2.1", ("1.0.0", "1.1.0")),
            ("solid_queue", "~> 2.0", ("1.0.2", "1.1.0")),
            ("money-rails", "~> 2.0", ("1.15.0",)),
        ),
    )
    error = f"Could not find gem '{gem} ({want})' in rubygems repository https://rubygems.org/ or installed locally."
    out = [
        "Fetching gem metadata from https://rubygems.org/.........",
        "Resolving dependencies...",
        error,
        "",
        f"The source contains the following gems matching '{gem}':",
        *(f"  * {gem}-{v}" for v in have),
    ]
    return Failure(
        "bundler",
        _p(
            rng,
            (
                "bundle install",
                "bundle install --jobs 4 --retry 2",
                "bundle update --conservative " + gem,
            ),
        ),
        7,
        error,
        {"short": "\n".join(out) + "\n"},
        f"Bundle complete! {rng.randint(40, 120)} Gemfile dependencies, {rng.randint(150, 300)} gems now installed.\n",
        f"the Gemfile asks for a `{gem}` that exists",
    )


# --- PHP -----------------------------------------------------------------------------------------


def phpunit_failure(rng: Random) -> Failure:
    noun, attr = _p(rng, NOUNS), _p(rng, ATTRS)
    ns = f"Tests\\{_p(rng, ('Unit', 'Feature'))}\\{_pascal(noun)}s"
    cls = f"{_pascal(noun)}{_p(rng, ('Calculator', 'Policy', 'Importer'))}Test"
    method = f"test{_pascal(_p(rng, ACTIONS))}{_pascal(attr)}"
    a = f"{_kebab(noun)}-{rng.randint(100, 999)}"
    b = f"{_kebab(noun)}-{rng.randint(100, 999)}"
    error = f"Failed asserting that '{a}' is identical to '{b}'."
    block = [
        "",
        "There was 1 failure:",
        "",
        f"1) {ns}\\{cls}::{method}",
        error,
        "",
        f"/var/www/tests/{ns.split(chr(92), 1)[1].replace(chr(92), '/')}/{cls}.php:{rng.randint(20, 200)}",
        "",
    ]

    def testdox() -> str:
        return f" ✔ {_p(rng, ('Applies', 'Rejects', 'Rounds', 'Stores', 'Keeps'))} {_p(rng, ATTRS).replace('_', ' ')} {_p(rng, ('for new customers', 'after midnight', 'when empty', 'per ward', 'on renewal'))}"

    total = rng.randint(100, 900)
    trailer = [
        "FAILURES!",
        f"Tests: {total}, Assertions: {total * 2 + rng.randint(1, 50)}, Failures: 1.",
    ]
    head = [
        "PHPUnit 11.1.3 by Sebastian Bergmann and contributors.",
        "",
        "Runtime:       PHP 8.3.7",
        "Configuration: /var/www/phpunit.xml",
        "",
    ]
    cmd = _p(
        rng,
        (
            f"vendor/bin/phpunit --testdox --filter {cls}",
            "php -d memory_limit=1G vendor/bin/phpunit --testdox",
            "docker compose exec -T php vendor/bin/phpunit --testdox --testsuite unit",
        ),
    )
    return Failure(
        "phpunit",
        cmd,
        1,
        error,
        shapes(rng, _each(rng, (testdox,)), block, trailer, head, only=("end", "short")),
        f"OK ({total} tests, {total * 2} assertions)\n",
        f"`{cls.removesuffix('Test')}` builds the reference from the {attr.replace('_', ' ')}",
    )


def composer_conflict(rng: Random) -> Failure:
    pkg, constraint, php_req = _p(
        rng,
        (
            ("laravel/framework", "^11.0", "^8.2"),
            ("symfony/console", "^7.1", "^8.2"),
            ("phpunit/phpunit", "^11.2", "^8.2"),
            ("doctrine/orm", "^3.2", "^8.1"),
            ("pestphp/pest", "^3.0", "^8.2"),
        ),
    )
    have = f"8.{rng.randint(0, 1)}.{rng.randint(2, 30)}"
    error = f"- {pkg}[v{constraint[1:]}.0, ..., v{constraint[1:]}.{rng.randint(2, 9)}] require php {php_req} -> your php version ({have}) does not satisfy that requirement."
    out = [
        "Loading composer repositories with package information",
        "Updating dependencies",
        "Your requirements could not be resolved to an installable set of packages.",
        "",
        "  Problem 1",
        f"    - Root composer.json requires {pkg} {constraint} -> satisfiable by {pkg}[v{constraint[1:]}.0, ..., v{constraint[1:]}.9].",
        f"    {error}",
        "",
    ]
    return Failure(
        "composer",
        _p(
            rng,
            (
                f"composer require {pkg}:{constraint} -W",
                "composer update --with-all-dependencies",
                f"composer update {pkg} -W",
            ),
        ),
        2,
        error,
        {"short": "\n".join(out) + "\n"},
        "Lock file operations: 0 installs, 3 updates, 0 removals\nGenerating optimized autoload files\n",
        "the container runs a PHP that satisfies the requirement",
        fix_command="docker compose build --build-arg PHP_VERSION=8.3 php",
        style="indented",
    )


def php_fatal(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    cls = f"App\\{_pascal(noun)}s\\{_pascal(noun)}{_p(rng, ('Renewer', 'Calculator', 'Exporter'))}"
    method = f"{_camel(_p(rng, ACTIONS), _p(rng, ATTRS))}"
    command = f"{_kebab(noun)}s:{_p(rng, ('recalculate', 'export', 'renew'))}"
    file = f"/var/www/app/Console/Commands/{_pascal(noun)}{_p(rng, ('Recalculate', 'Export', 'Renew'))}.php"
    line = rng.randint(30, 200)
    error = f"PHP Fatal error:  Uncaught Error: Call to undefined method {cls}::{method}() in {file}:{line}"
    block = [
        error,
        "Stack trace:",
        f"#0 /var/www/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php(36): {file.rsplit('/', 1)[-1][:-4]}->handle()",
        "#1 /var/www/vendor/laravel/framework/src/Illuminate/Container/Util.php(43): Illuminate\\Container\\BoundMethod::Illuminate\\Container\\{closure}()",
        "#2 /var/www/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php(95): Illuminate\\Container\\Util::unwrapIfClosure(Object(Closure))",
        "#3 /var/www/artisan(13): Illuminate\\Foundation\\Application->handleCommand(Object(Symfony\\Component\\Console\\Input\\ArgvInput))",
        "#4 {main}",
        f"  thrown in {file} on line {line}",
    ]
    month = f"2026-0{rng.randint(1, 6)}"

    def progress() -> str:
        return f"  {_pascal(noun)} {month}/{_p(rng, ('CUST', 'ACC', 'REF'))}-{rng.randint(1000, 9999)} {'.' * rng.randint(20, 60)} {rng.randint(1, 90)}ms DONE"

    return Failure(
        "php",
        f"php artisan {command} --month={month}",
        255,
        error,
        shapes(rng, _each(rng, (progress,)), block, only=("end", "middle", "short")),
        f"  {_pascal(noun)}s for {month} done.\n",
        f"the command calls the method `{cls.rsplit(chr(92), 1)[-1]}` actually has",
    )


# --- Swift ---------------------------------------------------------------------------------------


def swift_build(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    kit = f"{_pascal(noun)}Kit"
    file = f"/workspace/{_org(rng)}-ios/Sources/{kit}/{_pascal(noun)}{_p(rng, ('Planner', 'Store', 'ViewModel'))}.swift"
    attr = _camel(_p(rng, ATTRS))
    message = _p(
        rng,
        (
            f"cannot find '{attr}' in scope",
            f"value of type '{_pascal(noun)}' has no member '{attr}'",
            f"missing argument for parameter '{attr}' in call",
            "cannot convert value of type 'Double' to expected argument type 'Int'",
        ),
    )
    error = f"{file}:{rng.randint(10, 300)}:{rng.randint(5, 50)}: error: {message}"
    n = rng.randint(40, 120)
    block = [
        error,
        f"        let limit = {attr} + window.margin",
        "                    ^~~~~~~~~~~",
    ]

    def step() -> str:
        return f"[{rng.randint(1, n)}/{n}] Compiling {_p(rng, (kit, 'Networking', 'Persistence', 'DesignSystem'))} {_pascal(_p(rng, NOUNS))}{_p(rng, ('View', 'Model', 'Client', '+Formatting'))}.swift"

    return Failure(
        "swift",
        _p(
            rng,
            (
                "swift build -c debug",
                f"swift build --product {kit}",
                f"swift test --filter {kit}Tests",
            ),
        ),
        1,
        error,
        shapes(
            rng,
            _each(rng, (step,)),
            block,
            ["error: fatalError"],
            ["Building for debugging..."],
            only=("middle", "end", "short"),
            lines=(60, 200),
        ),
        f"Building for debugging...\n[{n}/{n}] Linking {kit}\nBuild complete! ({rng.uniform(5, 60):.2f}s)\n",
        f"`{kit}` uses the name the type declares",
    )


def xcode_test(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    target = f"{_pascal(noun)}KitTests"
    case = f"{_pascal(noun)}PlannerTests"
    test = f"test{_pascal(_p(rng, ACTIONS))}{_pascal(_p(rng, ATTRS))}"
    a, b = f"{_pascal(noun)[:1]}{rng.randint(1, 9)}", f"{_pascal(noun)[:1]}{rng.randint(10, 19)}"
    error = f'/Users/ci/{_org(rng)}-ios/Tests/{target}/{case}.swift:{rng.randint(20, 200)}: error: -[{target}.{case} {test}] : XCTAssertEqual failed: ("{a}") is not equal to ("{b}")'
    block = [
        f"Test Case '-[{target}.{case} {test}]' started.",
        error,
        f"Test Case '-[{target}.{case} {test}]' failed ({rng.uniform(0, 0.5):.3f} seconds).",
    ]

    def other() -> str:
        t = f"test{_pascal(_p(rng, ACTIONS))}{_pascal(_p(rng, ATTRS))}"
        return f"Test Case '-[{target}.{_pascal(_p(rng, NOUNS))}Tests {t}]' passed ({rng.uniform(0, 0.3):.3f} seconds)."

    trailer = [
        f"Test Suite '{target}.xctest' failed at 2026-05-{rng.randint(10, 28)} 10:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(100, 999)}.",
        f"\t Executed {rng.randint(80, 400)} tests, with 1 failure (0 unexpected) in {rng.uniform(2, 30):.3f} seconds",
        "",
        "Failing tests:",
        f"\t{case}.{test}()",
        "",
        "** TEST FAILED **",
    ]
    return Failure(
        "xcodebuild",
        f"xcodebuild test -scheme {_pascal(noun)}Kit -destination 'platform=iOS Simulator,name=iPhone 15' -quiet",
        65,
        error,
        shapes(rng, _each(rng, (other,)), block, trailer, only=("middle", "end", "short")),
        "** TEST SUCCEEDED **\n",
        f"the planner picks `{b}` for that case again",
    )


# --- Elixir --------------------------------------------------------------------------------------


def _ex_names(rng: Random) -> tuple[str, str, str]:
    app = _org(rng)
    noun = _p(rng, NOUNS)
    return app, noun, f"{_pascal(app)}.{_pascal(noun)}s"


def mix_test(rng: Random) -> Failure:
    app, noun, module = _ex_names(rng)
    fun = f"{_p(rng, ACTIONS)}/{rng.randint(1, 3)}"
    title = f"test {fun} {_p(rng, ('hands out the next free', 'refuses an expired', 'reuses the cancelled', 'splits an oversized'))} {noun}"
    error = f"1) {title} ({module}Test)"
    colour = rng.random() < 0.4
    file = f"test/{app}/{noun}s_test.exs"
    line = rng.randint(10, 200)
    left, right = rng.randint(1, 40), rng.randint(41, 90)
    block = [
        "",
        f"  {ESC}[31m{error}{ESC}[0m" if colour else f"  {error}",
        f"     {file}:{line}",
        "     Assertion with == failed",
        f"     code:  assert {module}.{fun.split('/')[0]}(bay, {noun}).slot == {right}",
        f"     left:  {left}",
        f"     right: {right}",
        "     stacktrace:",
        f"       {file}:{line + 3}: (test)",
        "",
    ]

    def dots() -> str:
        return "." * rng.randint(20, 80)

    total = rng.randint(60, 500)
    trailer = [
        f"Finished in {rng.uniform(0.5, 20):.1f} seconds ({rng.uniform(0.1, 5):.1f}s async, {rng.uniform(0.1, 10):.1f}s sync)",
        f"{total} tests, 1 failure",
        "",
        f"Randomized with seed {rng.randint(100000, 999999)}",
    ]
    cmd = _p(
        rng,
        (
            f"mix test {file}",
            f"MIX_ENV=test mix test --trace {file}",
            f"docker compose run --rm -e MIX_ENV=test app mix test {file}:{line}",
        ),
    )
    return Failure(
        "exunit",
        cmd,
        2,
        error,
        shapes(
            rng,
            _each(rng, (dots,)),
            block,
            trailer,
            only=("end", "middle", "short"),
            lines=(30, 120),
        ),
        f"Finished in {rng.uniform(0.5, 20):.1f} seconds\n{total} tests, 0 failures\n",
        f"`{module}.{fun.split('/')[0]}` skips {noun}s that are already taken",
        style="ansi" if colour else "indented",
    )


def mix_compile(rng: Random) -> Failure:
    app, noun, module = _ex_names(rng)
    fun = f"{_p(rng, ('slot', 'window', 'rate', 'quota'))}_for/{rng.randint(1, 3)}"
    file = f"lib/{app}/{noun}s.ex"
    line = rng.randint(20, 300)
    error = f"error: undefined function {fun} (expected {module} to define such a function or for it to be imported, but none are available)"
    block = [
        f"    {error}",
        "    │",
        f" {line} │     slot = {fun.split('/')[0]}(bay, size)",
        "    │            ^",
        "    │",
        f"    └─ {file}:{line}:12: {module}.{_p(rng, ACTIONS)}/2",
        "",
    ]
    trailer = [
        f"== Compilation error in file {file} ==",
        f"** (CompileError) {file}: cannot compile module {module} (errors have been logged)",
        "",
    ]

    def warning(n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            var = _p(rng, ATTRS)
            f = f"lib/{app}/{_p(rng, NOUNS)}s.ex"
            out += [
                f'    warning: variable "{var}" is unused (if the variable is not meant to be used, prefix it with an underscore)',
                "    │",
                f" {rng.randint(5, 300)} │   def {_p(rng, ACTIONS)}({var}, opts) do",
                "    │",
                f"    └─ {f}:{rng.randint(5, 300)}:{rng.randint(3, 30)}",
                "",
            ]
        return out[:n]

    return Failure(
        "mix",
        _p(
            rng,
            (
                "mix compile --warnings-as-errors",
                "mix compile",
                f"MIX_ENV=prod mix release {app} --overwrite",
            ),
        ),
        1,
        error,
        shapes(
            rng,
            warning,
            block,
            trailer,
            [f"Compiling {rng.randint(10, 80)} files (.ex)"],
            only=("end", "middle", "short"),
            lines=(40, 160),
        ),
        f"Compiling {rng.randint(1, 5)} files (.ex)\nGenerated {app} app\n",
        f"`{fun}` is defined in `{module}`",
        style="indented",
    )


# --- infrastructure ------------------------------------------------------------------------------


def terraform_error(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    env = _p(rng, ("staging", "prod-eu", "sandbox", "dr"))
    kind = rng.randrange(3)
    if kind == 0:
        param = f"/{org}/{env}/{_p(rng, ATTRS)}"
        message = f"reading SSM Parameter ({param}): couldn't find resource"
        where = [
            "  with data.aws_ssm_parameter.secret,",
            '  on secrets.tf line 12, in data "aws_ssm_parameter" "secret":',
        ]
    elif kind == 1:
        ident = f"{org}-{noun}-{env}"
        message = f"creating RDS DB Instance ({ident}): operation error RDS: CreateDBInstance, https response error StatusCode: 400, RequestID: {_hex(rng, 8)}-{_hex(rng, 4)}, api error InvalidParameterCombination: Cannot find version 15.{rng.randint(2, 9)} for postgres"
        where = [
            "  with module.db.aws_db_instance.this,",
            '  on modules/db/main.tf line 41, in resource "aws_db_instance" "this":',
        ]
    else:
        bucket = f"{org}-{noun}-artifacts-{env}"
        message = f"creating S3 Bucket ({bucket}): BucketAlreadyExists"
        where = [
            "  with aws_s3_bucket.artifacts,",
            '  on storage.tf line 3, in resource "aws_s3_bucket" "artifacts":',
        ]
    colour = rng.random() < 0.5
    if colour:
        first = f"{ESC}[31m│{ESC}[0m {ESC}[0m{ESC}[1m{ESC}[31mError: {ESC}[0m{ESC}[0m{ESC}[1m{message}{ESC}[0m"
        bar = f"{ESC}[31m│{ESC}[0m"
        box = [
            f"{ESC}[31m╷{ESC}[0m",
            first,
            bar,
            *(f"{bar} {w}" for w in where),
            bar,
            f"{ESC}[31m╵{ESC}[0m",
        ]
    else:
        box = ["╷", f"│ Error: {message}", "│", *(f"│ {w}" for w in where), "│", "╵"]
    needle = message if colour else f"Error: {message}"

    def refresh() -> str:
        res = _p(
            rng,
            (
                "aws_iam_role",
                "aws_security_group",
                "aws_route53_record",
                "aws_ecs_service",
                "aws_cloudwatch_log_group",
                "aws_lb_target_group",
            ),
        )
        return f"{res}.{_p(rng, NOUNS)}_{_p(rng, ('main', 'public', 'internal', 'worker'))}: Refreshing state... [id={org}-{_p(rng, NOUNS)}-{_hex(rng, 6)}]"

    head = ["Acquiring state lock. This may take a few moments..."]
    trailer = ["Releasing state lock. This may take a few moments..."]
    action = _p(
        rng,
        (
            "plan -input=false -out=tfplan",
            "apply -input=false -auto-approve",
            "plan -lock-timeout=120s",
        ),
    )
    cmd = f"TF_IN_AUTOMATION=1 terraform -chdir=envs/{env} {action}"
    if rng.random() < 0.4:
        cmd = f"cd infra && AWS_PROFILE={org}-{env} terraform -chdir=envs/{env} {action}"
    return Failure(
        "terraform",
        cmd,
        1,
        needle,
        shapes(rng, _each(rng, (refresh,)), ["", *box, ""], trailer, head, only=("end", "short")),
        "No changes. Your infrastructure matches the configuration.\n"
        if "plan" in action
        else "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.\n",
        "the missing piece exists on the AWS side now",
        style="ansi" if colour else "plain",
    )


def helm_failure(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    release = f"{noun}-{_p(rng, ('api', 'worker', 'gateway'))}"
    key = _p(
        rng,
        (
            "resources.limits.memory",
            "ingress.tls",
            "podSecurityContext.fsGroup",
            "autoscaling.maxReplicas",
        ),
    )
    line = rng.randint(20, 120)
    error = f'Error: UPGRADE FAILED: template: {release}/templates/deployment.yaml:{line}:{rng.randint(10, 40)}: executing "{release}/templates/deployment.yaml" at <.Values.{key}>: nil pointer evaluating interface {{}}.{key.rsplit(".", 1)[-1]}'

    def debug() -> str:
        return f"{_p(rng, ('upgrade.go', 'client.go', 'install.go'))}:{rng.randint(100, 600)}: [debug] {_p(rng, ('preparing upgrade for', 'resetting values to the chart defaults for', 'performing update for', 'creating upgraded release for', 'waiting for resources of'))} {release}"

    ns = f"{org}-{_p(rng, ('staging', 'prod'))}"
    cmd = f"helm upgrade --install {release} charts/{release} -n {ns} -f charts/{release}/values-{ns.split('-')[-1]}.yaml --debug"
    return Failure(
        "helm",
        cmd,
        1,
        error,
        shapes(
            rng,
            _each(rng, (debug,)),
            [error],
            head=["history.go:56: [debug] getting history for release " + release],
            only=("end", "short"),
            lines=(20, 60),
        ),
        f'Release "{release}" has been upgraded. Happy Helming!\nNAME: {release}\nSTATUS: deployed\n',
        f"the values file defines `{key}`",
    )


def ansible_failure(rng: Random) -> Failure:
    org = _org(rng)
    group = _p(rng, ("db", "web", "workers", "edge"))
    hosts = [f"{group}-{i}.{org}.internal" for i in range(1, rng.randint(3, 6))]
    bad = _p(rng, hosts)
    package = _p(
        rng,
        (
            "postgresql-16-pgvector",
            "libvips42",
            "nginx-module-geoip2",
            "python3.12-venv",
            "chrony=4.5-1",
        ),
    )
    kind = rng.random() < 0.7
    if kind:
        error = f'fatal: [{bad}]: FAILED! => {{"cache_update_time": {rng.randint(1714000000, 1719000000)}, "cache_updated": false, "changed": false, "msg": "No package matching \'{package}\' is available"}}'
        code = 2
    else:
        ip = f"10.{rng.randint(0, 40)}.{rng.randint(0, 255)}.{rng.randint(2, 250)}"
        error = f'fatal: [{bad}]: UNREACHABLE! => {{"changed": false, "msg": "Failed to connect to the host via ssh: ssh: connect to host {ip} port 22: No route to host", "unreachable": true}}'
        code = 4
    task = f"{group} : {_p(rng, ('install packages', 'install extensions', 'configure repository', 'ensure runtime'))}"
    lines = [f"PLAY [{group}] " + "*" * 60, "", "TASK [Gathering Facts] " + "*" * 50]
    lines += [f"ok: [{h}]" for h in hosts if h != bad or kind]
    for t in ("common : apt cache", "common : users", "common : sshd hardening"):
        lines += ["", f"TASK [{t}] " + "*" * 40]
        lines += [f"{_p(rng, ('ok', 'changed'))}: [{h}]" for h in hosts if h != bad or kind]
    if not kind:
        lines.insert(3, error)
    lines += ["", f"TASK [{task}] " + "*" * 40]
    lines += [f"ok: [{h}]" for h in hosts if h != bad]
    if kind:
        lines.append(error)
    lines += ["", "PLAY RECAP " + "*" * 60]
    for h in hosts:
        failed = int(h == bad)
        lines.append(
            f"{h:<28}: ok={rng.randint(5, 20):<4} changed={rng.randint(0, 4):<4} unreachable={int(failed and not kind)}    failed={int(failed and kind)}    skipped={rng.randint(0, 3)}    rescued=0    ignored=0"
        )
    return Failure(
        "ansible",
        f"ansible-playbook -i inventories/{_p(rng, ('staging', 'prod'))}/hosts.ini site.yml --limit {group} --diff",
        code,
        error,
        {"short": "\n".join(lines) + "\n"},
        "PLAY RECAP *****\n"
        + "".join(f"{h:<28}: ok=14   changed=1    unreachable=0    failed=0\n" for h in hosts),
        "the role installs what exists for this distribution"
        if kind
        else "the host is back behind the bastion",
        fix_command=None if kind else f"ssh-keyscan -H {bad} >> ~/.ssh/known_hosts",
    )


def docker_layer(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    step_no, steps = rng.randint(3, 7), rng.randint(8, 12)
    if rng.random() < 0.5:
        pkg = _p(
            rng,
            (
                "libvips-dev42",
                "libpq-dev15",
                "python3.13-distutils",
                "libssl1.1",
                "openjdk-17-jre-headlesss",
            ),
        )
        run = f"apt-get update && apt-get install -y --no-install-recommends {pkg} curl ca-certificates"
        inner = f"E: Unable to locate package {pkg}"
        code = 100
    else:
        scope = f"@{org}/{_p(rng, ('ui-kit', 'tokens', 'eslint-config', 'charts'))}"
        run = "npm ci --omit=dev"
        inner = f"npm error 404 Not Found - GET https://registry.npmjs.org/{scope.replace('/', '%2f')} - Not found"
        code = 1
    t = rng.uniform(2, 40)
    block = [
        f"#{step_no + 5} [build {step_no}/{steps}] RUN {run}",
        f"#{step_no + 5} {t:.3f} {inner}",
        f'#{step_no + 5} ERROR: process "/bin/sh -c {run}" did not complete successfully: exit code: {code}',
    ]

    def progress() -> str:
        return _p(
            rng,
            (
                f"#{step_no + 5} {rng.uniform(0.1, t):.3f} Get:{rng.randint(1, 90)} http://deb.debian.org/debian bookworm/main amd64 {_p(rng, ('libc6', 'libgcc-s1', 'zlib1g', 'libzstd1', 'libffi8', 'libexpat1'))} amd64 {rng.randint(1, 9)}.{rng.randint(0, 40)}-{rng.randint(1, 9)} [{rng.randint(20, 900)} kB]",
                f"#{rng.randint(2, step_no + 4)} sha256:{_hex(rng, 64)} {rng.uniform(1, 60):.2f}MB / {rng.uniform(60, 90):.2f}MB {rng.uniform(0.5, 9):.1f}s",
                f"#{step_no + 5} {rng.uniform(0.1, t):.3f} npm http fetch GET 200 https://registry.npmjs.org/{_p(rng, RUST_CRATES)} {rng.randint(10, 400)}ms",
            ),
        )

    trailer = [
        "------",
        f" > [build {step_no}/{steps}] RUN {run}:",
        f"{t:.3f} {inner}",
        "------",
        "Dockerfile:" + str(step_no * 3),
        "--------------------",
        f"  {step_no * 3} | >>> RUN {run}",
        "--------------------",
        f'ERROR: failed to solve: process "/bin/sh -c {run}" did not complete successfully: exit code: {code}',
    ]
    tag = f"ghcr.io/{org}/{noun}:pr-{rng.randint(100, 2999)}"
    return Failure(
        "docker",
        f"DOCKER_BUILDKIT=1 docker build --progress=plain -f deploy/{noun}.Dockerfile -t {tag} .",
        1,
        inner,
        shapes(
            rng,
            _each(rng, (progress,)),
            block,
            trailer,
            ['#0 building with "default" instance using docker driver'],
            only=("end", "middle"),
        ),
        f"#{steps + 6} naming to {tag} done\n",
        "the build step installs something that exists",
    )


def shellcheck_failure(rng: Random) -> Failure:
    scripts = [
        f"scripts/{_p(rng, ('rotate', 'deploy', 'backup', 'sync', 'seed'))}-{_p(rng, NOUNS)}.sh"
        for _ in range(6)
    ]
    bad = _p(rng, scripts)
    var = f"{_p(rng, ('deploy', 'target', 'bucket', 'retention', 'region'))}_{_p(rng, ('env', 'dir', 'name', 'days', 'host'))}"
    if rng.random() < 0.5:
        error = f"SC2154 (warning): {var} is referenced but not assigned."
        code_line = f'if [ "${var}" = "prod" ]; then'
    else:
        var = var.upper()
        error = (
            f"SC2034 (warning): {var} appears unused. Verify use (or export if used externally)."
        )
        code_line = f"{var}=${{{var}:-3}}"
    block = [
        f"In {bad} line {rng.randint(5, 120)}:",
        code_line,
        f"     ^{'-' * (len(var) + 1)}^ {error}",
        "",
    ]

    def info(n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            d = f"${_p(rng, ('SRC', 'DEST', 'DIR', 'FILE', 'TMP'))}"
            out += [
                f"In {_p(rng, scripts)} line {rng.randint(3, 150)}:",
                f"cp {d}/*.{_p(rng, ('pem', 'json', 'sql', 'gz'))} /srv/{_org(rng)}/",
                f"   ^{'-' * len(d)}^ SC2086 (info): Double quote to prevent globbing and word splitting.",
                "",
            ]
        return out[:n]

    trailer = [
        "For more information:",
        "  https://www.shellcheck.net/wiki/SC2086 -- Double quote to prevent globbing ...",
        f"  https://www.shellcheck.net/wiki/{error[:6]} -- {var} ...",
    ]
    return Failure(
        "shellcheck",
        _p(
            rng,
            (
                "shellcheck scripts/*.sh",
                "shellcheck -x -S info scripts/*.sh",
                "find scripts -name '*.sh' -print0 | xargs -0 shellcheck -x",
            ),
        ),
        1,
        error,
        shapes(
            rng, info, block, trailer, only=("middle", "start", "end", "short"), lines=(40, 200)
        ),
        "",
        f"`{var}` is assigned (or gone) and the other findings are quoted",
    )


# --- web -----------------------------------------------------------------------------------------


def vite_resolve(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    imp = f"@{org}/{_p(rng, ('ui', 'design', 'charts'))}/{_pascal(_p(rng, ('tooltip', 'badge', 'sparkline', 'data_grid')))}"
    page = f"/app/src/pages/{_pascal(noun)}s{_p(rng, ('', 'Overview', 'Detail'))}.tsx"
    error = f'[vite]: Rollup failed to resolve import "{imp}" from "{page}".'
    block = [
        f"x Build failed in {rng.uniform(1, 20):.2f}s",
        "error during build:",
        error,
        "This is most likely unintended because it can break your application at runtime.",
        "If you do want to externalize this module explicitly add it to",
        "`build.rollupOptions.external`",
        "    at viteWarn (file:///app/node_modules/vite/dist/node/chunks/dep-cNe07EU9.js:67485:27)",
        "    at onwarn (file:///app/node_modules/@vitejs/plugin-react/dist/index.mjs:282:9)",
        "    at onRollupWarning (file:///app/node_modules/vite/dist/node/chunks/dep-cNe07EU9.js:67513:5)",
    ]
    head = [
        f"> {org}-web@0.{rng.randint(1, 40)}.0 build",
        "> tsc -b && vite build",
        "",
        "vite v5.2.11 building for production...",
        "transforming...",
    ]
    trailer = [
        "npm error Lifecycle script `build` failed with error:",
        "npm error code 1",
        "npm error path /app",
        "npm error command failed",
        "npm error command sh -c tsc -b && vite build",
    ]
    return Failure(
        "vite",
        _p(
            rng,
            (
                "npm run build",
                "NODE_ENV=production npm run build -- --mode staging",
                "pnpm --filter web build",
            ),
        ),
        1,
        error,
        {
            "short": "\n".join(
                [*head, f"✓ {rng.randint(100, 2000)} modules transformed.", *block, *trailer]
            )
            + "\n"
        },
        f"✓ {rng.randint(100, 2000)} modules transformed.\ndist/index.html  0.{rng.randint(40, 99)} kB\n✓ built in {rng.uniform(2, 20):.2f}s\n",
        f"the import points at the component `@{org}` actually exports",
    )


def esbuild_resolve(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    target = f"./{_p(rng, ('utils', 'lib', 'format'))}/{_kebab(_p(rng, ACTIONS), _p(rng, ATTRS))}"
    file = f"src/{_p(rng, ('widgets', 'views', 'panels'))}/{_pascal(noun)}{_p(rng, ('Chart', 'Table', 'Card'))}.tsx"
    needle = f'Could not resolve "{target}"'
    colour = rng.random() < 0.6
    first = (
        f"{ESC}[31m✘ {ESC}[41;31m[{ESC}[41;97mERROR{ESC}[41;31m]{ESC}[0m {ESC}[1m{needle}{ESC}[0m"
        if colour
        else f"✘ [ERROR] {needle}"
    )
    block = [
        first,
        "",
        f"    {file}:{rng.randint(1, 12)}:{rng.randint(10, 40)}:",
        f'      4 │ import {{ {_camel(_p(rng, ACTIONS))} }} from "{target}";',
        "        ╵                            " + "~" * (len(target) + 2),
        "",
    ]
    return Failure(
        "esbuild",
        _p(
            rng,
            (
                "node scripts/build.mjs --minify",
                f"npx esbuild {file} --bundle --outdir=dist --color=true",
                "npm run bundle --workspace=widgets",
            ),
        ),
        1,
        needle,
        {"short": "\n".join([*block, "1 error"]) + "\n"},
        f"\n  dist/{_pascal(noun)}.js  {rng.randint(20, 300)}.{rng.randint(0, 9)}kb\n\n⚡ Done in {rng.randint(20, 400)}ms\n",
        f"the import path matches the file under `{file.rsplit('/', 1)[0]}`",
        style="ansi" if colour else "plain",
    )


def webpack_missing(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    folder = f"/app/src/{_p(rng, ('widgets', 'screens', 'modules'))}"
    target = f"./{_kebab(noun, _p(rng, ('format', 'helpers', 'constants')))}"
    error = f"Module not found: Error: Can't resolve '{target}' in '{folder}'"
    block = [
        f"ERROR in ./src/{folder.rsplit('/', 1)[-1]}/{_pascal(noun)}Chart.jsx {rng.randint(2, 30)}:0-{rng.randint(30, 60)}",
        error,
        f"resolve '{target}' in '{folder}'",
        f"  using description file: /app/package.json (relative path: ./src/{folder.rsplit('/', 1)[-1]})",
        "    Field 'browser' doesn't contain a valid alias configuration",
        "    using description file: /app/package.json (relative path: ./src/"
        + folder.rsplit("/", 1)[-1]
        + "/"
        + target[2:]
        + ")",
        "      no extension",
        f"        {folder}/{target[2:]} doesn't exist",
        "      .js",
        f"        {folder}/{target[2:]}.js doesn't exist",
        "      .jsx",
        f"        {folder}/{target[2:]}.jsx doesn't exist",
        "      as directory",
        f"        {folder}/{target[2:]} doesn't exist",
    ]

    def asset() -> str:
        return _p(
            rng,
            (
                f"asset {_p(rng, NOUNS)}.{_hex(rng, 8)}.js {rng.uniform(1, 900):.1f} KiB [emitted] [immutable] [minimized] (id hint: vendors)",
                f"orphan modules {rng.uniform(10, 900):.0f} KiB [orphan] {rng.randint(10, 200)} modules",
                f"  ./src/{_p(rng, ('widgets', 'screens', 'hooks'))}/{_pascal(_p(rng, NOUNS))}{_p(rng, ('Chart', 'List', 'Form'))}.jsx {rng.uniform(0.5, 20):.2f} KiB [built] [code generated]",
                f"WARNING in ./src/{_p(rng, ('screens', 'hooks'))}/{_p(rng, NOUNS)}.js {rng.randint(1, 90)}:{rng.randint(1, 30)}-{rng.randint(31, 60)} export '{_camel(_p(rng, ACTIONS))}' (imported as '{_camel(_p(rng, ACTIONS))}') was not found",
            ),
        )

    trailer = [
        "",
        f"webpack 5.91.0 compiled with 1 error and {rng.randint(1, 9)} warnings in {rng.randint(4000, 40000)} ms",
    ]
    return Failure(
        "webpack",
        _p(
            rng,
            (
                "npx webpack --mode production",
                "NODE_OPTIONS=--max-old-space-size=4096 npx webpack --config webpack.prod.js",
                "yarn build:web",
            ),
        ),
        1,
        error,
        shapes(rng, _each(rng, (asset,)), block, trailer, only=("middle", "end", "start")),
        f"webpack 5.91.0 compiled successfully in {rng.randint(4000, 40000)} ms\n",
        f"`{target}` exists again (the helper was renamed)",
    )


def eslint_errors(rng: Random) -> Failure:
    files = [
        f"/app/src/{_p(rng, ('features', 'lib', 'pages'))}/{_p(rng, NOUNS)}/{_camel(_p(rng, ACTIONS), _p(rng, NOUNS))}.ts"
        for _ in range(12)
    ]
    bad = _p(rng, files)
    var = _camel(_p(rng, ATTRS))
    message, rule = _p(
        rng,
        (
            (f"'{var}' is assigned a value but never used", "@typescript-eslint/no-unused-vars"),
            (f"'{var}' is not defined", "no-undef"),
            (
                f"React Hook useEffect has a missing dependency: '{var}'. Either include it or remove the dependency array",
                "react-hooks/exhaustive-deps",
            ),
            (
                f"Promises must be awaited, end with a call to .catch, or end with a call to .then with a rejection handler ({var})",
                "@typescript-eslint/no-floating-promises",
            ),
        ),
    )
    colour = rng.random() < 0.5
    pos = f"{rng.randint(3, 300)}:{rng.randint(1, 40)}"
    if colour:
        line = (
            f"  {ESC}[2m{pos}{ESC}[22m  {ESC}[31merror{ESC}[39m  {message}  {ESC}[2m{rule}{ESC}[22m"
        )
        needle = message
    else:
        line = f"  {pos}  error  {message}  {rule}"
        needle = f"{pos}  error  {message}  {rule}"
    block = ["", f"{ESC}[4m{bad}{ESC}[24m" if colour else bad, line]

    def warnings(n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            out += ["", _p(rng, files)]
            for _ in range(rng.randint(1, 6)):
                w = _p(
                    rng,
                    (
                        "Unexpected console statement  no-console",
                        "Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any",
                        "Forbidden non-null assertion  @typescript-eslint/no-non-null-assertion",
                        "Prefer using an optional chain expression instead, as it's more concise and easier to read  @typescript-eslint/prefer-optional-chain",
                    ),
                )
                out.append(f"  {rng.randint(3, 300)}:{rng.randint(1, 40)}  warning  {w}")
        return out[:n]

    warns = rng.randint(40, 300)
    trailer = ["", f"✖ {warns + 1} problems (1 error, {warns} warnings)", ""]
    return Failure(
        "eslint",
        _p(
            rng,
            (
                "npx eslint src --ext .ts,.tsx",
                "npm run lint -- --max-warnings=-1",
                "pnpm exec eslint . --cache --format stylish",
            ),
        ),
        1,
        needle,
        shapes(rng, warnings, block, trailer, only=("middle", "start", "end")),
        f"\n✖ {warns} problems (0 errors, {warns} warnings)\n",
        f"`{var}` is handled where ESLint pointed",
        style="ansi" if colour else "plain",
    )


def vitest_failure(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    file = f"src/{noun}/{_p(rng, ACTIONS)}.test.ts"
    title = f"{noun} {_p(rng, ('rules', 'planner', 'export'))} > {_p(rng, ('assigns', 'rejects', 'splits', 'rounds'))} {_p(rng, ATTRS).replace('_', ' ')} on {_p(rng, ('Saturday nights', 'bank holidays', 'the first run', 'an empty week'))}"
    colour = rng.random() < 0.5
    error = f"{file} > {title}" if colour else f"FAIL  {file} > {title}"
    shown = f" {ESC}[41m{ESC}[1m FAIL {ESC}[22m{ESC}[49m {error}" if colour else f" {error}"
    ident = f"{_p(rng, 'ABCDEFGHKLMNPRSTVW')}-{rng.randint(10, 99)}"
    block = [
        "",
        "⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯",
        "",
        shown,
        f"AssertionError: expected [ '{ident}' ] to have a length of {rng.randint(2, 4)} but got 1",
        f" ❯ {file}:{rng.randint(10, 200)}:{rng.randint(5, 40)}",
        "",
        "⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯",
        "",
    ]

    def passed() -> str:
        return f" ✓ src/{_p(rng, NOUNS)}/{_p(rng, ACTIONS)}.test.ts ({rng.randint(2, 40)} tests) {rng.randint(3, 400)}ms"

    files, tests = rng.randint(20, 120), rng.randint(200, 900)
    trailer = [
        f" Test Files  1 failed | {files} passed ({files + 1})",
        f"      Tests  1 failed | {tests} passed ({tests + 1})",
        f"   Start at  {rng.randint(8, 18):02d}:{rng.randint(10, 59)}:{rng.randint(10, 59)}",
        f"   Duration  {rng.uniform(2, 60):.2f}s",
    ]
    return Failure(
        "vitest",
        _p(
            rng,
            (
                "npx vitest run",
                f"npx vitest run src/{noun}",
                "TZ=Europe/Lisbon npm test -- --run --reporter=default",
            ),
        ),
        1,
        error,
        shapes(
            rng,
            _each(rng, (passed,)),
            block,
            trailer,
            [" RUN  v1.6.0 /app", ""],
            only=("end", "short"),
        ),
        f" Test Files  {files + 1} passed ({files + 1})\n      Tests  {tests + 1} passed ({tests + 1})\n",
        f"the {noun} code counts the case the test describes",
        style="ansi" if colour else "plain",
    )


def npm_eacces(rng: Random) -> Failure:
    org = _org(rng)
    pkg = f"@{org}/{_p(rng, ('cli', 'deploy-tools', 'codegen'))}"
    error = (
        f"npm error Error: EACCES: permission denied, mkdir '/usr/local/lib/node_modules/@{org}'"
    )
    out = [
        "npm error code EACCES",
        "npm error syscall mkdir",
        f"npm error path /usr/local/lib/node_modules/@{org}",
        "npm error errno -13",
        error,
        f"npm error  [Error: EACCES: permission denied, mkdir '/usr/local/lib/node_modules/@{org}'] {{",
        "npm error   errno: -13,",
        "npm error   code: 'EACCES',",
        "npm error   syscall: 'mkdir',",
        f"npm error   path: '/usr/local/lib/node_modules/@{org}'",
        "npm error }",
        "npm error",
        "npm error The operation was rejected by your operating system.",
        "npm error It is likely you do not have the permissions to access this file as the current user",
        f"npm error A complete log of this run can be found in: /home/dev/.npm/_logs/2026-05-{rng.randint(10, 28)}T09_{rng.randint(10, 59)}_{rng.randint(10, 59)}_{rng.randint(100, 999)}Z-debug-0.log",
    ]
    return Failure(
        "npm",
        f"npm install -g {pkg}@{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}",
        243,
        error,
        {"short": "\n".join(out) + "\n"},
        f"added {rng.randint(20, 200)} packages in {rng.randint(2, 30)}s\n",
        "global installs go to a prefix in the home directory",
        fix_command="npm config set prefix ~/.npm-global && export PATH=~/.npm-global/bin:$PATH",
    )


# --- Python --------------------------------------------------------------------------------------


def _py_pkg(rng: Random) -> tuple[str, str]:
    org = _org(rng)
    return org, f"{org}/{_p(rng, NOUNS)}s"


def pytest_xdist(rng: Random) -> Failure:
    org, pkg = _py_pkg(rng)
    noun = pkg.rsplit("/", 1)[-1][:-1]
    test = f"test_{_p(rng, ACTIONS)}_{_p(rng, ATTRS)}_{_p(rng, ('boundary', 'at_midnight', 'for_new_rows', 'when_missing'))}"
    path = f"tests/{noun}s/test_{_p(rng, ('rules', 'bands', 'import'))}.py"
    hour = rng.randint(18, 23)
    want, got = _p(
        rng, (("night", "day"), ("reduced", "standard"), ("late", "on_time"), ("held", "released"))
    )
    message = f"{noun} at {hour}:00 should be {want}, got {got!r}"
    e_line = f"E       AssertionError: {message}"
    colour = rng.random() < 0.4
    workers = rng.choice((4, 8, 16))
    shown = f"{ESC}[1m{ESC}[31m{e_line}{ESC}[0m" if colour else e_line
    block = [
        "=" * 35 + " FAILURES " + "=" * 35,
        "_" * 28 + f" {test} " + "_" * 28,
        f"[gw{rng.randrange(workers)}] linux -- Python 3.12.3 /workspace/{org}/.venv/bin/python",
        "",
        f"    def {test}():",
        f"        result = {_p(rng, ACTIONS)}_{noun}(at=time({hour}, 0))",
        f'>       assert result.band == "{want}", f"{noun} at {hour}:00 should be {want}, got {{result.band!r}}"',
        shown,
        f"E       assert '{got}' == '{want}'",
        "",
        f"{path}:{rng.randint(20, 300)}: AssertionError",
    ]

    def progress() -> str:
        pct = rng.randint(0, 99)
        t = f"tests/{_p(rng, NOUNS)}s/test_{_p(rng, ('rules', 'api', 'models', 'tasks'))}.py::test_{_p(rng, ACTIONS)}_{_p(rng, ATTRS)}"
        passed = f"{ESC}[32mPASSED{ESC}[0m" if colour else "PASSED"
        return f"[gw{rng.randrange(workers)}] [{pct:3d}%] {passed} {t} "

    total = rng.randint(150, 900)
    summary = f"FAILED {path}::{test} - AssertionError: {message}"
    trailer = [
        "=" * 27 + " short test summary info " + "=" * 27,
        summary,
        "=" * 20
        + f" 1 failed, {total} passed, {rng.randint(0, 9)} skipped in {rng.uniform(5, 90):.2f}s "
        + "=" * 20,
    ]
    head = [
        "=" * 30 + " test session starts " + "=" * 30,
        "platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0",
        f"rootdir: /workspace/{org}",
        "configfile: pyproject.toml",
        "plugins: xdist-3.6.1, anyio-4.4.0, cov-5.0.0",
        f"created: {workers}/{workers} workers",
        f"{workers} workers [{total + 1} items]",
        "",
    ]
    cmd = _p(
        rng,
        (
            f"pytest -n {workers} -v tests/{noun}s",
            f"uv run pytest -n auto -v --color={'yes' if colour else 'no'} tests/",
            f"cd {org} && PYTHONHASHSEED=0 python -m pytest -n {workers} -v -p no:cacheprovider",
        ),
    )
    return Failure(
        "pytest-xdist",
        cmd,
        1,
        e_line,
        shapes(rng, _each(rng, (progress,)), block, trailer, head, only=("end", "short")),
        f"{'=' * 20} {total + 1} passed in {rng.uniform(5, 90):.2f}s {'=' * 20}\n",
        f"the {noun} band boundary is inclusive at {hour}:00",
        style="ansi" if colour else "plain",
    )


def py_chained(rng: Random) -> Failure:
    org, pkg = _py_pkg(rng)
    noun = pkg.rsplit("/", 1)[-1][:-1]
    var = f"{org.upper()}_{_p(rng, ('API_TOKEN', 'GRID_KEY', 'SMTP_PASSWORD', 'S3_BUCKET', 'DSN'))}"
    if rng.random() < 0.5:
        first = [
            "Traceback (most recent call last):",
            f'  File "/workspace/{org}/{org}/config.py", line {rng.randint(20, 90)}, in load',
            f'    value = os.environ["{var}"]',
            "            ~~~~~~~~~~^^^^^^^^^^^^^^^^",
            '  File "<frozen os>", line 714, in __getitem__',
            f"KeyError: '{var}'",
            "",
            "The above exception was the direct cause of the following exception:",
        ]
        last = f"{org}.config.ConfigError: {var} is not set (export it or put it in .env.local)"
        hint = f"`{var}` comes from `.env.local` now"
        fix: str | None = (
            f"cp .env.example .env.local && sed -i 's/^{var}=.*/{var}=dev-local/' .env.local"
        )
    else:
        batch = rng.randint(100, 9999)
        first = [
            "Traceback (most recent call last):",
            f'  File "/workspace/{org}/{org}/store.py", line {rng.randint(40, 200)}, in write_batch',
            "    conn.executemany(INSERT_SQL, rows)",
            "sqlite3.OperationalError: database is locked",
            "",
            "During handling of the above exception, another exception occurred:",
        ]
        last = f"{org}.store.StoreError: could not record {noun} batch {batch}: database is locked"
        hint = "the writer holds one connection and the reader opens the file read-only"
        fix = None
    second = [
        "",
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "<frozen runpy>", line 88, in _run_code',
        f'  File "/workspace/{org}/{org}/cli.py", line {rng.randint(100, 300)}, in <module>',
        "    main()",
        f'  File "/workspace/{org}/{org}/cli.py", line {rng.randint(40, 99)}, in main',
        f"    {_p(rng, ACTIONS)}_{noun}s(args)",
        last,
    ]

    def log() -> str:
        return f"{_stamp(rng)} INFO {org}.{_p(rng, NOUNS)}: {_p(rng, ACTIONS)} {_p(rng, ('started', 'ok', 'queued', 'flushed'))} n={rng.randint(1, 5000)} took={rng.randint(1, 900)}ms"

    cmd = _p(
        rng,
        (
            f"python -m {org}.cli {_p(rng, ACTIONS)}-{noun}s --since 2026-04-01",
            f"{org.upper()}_ENV=dev python -m {org}.cli {_p(rng, ACTIONS)}-{noun}s",
            f"uv run python -m {org}.cli {_p(rng, ACTIONS)}-{noun}s --dry-run 2>&1 | tail -n 200",
        ),
    )
    if "|" in cmd:
        cmd = "set -o pipefail; " + cmd
    return Failure(
        "python",
        cmd,
        1,
        last,
        shapes(rng, _each(rng, (log,)), [*first, *second], only=("end", "middle", "short")),
        f"{_stamp(rng)} INFO {org}.cli: done\n",
        hint,
        fix_command=fix,
        style="chained",
    )


def ruff_lint(rng: Random) -> Failure:
    org, pkg = _py_pkg(rng)
    var = _p(rng, ATTRS)
    path = f"{pkg}/{_p(rng, ('rules', 'bands', 'ingest', 'export'))}.py"
    error = _p(
        rng,
        (
            f"{path}:{rng.randint(5, 300)}:{rng.randint(5, 20)}: F841 Local variable `{var}` is assigned to but never used",
            f"{path}:{rng.randint(5, 300)}:{rng.randint(5, 20)}: F821 Undefined name `{var}_cache`",
            f"{path}:{rng.randint(5, 300)}:{rng.randint(5, 20)}: B006 Do not use mutable data structures for argument defaults in `{_p(rng, ACTIONS)}_{var}`",
        ),
    )
    others = [
        f"{org}/{_p(rng, NOUNS)}s/{_p(rng, ('api', 'models', 'tasks'))}.py:{rng.randint(1, 20)}:1: I001 [*] Import block is un-sorted or un-formatted"
        for _ in range(rng.randint(1, 4))
    ]
    lines = [*others[:1], error, *others[1:]]
    out = (
        "\n".join(
            [
                *lines,
                f"Found {len(lines)} errors.",
                f"[*] {len(others)} fixable with the `--fix` option.",
            ]
        )
        + "\n"
    )
    return Failure(
        "ruff",
        _p(
            rng,
            (
                f"ruff check {org}",
                "uv run ruff check .",
                f"ruff check --output-format=concise {pkg}",
            ),
        ),
        1,
        error,
        {"short": out},
        "All checks passed!\n",
        f"`{var}` is used or removed where ruff pointed",
    )


def numpy_alloc(rng: Random) -> Failure:
    org, _ = _py_pkg(rng)
    rows, cols = rng.randint(40000, 99000), rng.randint(40000, 99000)
    gib = rows * cols * 8 / 2**30
    error = f"numpy.core._exceptions._ArrayMemoryError: Unable to allocate {gib:.1f} GiB for an array with shape ({rows}, {cols}) and data type float64"
    block = [
        "Traceback (most recent call last):",
        f'  File "/workspace/{org}/{org}/analysis/similarity.py", line {rng.randint(40, 200)}, in <module>',
        "    main()",
        f'  File "/workspace/{org}/{org}/analysis/similarity.py", line {rng.randint(20, 39)}, in main',
        '    dist = pairwise_distances(features, metric="cosine", n_jobs=-1)',
        '  File "/workspace/.venv/lib/python3.12/site-packages/sklearn/metrics/pairwise.py", line 2375, in pairwise_distances',
        "    return _parallel_pairwise(X, Y, func, n_jobs, **kwds)",
        error,
    ]

    def log() -> str:
        return f"{_stamp(rng)} [{org}.analysis] loaded chunk {rng.randint(1, 400)} ({rng.randint(1000, 90000)} rows, {rng.uniform(1, 600):.1f} MiB)"

    month = f"2026-0{rng.randint(1, 6)}"
    return Failure(
        "python",
        f"python -m {org}.analysis.similarity --month {month} --features all",
        1,
        error,
        shapes(rng, _each(rng, (log,)), block, only=("end", "short")),
        f"{_stamp(rng)} [{org}.analysis] wrote similarity-{month}.parquet\n",
        "distances are computed per chunk with a nearest-neighbour index instead of one dense matrix",
    )


# --- Go ------------------------------------------------------------------------------------------


def _go_mod(rng: Random) -> tuple[str, str]:
    org = _org(rng)
    return f"github.com/{org}-app/{org}", f"internal/{_p(rng, NOUNS)}s"


def go_vet(rng: Random) -> Failure:
    mod, pkg = _go_mod(rng)
    var = _camel(_p(rng, ATTRS))
    file = f"{pkg}/{_p(rng, ('rules', 'schedule', 'store', 'handler'))}.go"
    pos = f"{file}:{rng.randint(10, 300)}:{rng.randint(2, 40)}"
    error = _p(
        rng,
        (
            f"{pos}: fmt.Sprintf format %d has arg {var} of wrong type float64",
            f"{pos}: the cancel function returned by context.WithTimeout should be called, not discarded, to avoid a context leak",
            f'{pos}: struct field tag `json:"{var},omitempty" db:{var}` not compatible with reflect.StructTag.Get: bad syntax for struct tag value',
            f"{pos}: {_pascal(_p(rng, ACTIONS))} passes lock by value: {mod}/{pkg}.{_pascal(var)}Cache contains sync.Mutex",
        ),
    )
    out = [f"# {mod}/{pkg}", f"# [{mod}/{pkg}]", error]
    return Failure(
        "go-vet",
        _p(
            rng,
            (
                "go vet ./...",
                f"go vet ./{pkg}/...",
                "GOFLAGS=-mod=mod go vet -tags integration ./...",
            ),
        ),
        1,
        error,
        {"short": "\n".join(out) + "\n"},
        "",
        f"`{file}` passes vet",
    )


def go_panic(rng: Random) -> Failure:
    mod, pkg = _go_mod(rng)
    test = f"Test{_pascal(_p(rng, NOUNS))}{_p(rng, ('Builder', 'Planner', 'Rotation'))}_{_pascal(_p(rng, ATTRS))}"
    n = rng.randint(2, 40)
    error = f"panic: runtime error: index out of range [{n}] with length {n} [recovered]"
    block = [
        f"--- FAIL: {test} (0.00s)",
        error,
        f"\tpanic: runtime error: index out of range [{n}] with length {n}",
        "",
        f"goroutine {rng.randint(6, 90)} [running]:",
        f"testing.tRunner.func1.2({{0x{_hex(rng, 6)}, 0xc000{_hex(rng, 6)}}})",
        "\t/usr/local/go/src/testing/testing.go:1631 +0x24a",
        "testing.tRunner.func1()",
        "\t/usr/local/go/src/testing/testing.go:1634 +0x377",
        f"panic({{0x{_hex(rng, 6)}?, 0xc000{_hex(rng, 6)}?}})",
        "\t/usr/local/go/src/runtime/panic.go:770 +0x132",
        f"{mod}/{pkg}.(*Planner).{_pascal(_p(rng, ACTIONS))}(...)",
        f"\t/workspace/{pkg}/planner.go:{rng.randint(20, 300)} +0x{_hex(rng, 3)}",
        f"{mod}/{pkg}.{test}(0xc000{_hex(rng, 6)})",
        f"\t/workspace/{pkg}/planner_test.go:{rng.randint(20, 300)} +0x{_hex(rng, 3)}",
        "exit status 2",
        f"FAIL\t{mod}/{pkg}\t{rng.uniform(0.01, 2):.3f}s",
    ]

    def run(k: int) -> list[str]:
        out: list[str] = []
        while len(out) < k:
            t = f"Test{_pascal(_p(rng, NOUNS))}_{_pascal(_p(rng, ACTIONS))}"
            out += [
                f"=== RUN   {t}",
                f"=== PAUSE {t}",
                f"=== CONT  {t}",
                f"--- PASS: {t} ({rng.uniform(0, 0.2):.2f}s)",
            ]
        return out[:k]

    return Failure(
        "go",
        _p(
            rng,
            (
                f"go test -race -count=1 -v ./{pkg}/...",
                f"cd services/{pkg.split('/')[-1]} && go test -v -run '{test}' ./...",
                "CGO_ENABLED=1 go test -race -v ./...",
            ),
        ),
        1,
        error,
        shapes(rng, run, block, ["FAIL"], only=("end", "middle", "short")),
        f"ok  \t{mod}/{pkg}\t{rng.uniform(0.01, 2):.3f}s\n",
        "the planner stops at the last slot instead of reading one past it",
    )


# --- Rust ----------------------------------------------------------------------------------------


def clippy_lint(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    crate = f"{org}-{_p(rng, ('core', 'solver', 'ingest'))}"
    var = _p(rng, ATTRS)
    ty = f"{_pascal(noun)}{_p(rng, ('Plan', 'Window', 'Batch'))}"
    message, lint = _p(
        rng,
        (
            (
                f"called `unwrap` on `{var}` after checking its variant with `is_some`",
                "unnecessary_unwrap",
            ),
            (f"the loop variable `i` is only used to index `{var}`", "needless_range_loop"),
            (
                f"you should consider adding a `Default` implementation for `{ty}`",
                "new_without_default",
            ),
            (
                f"useless conversion to the same type: `{crate.replace('-', '_')}::{ty}`",
                "useless_conversion",
            ),
        ),
    )
    colour = rng.random() < 0.5
    file = f"crates/{crate}/src/{noun}.rs"
    line = rng.randint(20, 400)
    first = (
        f"{ESC}[1m{ESC}[91merror{ESC}[0m{ESC}[1m: {message}{ESC}[0m"
        if colour
        else f"error: {message}"
    )
    block = [
        first,
        f"  --> {file}:{line}:{rng.randint(5, 30)}",
        "   |",
        f"{line} |         let s = {var}.unwrap();",
        "   |                 ^^^^^^^^^^^^^^^",
        "   |",
        f"   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#{lint}",
        f"   = note: `-D clippy::{lint.replace('_', '-')}` implied by `-D warnings`",
        f"   = help: to override `-D warnings` add `#[allow(clippy::{lint})]`",
        "",
    ]

    def checking() -> str:
        return f"    Checking {_p(rng, RUST_CRATES)} v{rng.randint(0, 3)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"

    trailer = [f"error: could not compile `{crate}` (lib) due to 1 previous error"]
    return Failure(
        "clippy",
        _p(
            rng,
            (
                f"cargo clippy -p {crate} -- -D warnings",
                "cargo clippy --workspace --all-features -- -D warnings",
                f"RUSTFLAGS='-C target-cpu=native' cargo clippy -p {crate} --no-deps -- -D warnings",
            ),
        ),
        101,
        message if colour else f"error: {message}",
        shapes(rng, _each(rng, (checking,)), block, trailer, only=("end", "middle", "short")),
        f"    Checking {crate} v0.{rng.randint(1, 9)}.0 (/workspace/{org}/crates/{crate})\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in {rng.uniform(1, 30):.2f}s\n",
        f"`{noun}.rs` follows the lint",
        style="ansi" if colour else "plain",
    )


def rust_stack_overflow(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    thread = f"{noun}-{_p(rng, ('solver', 'walker', 'worker'))}-{rng.randint(0, 15)}"
    error = f"thread '{thread}' has overflowed its stack"
    binary = f"{noun}-{_p(rng, ('solver', 'replay', 'planner'))}"
    out = [
        f"    Finished `release` profile [optimized] target(s) in {rng.uniform(0.1, 3):.2f}s",
        f"     Running `target/release/{binary} --weeks {rng.randint(4, 52)} --input fixtures/{_p(rng, NOUNS)}-{_p(rng, 'abcd')}.json`",
        *(
            f"[{_stamp(rng)}] INFO {binary}: expanding node depth={d}"
            for d in range(rng.randint(2, 8))
        ),
        error,
        "fatal runtime error: stack overflow",
    ]
    return Failure(
        "rust",
        f"RUST_LOG=info cargo run --release --bin {binary} -- --weeks {rng.randint(4, 52)}",
        134,
        error,
        {"short": "\n".join(out) + "\n"},
        f"[{_stamp(rng)}] INFO {binary}: solved\n",
        "the search walks with an explicit stack instead of recursing",
    )


# --- C++ -----------------------------------------------------------------------------------------


def cmake_package(rng: Random) -> Failure:
    pkg, ver, apt = _p(
        rng,
        (
            ("Eigen3", "3.4", "libeigen3-dev"),
            ("fmt", "10.2", "libfmt-dev"),
            ("spdlog", "1.12", "libspdlog-dev"),
            ("Protobuf", "3.21", "libprotobuf-dev protobuf-compiler"),
            ("GTest", "1.14", "libgtest-dev"),
            ("absl", "20240116", "libabsl-dev"),
            ("OpenCV", "4.6", "libopencv-dev"),
        ),
    )
    error = f'Could not find a package configuration file provided by "{pkg}"'
    line = rng.randint(10, 90)
    block = [
        f"CMake Error at cmake/Dependencies.cmake:{line} (find_package):",
        f"  {error}",
        f"  (requested version {ver}) with any of the following names:",
        "",
        f"    {pkg}Config.cmake",
        f"    {pkg.lower()}-config.cmake",
        "",
        f'  Add the installation prefix of "{pkg}" to CMAKE_PREFIX_PATH or set',
        f'  "{pkg}_DIR" to a directory containing one of the above files.  If "{pkg}"',
        "  provides a separate development package or SDK, be sure it has been",
        "  installed.",
        "Call Stack (most recent call first):",
        f"  CMakeLists.txt:{rng.randint(10, 60)} (include)",
        "",
    ]

    def probe() -> str:
        return _p(
            rng,
            (
                f"-- Looking for {_p(rng, ('pthread_create', 'clock_gettime', 'sys/epoll.h', 'aligned_alloc', 'backtrace'))} - found",
                f"-- Performing Test {_p(rng, ('HAVE_CXX_ATOMICS', 'COMPILER_SUPPORTS_AVX2', 'HAS_FLTO', 'HAVE_STD_FILESYSTEM'))} - Success",
                f"-- Found {_p(rng, ('Threads', 'ZLIB', 'OpenSSL', 'CURL', 'Boost'))}: /usr/lib/x86_64-linux-gnu/lib{_p(rng, ('z', 'ssl', 'curl', 'pthread'))}.so",
            ),
        )

    head = [
        "-- The CXX compiler identification is GNU 13.2.0",
        "-- Detecting CXX compiler ABI info - done",
        "-- Check for working CXX compiler: /usr/bin/c++ - skipped",
    ]
    trailer = ["", "-- Configuring incomplete, errors occurred!"]
    org = _org(rng)
    return Failure(
        "cmake",
        f"cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -D{org.upper()}_WITH_SIM=ON",
        1,
        error,
        shapes(
            rng, _each(rng, (probe,)), block, trailer, head, only=("end", "short"), lines=(25, 70)
        ),
        "-- Configuring done (2.1s)\n-- Generating done (0.1s)\n-- Build files have been written to: /work/build/release\n",
        f"`{pkg}` is installed",
        fix_command=f"sudo apt-get install -y {apt}",
        style="indented",
    )


def ninja_clang(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    target = f"{org}_core"
    src = f"src/{noun}/{_p(rng, ('controller', 'state', 'model', 'codec'))}.cpp"
    member = _camel(_p(rng, ATTRS))
    line = rng.randint(20, 600)
    message = _p(
        rng,
        (
            f"no member named '{member}' in '{org}::{_pascal(noun)}State'",
            f"use of undeclared identifier '{member}'",
            f"no matching function for call to '{_camel(_p(rng, ACTIONS))}'",
            f"cannot initialize a variable of type 'std::uint32_t' with an rvalue of type 'std::optional<{_pascal(noun)}Id>'",
        ),
    )
    error = f"/work/{org}/{src}:{line}:{rng.randint(5, 40)}: error: {message}"
    total = rng.randint(200, 900)
    k = rng.randint(10, total - 10)
    block = [
        f"FAILED: src/CMakeFiles/{target}.dir/{src[4:]}.o ",
        f"/usr/bin/clang++ -D{org.upper()}_WITH_SIM -I/work/{org}/include -O2 -g -std=c++20 -MD -MT src/CMakeFiles/{target}.dir/{src[4:]}.o -c /work/{org}/{src}",
        error,
        f"  {line} |     return state.{member} + trim;",
        "      |            ~~~~~ ^",
        "1 error generated.",
    ]

    def step() -> str:
        return f"[{rng.randint(k, total)}/{total}] Building CXX object src/CMakeFiles/{target}.dir/{_p(rng, NOUNS)}/{_p(rng, ('io', 'math', 'state', 'model', 'codec', 'sched'))}.cpp.o"

    trailer = ["ninja: build stopped: subcommand failed."]
    return Failure(
        "ninja",
        _p(
            rng,
            (
                "cmake --build build/release -j 16",
                "ninja -C build/release",
                f"cmake --build build/release --target {target} -- -k 0",
            ),
        ),
        1,
        error,
        shapes(rng, _each(rng, (step,)), block, trailer, only=("middle", "end", "short")),
        f"[{total}/{total}] Linking CXX executable bin/{org}-sim\n",
        f"the {noun} code uses the member the struct has",
    )


def catch2_failure(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    method = f"{_camel(_p(rng, ('clamp', 'limit', 'round', 'scale')))}"
    value, want = rng.randint(60, 200), rng.randint(10, 59)
    error = f"REQUIRE( controller.{method}({value}.0) == Approx({want}.0) )"
    file = f"/work/{org}/tests/{noun}_controller_test.cpp"
    line = rng.randint(20, 300)
    block = [
        "-" * 79,
        f"{_pascal(noun)} controller {method}s at the configured limit",
        "-" * 79,
        f"{file}:{line}",
        "." * 79,
        "",
        f"{file}:{line + 5}: FAILED:",
        f"  {error}",
        "with expansion:",
        f"  {want + rng.randint(1, 9)}.5 == Approx( {want}.0 )",
        "",
    ]

    def ctest(k: int) -> list[str]:
        return [
            f"{i + 1:>3}/{k + 1} Test #{i + 1}: {_p(rng, NOUNS)}_{_p(rng, ('math', 'io', 'model', 'codec'))}_test {'.' * rng.randint(10, 30)}   Passed    {rng.uniform(0.01, 3):.2f} sec"
            for i in range(k)
        ]

    trailer = [
        "=" * 79,
        f"test cases:  {rng.randint(20, 90)} |  {rng.randint(19, 89)} passed | 1 failed",
        f"assertions: {rng.randint(100, 900)} | {rng.randint(99, 899)} passed | 1 failed",
        "",
        f"{rng.randint(90, 99)}% tests passed, 1 tests failed out of {rng.randint(20, 120)}",
        "",
        "The following tests FAILED:",
        f"\t{rng.randint(1, 99)} - {noun}_controller_test (Failed)",
        "Errors while running CTest",
    ]
    return Failure(
        "ctest",
        _p(
            rng,
            (
                "ctest --test-dir build --output-on-failure",
                f"ctest --test-dir build/release -R {noun} --output-on-failure -j8",
            ),
        ),
        8,
        error,
        shapes(rng, ctest, block, trailer, only=("end", "short"), lines=(40, 140)),
        "100% tests passed, 0 tests failed\n",
        f"`{method}` clamps before scaling",
        style="indented",
    )


def asan_report(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    pid = rng.randint(1000, 99999)
    addr = f"0x60{_hex(rng, 10)}"
    kind = _p(rng, ("heap-buffer-overflow", "heap-use-after-free", "stack-use-after-return"))
    error = f"=={pid}==ERROR: AddressSanitizer: {kind} on address {addr} at pc 0x55{_hex(rng, 10)} bp 0x7ffd{_hex(rng, 8)} sp 0x7ffd{_hex(rng, 8)}"
    fn = f"{org}::{_pascal(noun)}::{_camel(_p(rng, ACTIONS))}_at(double) const"
    src = f"/work/{org}/src/{noun}/{_p(rng, ('controller', 'state', 'model'))}.cpp"
    line = rng.randint(20, 600)
    block = [
        "=" * 65,
        error,
        f"READ of size {rng.choice((4, 8))} at {addr} thread T0",
    ]

    def frames(k: int) -> list[str]:
        out = [
            f"    #{i} 0x55{_hex(rng, 10)} in {_p(rng, (fn, 'main', 'std::vector<double>::operator[](unsigned long) const', f'{org}::Sim::step()', f'{org}::Sim::run(int)'))} {src}:{rng.randint(20, 600)}:{rng.randint(3, 30)}"
            for i in range(min(k, 12))
        ]
        out += [
            "",
            f"{addr} is located 0 bytes after 40-byte region [0x60{_hex(rng, 10)},{addr})",
            "allocated by thread T0 here:",
        ]
        out += ["Shadow bytes around the buggy address:"]
        while len(out) < k:
            out.append(f"  0x0c04{_hex(rng, 8)}: fa fa 00 00 00 00 00 fa fa fa 00 00 00 00 00 fa")
        return out[:k]

    trailer = [f"SUMMARY: AddressSanitizer: {kind} {src}:{line}:18 in {fn}", f"=={pid}==ABORTING"]
    binary = f"build/asan/bin/{org}-sim"
    return Failure(
        "asan",
        f"ASAN_OPTIONS=detect_leaks=0 ./{binary} --scenario scenarios/{noun}-{_p(rng, ('gusts', 'ramp', 'stall'))}.yaml",
        1,
        error,
        shapes(rng, frames, block, trailer, only=("start",), lines=(40, 110)),
        f"[{org}-sim] scenario finished, {rng.randint(100, 9000)} steps\n",
        f"`{fn.split('(')[0]}` checks the index against the table size",
    )


# --- anywhere ------------------------------------------------------------------------------------


def git_merge_conflict(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    ext = _p(rng, ("py", "ts", "go", "rb", "kt", "ex", "cs", "php"))
    files = [
        f"src/{noun}/{_p(rng, ('rules', 'models', 'views', 'schema', 'limits'))}.{ext}"
        for _ in range(4)
    ]
    bad = files[rng.randrange(len(files))]
    branch = _p(
        rng,
        (
            f"release/2026.{rng.randint(4, 9):02d}",
            "origin/main",
            f"origin/feat/{_kebab(noun, _p(rng, ATTRS))}",
        ),
    )
    verb = _p(rng, ("merge", "merge --no-ff", "cherry-pick"))
    error = f"CONFLICT (content): Merge conflict in {bad}"
    out = [f"Auto-merging {f}" for f in dict.fromkeys(files)]
    out += [error, "Automatic merge failed; fix conflicts and then commit the result."]
    if verb == "cherry-pick":
        sha = _hex(rng, 7)
        branch = sha
        out[-1] = f"error: could not apply {sha}... {_p(rng, ACTIONS)} {noun} {_p(rng, ATTRS)}"
        out += [
            "hint: After resolving the conflicts, mark them with",
            'hint: "git add/rm <pathspec>", then run',
            'hint: "git cherry-pick --continue".',
        ]
    return Failure(
        "git",
        f"git {verb} {branch}",
        1,
        error,
        {"short": "\n".join(out) + "\n"},
        "Already up to date.\n"
        if verb != "cherry-pick"
        else "The previous cherry-pick is now empty, possibly due to conflict resolution.\n",
        "the conflict is resolved keeping both rule sets",
        fix_command=f"git checkout --theirs {bad} && git add {bad} && git -c core.editor=true {verb.split()[0]} --continue",
    )


def git_push_rejected(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    branch = f"{_p(rng, ('feat', 'fix', 'ops'))}/{_kebab(noun, _p(rng, ATTRS))}"
    remote = f"github.com:{org}-app/{org}.git"
    why = _p(rng, ("fetch first", "non-fast-forward"))
    error = f"! [rejected]        {branch} -> {branch} ({why})"
    out = [
        f"To {remote}",
        f" {error}",
        f"error: failed to push some refs to '{remote}'",
        "hint: Updates were rejected because the remote contains work that you do not",
        "hint: have locally. This is usually caused by another repository pushing to",
        "hint: the same ref. If you want to integrate the remote changes, use",
        "hint: 'git pull' before pushing again.",
    ]
    return Failure(
        "git",
        f"git push origin {branch}",
        1,
        error,
        {"short": "\n".join(out) + "\n"},
        f"To {remote}\n   {_hex(rng, 7)}..{_hex(rng, 7)}  {branch} -> {branch}\n",
        "rebased on the remote branch first",
        fix_command=f"git pull --rebase origin {branch}",
    )


def disk_full(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    day = f"2026-0{rng.randint(4, 6)}-{rng.randint(10, 28)}"
    kind = rng.randrange(3)
    if kind == 0:
        archive = f"/backups/{org}-{noun}s-{day}.tar.gz"
        error = f"tar: {archive}: Wrote only {rng.choice((2048, 4096, 8192))} of 10240 bytes"
        cmd = f"tar -czf {archive} data/{noun}s uploads/"
        out = [error, "tar: Error is not recoverable: exiting now"]
        code, fix = 2, f"find /backups -name '{org}-*.tar.gz' -mtime +14 -delete"
    elif kind == 1:
        dest = f"/mnt/scratch/{noun}-replay/{_p(rng, ATTRS)}-{day}.parquet"
        error = f"cp: error writing '{dest}': No space left on device"
        cmd = (
            f"cp -r exports/{day}/ /mnt/scratch/{noun}-replay/ && ls -lh /mnt/scratch/{noun}-replay"
        )
        out = [error]
        code, fix = 1, f"rm -rf /mnt/scratch/{noun}-replay/tmp-*"
    else:
        layer = _hex(rng, 64)
        error = f"failed to register layer: write /var/lib/docker/overlay2/{layer}/diff/usr/lib/x86_64-linux-gnu/libLLVM-{rng.randint(14, 18)}.so.1: no space left on device"
        tag = f"{rng.randint(1, 9)}.{rng.randint(0, 20)}"
        cmd = f"docker pull ghcr.io/{org}/{noun}-builder:{tag}"
        out = [f"{tag}: Pulling from {org}/{noun}-builder"]
        out += [
            f"{_hex(rng, 12)}: {_p(rng, ('Pull complete', 'Already exists', 'Extracting'))}"
            for _ in range(rng.randint(4, 12))
        ]
        out.append(error)
        code, fix = 1, "docker system prune -af --volumes"
    return Failure(
        "disk",
        cmd,
        code,
        error,
        {"short": "\n".join(out) + "\n"},
        "",
        "freed space on the volume",
        fix_command=fix,
    )


def permission_error(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    kind = rng.randrange(3)
    if kind == 0:
        release = (
            f"/opt/{org}/releases/2026.0{rng.randint(4, 6)}.{rng.randint(10, 28)}-{_hex(rng, 6)}"
        )
        error = f"mkdir: cannot create directory '{release}': Permission denied"
        cmd = f"./deploy/release.sh --target {release}"
        out = [f"==> building {org}-{noun}", "==> packaging", error, "==> release failed"]
        code, fix = 1, f"sudo chown -R $(whoami): /opt/{org}/releases"
    elif kind == 1:
        tmp = f"/srv/www/{org}/.{_p(rng, ('index', 'app', 'sw'))}.{_p(rng, ('html', 'js'))}.{_hex(rng, 6)}"
        error = f'rsync: [receiver] mkstemp "{tmp}" failed: Permission denied (13)'
        cmd = f"rsync -az --delete dist/ deploy@{noun}.{org}.internal:/srv/www/{org}/"
        out = [
            "sending incremental file list",
            error,
            "",
            f"sent {rng.randint(1000, 90000):,} bytes  received {rng.randint(100, 900)} bytes  {rng.uniform(1000, 90000):,.2f} bytes/sec",
            "rsync error: some files/attrs were not transferred (see previous errors) (code 23) at main.c(1338) [sender=3.2.7]",
        ]
        code, fix = (
            23,
            f"ssh deploy@{noun}.{org}.internal 'sudo chgrp -R www-deploy /srv/www/{org} && sudo chmod -R g+w /srv/www/{org}'",
        )
    else:
        log = f"/var/log/{org}/{noun}-{_p(rng, ('ingest', 'worker', 'api'))}.log"
        error = f"Error: EACCES: permission denied, open '{log}'"
        cmd = f"NODE_ENV=production node dist/{noun}-worker.js --once"
        out = [
            "node:internal/fs/utils:356",
            "    throw err;",
            "    ^",
            "",
            error,
            "    at Object.openSync (node:fs:573:18)",
            f"    at new FileLogger (/app/dist/logger.js:{rng.randint(10, 90)}:{rng.randint(5, 30)})",
            " {",
            "  errno: -13,",
            "  code: 'EACCES',",
            "  syscall: 'open',",
            f"  path: '{log}'",
            "}",
            "",
            "Node.js v20.14.0",
        ]
        code, fix = 1, f"sudo install -d -o $(whoami) /var/log/{org}"
    return Failure(
        "permissions",
        cmd,
        code,
        error,
        {"short": "\n".join(out) + "\n"},
        "done\n",
        "the directory belongs to the deploy user now",
        fix_command=fix,
    )


def wget_forbidden(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    ver = f"{rng.randint(1, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
    url = f"https://downloads.{org}.io/{noun}-firmware/{ver}/{noun}-{ver}.bin"
    stamp = _stamp(rng)
    status = _p(rng, ((403, "Forbidden"), (404, "Not Found"), (401, "Unauthorized")))
    error = f"{stamp} ERROR {status[0]}: {status[1]}."
    host = f"downloads.{org}.io"
    ip = f"104.18.{rng.randint(0, 60)}.{rng.randint(2, 250)}"
    out = [
        f"--{stamp}--  {url}",
        f"Resolving {host} ({host})... {ip}",
        f"Connecting to {host} ({host})|{ip}|:443... connected.",
        f"HTTP request sent, awaiting response... {status[0]} {status[1]}",
        error,
    ]
    var = f"{org.upper()}_DL_TOKEN"
    return Failure(
        "wget",
        f'wget -q --show-progress --header "Authorization: Bearer ${var}" {url} -O /tmp/{noun}.bin',
        8,
        error,
        {"short": "\n".join(out) + "\n"},
        f"/tmp/{noun}.bin    100%[===================>]   {rng.randint(2, 40)}.{rng.randint(0, 9)}M  {rng.randint(5, 60)}.{rng.randint(0, 9)}MB/s    in {rng.uniform(0.2, 4):.1f}s\n",
        f"`{var}` holds a token that can read the firmware bucket",
        fix_command=f"export {var}=$(op read 'op://dev/{org}-downloads/token')",
    )


def httpie_unprocessable(rng: Random) -> Failure:
    noun, attr = _p(rng, NOUNS), _p(rng, ATTRS)
    code = f"{_pascal(noun)[:1]}{rng.randint(1, 30)}"
    value, limit = rng.randint(50, 99) / 5, rng.randint(20, 49) / 5
    detail = f'"detail": "{attr} {value} exceeds the limit of {noun} {code} ({limit})"'
    out = [
        "HTTP/1.1 422 Unprocessable Entity",
        f"content-length: {rng.randint(90, 200)}",
        "content-type: application/json",
        f"date: Tue, {rng.randint(10, 28)} May 2026 09:{rng.randint(10, 59)}:{rng.randint(10, 59)} GMT",
        "server: uvicorn",
        "",
        "{",
        f"    {detail},",
        f'    "field": "{attr}"',
        "}",
        "",
    ]
    return Failure(
        "httpie",
        f"http --check-status POST :8080/api/{noun}s/{code}/{_p(rng, ACTIONS)} {attr}:={value} Authorization:'Bearer $TOKEN'",
        4,
        detail,
        {"short": "\n".join(out)},
        f'HTTP/1.1 201 Created\ncontent-type: application/json\n\n{{\n    "id": {rng.randint(100, 9999)},\n    "status": "accepted"\n}}\n',
        f"the limit check compares like units (the {attr} was read in the wrong unit)",
        style="indented",
    )


def mysql_import(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    db = f"{org}_{_p(rng, ('staging', 'dev', 'qa'))}"
    line = rng.randint(100, 90000)
    if rng.random() < 0.5:
        code = f"{noun[:3].upper()}-{rng.randint(10000, 99999)}"
        error = f"ERROR 1062 (23000) at line {line}: Duplicate entry '{code}' for key '{noun}s.uq_{noun}_code'"
        hint = "the dump is loaded into an empty schema"
        fix: str | None = (
            f"mysql --defaults-extra-file=~/.my.{db}.cnf -e 'DROP DATABASE {db}; CREATE DATABASE {db}'"
        )
    else:
        error = f"ERROR 1146 (42S02) at line {line}: Table '{db}.{noun}_{_p(rng, ('events', 'history', 'audit'))}' doesn't exist"
        hint = "the schema migrations run before the data import"
        fix = f"./bin/migrate --db {db}"
    day = f"2026-0{rng.randint(4, 6)}-{rng.randint(10, 28)}"
    return Failure(
        "mysql",
        f"mysql --defaults-extra-file=~/.my.{db}.cnf {db} < dumps/{noun}s-{day}.sql",
        1,
        error,
        {"short": error + "\n"},
        "",
        hint,
        fix_command=fix,
    )


def pg_restore_role(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    role = f"{org}_{_p(rng, ('ro', 'etl', 'reporting', 'app'))}"
    error = f'pg_restore: error: could not execute query: ERROR:  role "{role}" does not exist'
    block = [error, f"Command was: ALTER TABLE public.{noun}s OWNER TO {role};", ""]

    def verbose() -> str:
        what = _p(rng, ("TABLE", "SEQUENCE", "INDEX", "CONSTRAINT", "TABLE DATA", "FK CONSTRAINT"))
        return f'pg_restore: {_p(rng, ("creating", "processing data for", "executing"))} {what} "public.{_p(rng, NOUNS)}_{_p(rng, ATTRS)}"'

    trailer = ["pg_restore: warning: errors ignored on restore: 1"]
    day = f"2026-0{rng.randint(4, 6)}-{rng.randint(10, 28)}"
    return Failure(
        "pg_restore",
        f"pg_restore --verbose --no-privileges -d postgresql://localhost:5432/{org}_dev backups/{org}-{day}.dump",
        1,
        error,
        shapes(
            rng,
            _each(rng, (verbose,)),
            block,
            trailer,
            ["pg_restore: connecting to database for restore"],
            only=("middle", "start", "end"),
        ),
        "pg_restore: connecting to database for restore\n",
        f"the `{role}` role exists locally",
        fix_command=f"createuser --no-login {role}",
    )


def crash_signal(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    pid = rng.randint(1000, 99999)
    if rng.random() < 0.5:
        binary = f"./build/{org}-{noun}-sim"
        cmd = f"{binary} --scenario scenarios/{noun}-{_p(rng, ('night', 'peak', 'storm'))}.yaml --threads {rng.choice((2, 4, 8))}"
        error = f"bash: line 1: {pid} Segmentation fault      (core dumped) {cmd}"
        out = [
            f"[{org}-sim] loading scenario",
            f"[{org}-sim] {rng.randint(2, 90)} actors, {rng.randint(100, 9000)} steps",
            error,
        ]
        return Failure(
            "segfault",
            cmd,
            139,
            error,
            {"short": "\n".join(out) + "\n"},
            f"[{org}-sim] done\n",
            "the actor table is sized before the worker threads start",
        )
    error = f"[{pid}:0x{_hex(rng, 7)}] {rng.randint(20000, 99999)} ms: Mark-Compact {rng.randint(3900, 4090)}.{rng.randint(0, 9)} ({rng.randint(4100, 4200)}.{rng.randint(0, 9)}) -> {rng.randint(3900, 4090)}.{rng.randint(0, 9)} MB, {rng.randint(900, 3000)}.{rng.randint(0, 9)} / 0.0 ms  (average mu = 0.0{rng.randint(10, 99)}) allocation failure; scavenge might not succeed"
    out = [
        "",
        "<--- Last few GCs --->",
        "",
        error,
        "",
        "<--- JS stacktrace --->",
        "",
        "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory",
        f" 1: 0xb8{_hex(rng, 4)} node::Abort() [node]",
        f" 2: 0xa9{_hex(rng, 4)}  [node]",
        "Aborted (core dumped)",
    ]
    cmd = f"node scripts/rebuild-{noun}-index.mjs --all"
    return Failure(
        "node-oom",
        cmd,
        134,
        error,
        {"short": "\n".join(out) + "\n"},
        "index rebuilt\n",
        "the rebuild streams the rows instead of loading them at once",
    )


# --- more exit codes -----------------------------------------------------------------------------


def pytest_usage(rng: Random) -> Failure:
    _, pkg = _py_pkg(rng)
    noun = pkg.rsplit("/", 1)[-1][:-1]
    missing = f"tests/{noun}s/test_{_p(rng, ACTIONS)}_{_p(rng, ATTRS)}.py"
    error = f"ERROR: file or directory not found: {missing}"
    out = [error, "", f"no tests ran in {rng.uniform(0.01, 0.5):.2f}s"]
    return Failure(
        "pytest",
        f"pytest -q {missing} -p no:randomly",
        4,
        error,
        {"short": "\n".join(out) + "\n"},
        f"{'.' * rng.randint(5, 30)}\n{rng.randint(5, 30)} passed in {rng.uniform(0.5, 9):.2f}s\n",
        "the test module is where the path says (it had been renamed)",
        fix_command=f"git mv tests/{noun}s/test_{noun}.py {missing}",
    )


def pytest_collect(rng: Random) -> Failure:
    org, pkg = _py_pkg(rng)
    noun = pkg.rsplit("/", 1)[-1][:-1]
    module = f"{org}.{noun}s.{_p(rng, ('night_band', 'grace', 'limits', 'windows'))}"
    test = f"tests/{noun}s/test_{_p(rng, ('rules', 'bands', 'export'))}.py"
    error = f"E   ModuleNotFoundError: No module named '{module}'"
    out = [
        "=" * 30 + " test session starts " + "=" * 30,
        f"collected {rng.randint(40, 400)} items / 1 error",
        "",
        "=" * 33 + " ERRORS " + "=" * 33,
        "_" * 20 + f" ERROR collecting {test} " + "_" * 20,
        "ImportError while importing test module '/workspace/" + org + "/" + test + "'.",
        "Hint: make sure your test modules/packages have valid Python names.",
        "Traceback:",
        "/usr/lib/python3.12/importlib/__init__.py:90: in import_module",
        "    return _bootstrap._gcd_import(name[level:], package, level)",
        f"{test}:{rng.randint(3, 12)}: in <module>",
        f"    from {module} import {_p(rng, ACTIONS)}_{noun}",
        error,
        "=" * 27 + " short test summary info " + "=" * 27,
        f"ERROR {test}",
        "!" * 20 + " Interrupted: 1 error during collection " + "!" * 20,
        "=" * 30 + f" 1 error in {rng.uniform(0.5, 4):.2f}s " + "=" * 30,
    ]
    return Failure(
        "pytest",
        _p(rng, (f"pytest {test}", f"python -m pytest -x {test}", f"uv run pytest {test}")),
        2,
        error,
        {"short": "\n".join(out) + "\n"},
        f"{rng.randint(40, 400)} passed in {rng.uniform(1, 30):.2f}s\n",
        f"the import follows the module's new name (`{module}` was split)",
        style="indented",
    )


def bazel_test(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    target = f"//services/{noun}s:{_p(rng, ACTIONS)}_{_p(rng, ('test', 'it', 'unit_test'))}"
    error = f"{target} FAILED in {rng.uniform(0.5, 30):.1f}s"

    def passed() -> str:
        return f"//services/{_p(rng, NOUNS)}s:{_p(rng, ACTIONS)}_test {' ' * rng.randint(4, 30)}PASSED in {rng.uniform(0.1, 20):.1f}s"

    block = [
        f"FAIL: {target} (see /home/dev/.cache/bazel/_bazel_dev/{_hex(rng, 32)}/execroot/_main/bazel-out/k8-fastbuild/testlogs/services/{noun}s/{target.rsplit(':', 1)[1]}/test.log)",
    ]
    n = rng.randint(30, 200)
    trailer = [
        f"INFO: Elapsed time: {rng.uniform(10, 300):.3f}s, Critical Path: {rng.uniform(5, 100):.2f}s",
        f"INFO: {rng.randint(200, 3000)} processes: {rng.randint(10, 900)} internal, {rng.randint(10, 900)} linux-sandbox.",
        "INFO: Build completed, 1 test FAILED, " + str(rng.randint(200, 3000)) + " total actions",
        "",
        error,
        "",
        f"Executed {n} out of {n} tests: {n - 1} tests pass and 1 fails locally.",
        "There were tests whose specified size is too big. Use the --test_verbose_timeout_warnings command line option to see which ones these are.",
    ]
    return Failure(
        "bazel",
        _p(
            rng,
            (
                "bazel test //services/...",
                f"bazel test --config=ci {target}",
                "bazelisk test //... --test_output=errors",
            ),
        ),
        3,
        error,
        shapes(
            rng,
            _each(rng, (passed,)),
            block,
            trailer,
            only=("end", "middle", "short"),
            lines=(40, 220),
        ),
        f"Executed {n} out of {n} tests: {n} tests pass.\n",
        f"`{target}` passes with the corrected fixture",
    )


def eslint_plugin(rng: Random) -> Failure:
    org = _org(rng)
    plugin = f"eslint-plugin-{org}"
    error = f'ESLint couldn\'t find the plugin "{plugin}".'
    out = [
        "",
        "Oops! Something went wrong! :(",
        "",
        "ESLint: 8.57.0",
        "",
        error,
        "",
        '(The package "'
        + plugin
        + '" was not found when loaded as a Node module from the directory "/app".)',
        "",
        "It's likely that the plugin isn't installed correctly. Try reinstalling by running the following:",
        "",
        f"    npm install {plugin}@latest --save-dev",
        "",
        f'The plugin "{plugin}" was referenced from the config file in ".eslintrc.cjs".',
    ]
    return Failure(
        "eslint",
        _p(rng, ("npx eslint src --max-warnings 0", "npm run lint --workspace=web")),
        2,
        error,
        {"short": "\n".join(out) + "\n"},
        "",
        f"the workspace depends on `{plugin}` again",
        fix_command=f"npm install -D {plugin}@workspace:* --workspace=web",
    )


def git_fetch_ref(rng: Random) -> Failure:
    org = _org(rng)
    ref = f"release/2026.{rng.randint(4, 12):02d}"
    error = f"fatal: couldn't find remote ref refs/heads/{ref}"
    return Failure(
        "git",
        f"git fetch origin {ref}:{ref}",
        128,
        error,
        {"short": error + "\n"},
        f"From github.com:{org}-app/{org}\n * [new branch]      {ref} -> {ref}\n",
        "the release branch was pushed by the release manager",
        fix_command=f"gh api repos/{org}-app/{org}/branches --jq '.[].name' | grep release",
    )


def wget_refused(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    host = f"{noun}-mirror.{org}.internal"
    ip = f"10.{rng.randint(0, 60)}.{rng.randint(0, 255)}.{rng.randint(2, 250)}"
    port = rng.choice((8080, 8443, 9000, 8081))
    error = f"Connecting to {host} ({host})|{ip}|:{port}... failed: Connection refused."
    url = f"http://{host}:{port}/snapshots/{noun}s-latest.tar.zst"
    out = [f"--{_stamp(rng)}--  {url}", f"Resolving {host} ({host})... {ip}", error]
    return Failure(
        "wget",
        f"wget -nv {url} -P /tmp/snapshots",
        4,
        error,
        {"short": "\n".join(out) + "\n"},
        f'{_stamp(rng)} URL:{url} [{rng.randint(10, 900)}000000] -> "/tmp/snapshots/{noun}s-latest.tar.zst" [1]\n',
        "the mirror service is back up",
        fix_command=f"ssh {host} 'sudo systemctl restart {noun}-mirror'",
    )


def data_check(rng: Random) -> Failure:
    noun = _p(rng, NOUNS)
    ident = f"{noun[:3].upper()}-{rng.randint(1000, 9999)}"
    n = rng.randint(2, 90)
    month = f"2026-0{rng.randint(1, 6)}"
    error = f"CHECK FAILED negative_{_p(rng, ATTRS)}: {n} rows in {month} (first: {ident})"

    def ok() -> str:
        return f"check {_p(rng, ('not_null', 'unique', 'in_range', 'fresh', 'monotonic'))}_{_p(rng, ATTRS)} .......... ok ({rng.randint(1000, 900000)} rows)"

    colour = rng.random() < 0.4
    shown = f"{ESC}[1;31m{error}{ESC}[0m" if colour else error
    trailer = [f"{rng.randint(10, 80)} checks, 1 failed", "exit status 3 (data quality)"]
    return Failure(
        "data-check",
        f"python scripts/check_{noun}s.py --month {month} --strict",
        3,
        error,
        shapes(
            rng,
            _each(rng, (ok,)),
            [shown],
            trailer,
            only=("middle", "end", "short"),
            lines=(30, 120),
        ),
        f"{rng.randint(10, 80)} checks, 0 failed\n",
        f"the {month} import dropped the sign convention; rows are re-imported",
        fix_command=f"python scripts/reimport_{noun}s.py --month {month}",
        style="ansi" if colour else "plain",
    )


def valgrind_error(rng: Random) -> Failure:
    org, noun = _org(rng), _p(rng, NOUNS)
    pid = rng.randint(1000, 99999)
    fn = f"{org}::{_pascal(noun)}Buffer::{_camel(_p(rng, ACTIONS))}()"
    size = rng.choice((4, 8, 16))
    error = f"=={pid}== Invalid read of size {size}"
    block = [
        error,
        f"=={pid}==    at 0x{_hex(rng, 6)}: {fn} ({noun}_buffer.cpp:{rng.randint(20, 400)})",
        f"=={pid}==    by 0x{_hex(rng, 6)}: main (main.cpp:{rng.randint(10, 90)})",
        f"=={pid}==  Address 0x{_hex(rng, 7)} is 0 bytes after a block of size {rng.randint(2, 64) * 8} alloc'd",
    ]

    def frames(k: int) -> list[str]:
        return [
            f"=={pid}==    by 0x{_hex(rng, 6)}: {_p(rng, (fn, 'operator new(unsigned long)', 'std::vector<float>::_M_realloc_append', f'{org}::Sim::tick()'))} ({_p(rng, ('vg_replace_malloc.c', 'new_allocator.h', 'sim.cpp'))}:{rng.randint(10, 900)})"
            for _ in range(k)
        ]

    trailer = [
        f"=={pid}== ",
        f"=={pid}== HEAP SUMMARY:",
        f"=={pid}==     in use at exit: 0 bytes in 0 blocks",
        f"=={pid}== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)",
    ]
    code = rng.choice((42, 99))
    return Failure(
        "valgrind",
        f"valgrind --error-exitcode={code} --leak-check=no ./build/debug/{org}-{noun}-replay fixtures/{noun}-{_p(rng, 'abc')}.bin",
        code,
        error,
        shapes(
            rng,
            frames,
            block,
            trailer,
            [f"=={pid}== Memcheck, a memory error detector"],
            only=("start", "middle", "short"),
            lines=(20, 80),
        ),
        f"=={pid}== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)\n",
        f"`{fn.split('::')[-1]}` stops at the buffer's size",
    )


# --- registry ------------------------------------------------------------------------------------

Generator = Callable[[Random], Failure]
BY_ECOSYSTEM: dict[str, tuple[Generator, ...]] = {
    "jvm": (
        javac_error,
        junit_failure,
        junit_failure,
        maven_chained,
        kotlin_error,
        jvm_heap,
        bazel_test,
    ),
    "dotnet": (dotnet_build, dotnet_build, dotnet_test, dotnet_test),
    "ruby": (rspec_failure, rspec_failure, rails_migration, bundler_missing),
    "php": (phpunit_failure, phpunit_failure, composer_conflict, php_fatal),
    "swift": (swift_build, swift_build, xcode_test),
    "elixir": (mix_test, mix_test, mix_compile),
    "infra": (
        terraform_error,
        terraform_error,
        helm_failure,
        ansible_failure,
        docker_layer,
        shellcheck_failure,
    ),
    "web": (
        vite_resolve,
        esbuild_resolve,
        webpack_missing,
        eslint_errors,
        vitest_failure,
        vitest_failure,
    ),
    "python": (
        pytest_xdist,
        py_chained,
        py_chained,
        ruff_lint,
        numpy_alloc,
        pytest_usage,
        pytest_collect,
        data_check,
    ),
    "go": (go_vet, go_panic, go_panic, bazel_test),
    "rust": (clippy_lint, clippy_lint, rust_stack_overflow),
    "cpp": (cmake_package, ninja_clang, ninja_clang, catch2_failure, asan_report, valgrind_error),
    "python-real": (
        pytest_xdist,
        pytest_xdist,
        py_chained,
        pytest_collect,
        pytest_usage,
        ruff_lint,
    ),
}
ANYWHERE: tuple[Generator, ...] = (
    git_merge_conflict, git_push_rejected, disk_full, permission_error, wget_forbidden,
    httpie_unprocessable, mysql_import, pg_restore_role, crash_signal, docker_layer, npm_eacces,
    git_fetch_ref, wget_refused, data_check,
)  # fmt: skip
# In a checkout of someone else's library there is nothing to deploy.
ANYWHERE_REAL: tuple[Generator, ...] = (
    git_merge_conflict,
    disk_full,
    permission_error,
    wget_forbidden,
)
EVERY: tuple[Generator, ...] = tuple(
    dict.fromkeys(g for pool in (*BY_ECOSYSTEM.values(), ANYWHERE) for g in pool)
)


def failure_for(ecosystem: str, rng: Random) -> Failure:
    """A failure that fits the task's toolchain; one in four from anywhere."""
    pool = BY_ECOSYSTEM.get(ecosystem, ())
    if not pool or rng.random() < 0.25:
        pool = ANYWHERE_REAL if ecosystem == "python-real" else ANYWHERE
    return pool[rng.randrange(len(pool))](rng)
