"""The error line a developer would quote, across toolchains: one sample output per shape.

The samples are written here in each tool's documented output format (not taken from the
retention corpora). Each names the line that must come first, or the line that must be among
the first three (what the ledger keeps) when a wrapper line rightly comes before it.
"""

from __future__ import annotations

import pytest

from worker.compressor.errorlines import error_lines
from worker.compressor.tool_calls import programs

FIRST = [
    (
        "eslint stylish",
        "npx eslint src",
        "\n/app/src/cart.ts\n  12:7   error  'total' is assigned a value but never used  "
        "no-unused-vars\n  40:1   warning  Unexpected console statement  no-console\n\n"
        "✖ 2 problems (1 error, 1 warning)\n",
        "12:7   error  'total' is assigned a value but never used  no-unused-vars",
    ),
    (
        "ruff concise",
        "ruff check .",
        "app/models.py:14:5: F401 [*] `os` imported but unused\nFound 1 error.\n"
        "[*] 1 fixable with the `--fix` option.\n",
        "app/models.py:14:5: F401 [*] `os` imported but unused",
    ),
    (
        "flake8 without a summary",
        "flake8 pkg",
        "pkg/a.py:3:80: E501 line too long (91 > 79 characters)\n",
        "pkg/a.py:3:80: E501 line too long (91 > 79 characters)",
    ),
    (
        "shellcheck tty",
        "shellcheck deploy.sh",
        "\nIn deploy.sh line 4:\nTARGET=/srv\n^----^ SC2034 (warning): TARGET appears unused. "
        "Verify use (or export if used externally).\n\nFor more information:\n"
        "  https://www.shellcheck.net/wiki/SC2034 -- TARGET appears unused...\n",
        "^----^ SC2034 (warning): TARGET appears unused. Verify use (or export if used externally).",
    ),
    (
        "kotlinc through gradle",
        "./gradlew build",
        "> Task :app:compileKotlin FAILED\n"
        "e: file:///src/app/src/main/kotlin/Pricing.kt:41:17 Unresolved reference 'rate'.\n\n"
        "FAILURE: Build failed with an exception.\n\n* What went wrong:\n"
        "Execution failed for task ':app:compileKotlin'.\n> Compilation error. See log for more "
        "details\n\nBUILD FAILED in 9s\n",
        "e: file:///src/app/src/main/kotlin/Pricing.kt:41:17 Unresolved reference 'rate'.",
    ),
    (
        "rspec",
        "bundle exec rspec",
        "..F\n\nFailures:\n\n  1) Invoice#total adds tax\n     Failure/Error: expect(invoice.total)"
        ".to eq(110)\n\n       expected: 110\n            got: 100\n\n"
        "Finished in 0.02 seconds\n3 examples, 1 failure\n\nFailed examples:\n\n"
        "rspec ./spec/invoice_spec.rb:8 # Invoice#total adds tax\n",
        "Failure/Error: expect(invoice.total).to eq(110)",
    ),
    (
        "phpunit",
        "vendor/bin/phpunit",
        "F.\n\nThere was 1 failure:\n\n1) Tests\\InvoiceTest::testTotal\nFailed asserting that "
        "100 matches expected 110.\n\n/app/tests/InvoiceTest.php:12\n\nFAILURES!\n"
        "Tests: 2, Assertions: 2, Failures: 1.\n",
        "Failed asserting that 100 matches expected 110.",
    ),
    (
        "dotnet test",
        "dotnet test",
        "  Failed Shop.Tests.InvoiceTests.AddsTax [12 ms]\n  Error Message:\n"
        "   Assert.Equal() Failure: Values differ\n\nFailed!  - Failed:     1, Passed:    "
        "9, Skipped:     0, Total:    10\n",
        "Failed Shop.Tests.InvoiceTests.AddsTax [12 ms]",
    ),
    (
        "exunit",
        "mix test",
        "\n  1) test total/1 adds tax (Shop.InvoiceTest)\n     test/invoice_test.exs:8\n"
        "     Assertion with == failed\n     code:  assert total(i) == 110\n\n"
        "Finished in 0.03 seconds\n3 tests, 1 failure\n",
        "1) test total/1 adds tax (Shop.InvoiceTest)",
    ),
    (
        "php fatal error",
        "php artisan invoices:send",
        "PHP Fatal error:  Uncaught Error: Call to undefined function send_all() in "
        "/app/routes/console.php:9\nStack trace:\n#0 {main}\n",
        "PHP Fatal error:  Uncaught Error: Call to undefined function send_all() in "
        "/app/routes/console.php:9",
    ),
    (
        "webpack",
        "npx webpack",
        "ERROR in ./src/app.js 3:0-28\nModule not found: Error: Can't resolve './util' in "
        "'/app/src'\n\nwebpack 5.90.0 compiled with 1 error in 120 ms\n",
        "ERROR in ./src/app.js 3:0-28",
    ),
    (
        "git merge conflict",
        "git merge main",
        "Auto-merging app.py\nCONFLICT (content): Merge conflict in app.py\n"
        "Automatic merge failed; fix conflicts and then commit the result.\n",
        "CONFLICT (content): Merge conflict in app.py",
    ),
    (
        "git push rejected",
        "git push origin main",
        "To github.com:o/r.git\n ! [rejected]        main -> main (fetch first)\n"
        "error: failed to push some refs to 'github.com:o/r.git'\nhint: Updates were rejected\n",
        "! [rejected]        main -> main (fetch first)",
    ),
    (
        "terraform, coloured and boxed",
        "terraform apply",
        "\x1b[31m╷\x1b[0m\n\x1b[31m│\x1b[0m \x1b[1m\x1b[31mError: \x1b[0m\x1b[1mcreating IAM Role "
        "(ci): EntityAlreadyExists\x1b[0m\n\x1b[31m│\x1b[0m\n\x1b[31m╵\x1b[0m\n",
        "Error: creating IAM Role (ci): EntityAlreadyExists",
    ),
    (
        "buildkit step behind its prefix",
        "docker build .",
        "#7 [3/5] RUN npm ci\n#7 4.210 npm error code E404\n#7 4.211 npm error 404 Not Found - "
        'GET https://registry.npmjs.org/@acme%2fui - Not found\n#7 ERROR: process "/bin/sh -c '
        'npm ci" did not complete successfully: exit code: 1\n',
        "npm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fui - Not found",
    ),
    (
        "wget: no known shape, an error word",
        "wget -nv http://mirror.internal/x.tar",
        "Connecting to mirror.internal (mirror.internal)|10.0.0.5|:80... failed: Connection "
        "refused.\n",
        "Connecting to mirror.internal (mirror.internal)|10.0.0.5|:80... failed: Connection "
        "refused.",
    ),
    (
        "bazel",
        "bazel test //...",
        "FAIL: //svc:unit_test (see /root/.cache/bazel/testlogs/svc/unit_test/test.log)\n"
        "INFO: Build completed, 1 test FAILED, 40 total actions\n"
        "//svc:unit_test                                                          FAILED in 2.1s\n",
        "//svc:unit_test                                                          FAILED in 2.1s",
    ),
    (
        "composer: the problem, not its banner",
        "composer update",
        "Your requirements could not be resolved to an installable set of packages.\n\n"
        "  Problem 1\n    - acme/pkg[v2.0.0] require php ^8.3 -> your php version (8.2.1) does not "
        "satisfy that requirement.\n",
        "- acme/pkg[v2.0.0] require php ^8.3 -> your php version (8.2.1) does not satisfy that "
        "requirement.",
    ),
    (
        "an HTTP API's error body",
        "http --check-status POST :8000/orders qty:=0",
        'HTTP/1.1 422 Unprocessable Entity\ncontent-type: application/json\n\n{\n    "detail": '
        '"qty must be at least 1"\n}\n',
        '"detail": "qty must be at least 1"',
    ),
    (
        "a program's own diagnostic, without an error word",
        "cd /srv && tar -czf /backups/a.tgz data",
        "tar: /backups/a.tgz: Wrote only 4096 of 10240 bytes\n"
        "tar: Error is not recoverable: exiting now\n",
        "tar: /backups/a.tgz: Wrote only 4096 of 10240 bytes",
    ),
    (
        "docker compose, a service that is not running",
        "docker compose exec web python manage.py migrate",
        "WARN[0000] /app/docker-compose.yml: the attribute `version` is obsolete, it will be "
        'ignored, please remove it to avoid potential confusion\nservice "web" is not running\n',
        'service "web" is not running',
    ),
    (
        "docker compose, a service it does not know",
        "docker compose exec worker celery status",
        "no such service: worker\n",
        "no such service: worker",
    ),
    (
        "a count alone is quoted when nothing else is",
        "pytest -q",
        "F.\n1 failed, 1 passed in 0.02s\n",
        "1 failed, 1 passed in 0.02s",
    ),
]


@pytest.mark.parametrize(
    ("command", "output", "first"), [c[1:] for c in FIRST], ids=[c[0] for c in FIRST]
)
def test_the_line_a_developer_would_quote_comes_first(
    command: str, output: str, first: str
) -> None:
    found = error_lines(output, programs=programs(command))
    assert found, "no error line found"
    assert found[0].text == first


def test_a_wrapper_line_before_the_error_keeps_it_among_the_first_three() -> None:
    # webpack names the module first and says what is wrong on the next line
    output = (
        "ERROR in ./src/app.js 3:0-28\nModule not found: Error: Can't resolve './util' in "
        "'/app/src'\n"
    )
    texts = [e.text for e in error_lines(output)[:3]]
    assert "Module not found: Error: Can't resolve './util' in '/app/src'" in texts


def test_headings_and_source_lines_are_not_errors() -> None:
    output = (
        "Failures:\n\nError Message:\n+    raise ValueError('x')\n// throw new Error('y')\n"
        "def handle_error(e):\n"
    )
    assert error_lines(output) == []


def test_an_indented_dash_line_is_not_a_diff_line() -> None:
    # a diff's removed line starts in the first column; a list item under a heading does not
    assert error_lines("- cannot remove x\n") == []
    assert [e.text for e in error_lines("  - cannot remove x\n")] == ["- cannot remove x"]


def test_specific_lines_come_before_worded_ones_and_counts_last() -> None:
    output = (
        "Could not reach the cache, building everything\n"
        "src/a.c:3:1: error: expected ';' before '}' token\n"
        "2 errors generated.\n"
    )
    found = error_lines(output)
    assert [e.text for e in found] == [
        "src/a.c:3:1: error: expected ';' before '}' token",
        "Could not reach the cache, building everything",
        "2 errors generated.",
    ]
    assert [e.specific for e in found] == [True, True, False]


@pytest.mark.parametrize(
    ("command", "names"),
    [
        ("cd /x && tar -czf a.tgz data | tee log", ("cd", "tar", "tee")),
        ("FOO=1 sudo /usr/bin/make -j4 test", ("make",)),
        ("find . -name '*.sh' -print0 | xargs -0 shellcheck -x", ("find", "xargs", "shellcheck")),
        ("timeout 60 env A=1 pytest -q; echo done", ("timeout", "env", "pytest", "echo")),
        ("cat <<'EOF' > f\nrm -rf /\nEOF", ("cat",)),
        ("", ()),
    ],
)
def test_programs_of_a_command_line(command: str, names: tuple[str, ...]) -> None:
    assert programs(command) == names
