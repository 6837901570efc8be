"""Files a shell command writes, however it writes them: one rule set for every agent."""

from __future__ import annotations

import pytest

from worker.compressor.paths import shell_written_files

WRITES = [
    ("redirection", "echo x > notes/today.md", ["notes/today.md"]),
    ("append, after a cd", "cd /srv/app && printf 'a\\n' >> .env", [".env"]),
    ("sed in place", "sed -i 's/a/b/g' src/app.py", ["src/app.py"]),
    ("sed, flags joined", "sed -Ei 's/a+/b/' conf/app.ini", ["conf/app.ini"]),
    ("BSD sed's empty suffix", "sed -i '' -e 's/a/b/' Makefile.mk", ["Makefile.mk"]),
    (
        "perl -pi",
        "perl -pi -e 's/count: 5/count: 9/' compose.override.yaml",
        ["compose.override.yaml"],
    ),
    ("perl -i -pe", "perl -i -pe 's/x/y/' docs/releases/next.txt", ["docs/releases/next.txt"]),
    (
        "tee, quoted path with a space",
        "tee 'docs/On-call handover.md' >/dev/null <<'EOF'\nx\nEOF",
        ["docs/On-call handover.md"],
    ),
    (
        "cat into a file from a heredoc",
        'cat > "docs/2026-05 rate limits.md" <<EOF\n# x\nEOF',
        ["docs/2026-05 rate limits.md"],
    ),
    ("cp", "cp -r 'a b.md' 'docs/a b.md' && git add 'docs/a b.md'", ["docs/a b.md"]),
    ("mv", "mv build/app.js dist/app.js", ["dist/app.js"]),
    (
        "git mv to a dotfile",
        "git mv pre-commit-config.yaml .pre-commit-config.yaml",
        [".pre-commit-config.yaml"],
    ),
    ("touch", "touch src/__init__.py tests/__init__.py", ["src/__init__.py", "tests/__init__.py"]),
    ("an absolute path", "echo x > /tmp/out.txt", ["/tmp/out.txt"]),
    (
        "a heredoc into an absolute path",
        "cat > /testbed/reproduce.py <<'EOF'\nimport app\nEOF",
        ["/testbed/reproduce.py"],
    ),
    ("a dot-slash path", "sed -i 's/a/b/' ./run.sh", ["./run.sh"]),
    (
        "SWE-agent's editor, its file text quoted over several lines",
        "str_replace_editor create /testbed/reproduce.py --file_text 'import sys\n"
        "print('\"'\"'ok'\"'\"')\n'",
        ["/testbed/reproduce.py"],
    ),
    (
        "SWE-agent's editor replacing",
        "str_replace_editor str_replace /testbed/a.py --old_str 'x = 1' --new_str 'x = 2'",
        ["/testbed/a.py"],
    ),
    ("SWE-agent's create", "cd /testbed && create reproduce_bug.py", ["reproduce_bug.py"]),
    (
        "node through a name",
        "node <<'JS'\nconst fs = require('node:fs');\nconst file = \"src/views/show.html.heex\";\n"
        "fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('a', 'b'));\nJS",
        ["src/views/show.html.heex"],
    ),
    (
        "node directly",
        "node -e \"require('fs').writeFileSync('out/report.json', '{}')\"",
        ["out/report.json"],
    ),
    (
        "python through a Path name",
        "python3 - <<'PY'\nfrom pathlib import Path\ntarget = Path('docs/a b.md')\n"
        "target.write_text(target.read_text().replace('x', 'y'))\nPY",
        ["docs/a b.md"],
    ),
    (
        "python open through a name",
        "python3 - <<'PY'\nout = 'reports/weekly.csv'\nwith open(out, 'w') as f:\n    f.write('a')\nPY",
        ["reports/weekly.csv"],
    ),
]

READS = [
    ("sed printing", "sed -n '1,20p' src/app.py"),
    ("perl reading", "perl -ne 'print if /x/' src/app.py"),
    ("grep to nowhere", "grep -rn TODO src > /dev/null"),
    ("cat", "cat 'docs/On-call handover.md'"),
    (
        "python reading through a name",
        "python3 - <<'PY'\np = 'data/in.csv'\nprint(open(p).read())\nPY",
    ),
    ("a heredoc's body is data", "cat <<'EOF'\necho x > not/written.txt\nEOF"),
    ("git, not mv", "git add src/app.py && git commit -m 'mv a b'"),
    ("SWE-agent's editor viewing", "str_replace_editor view /testbed/a.py --view_range 1 20"),
    ("create as another program's subcommand", "kubectl create -f deploy/web.yaml"),
]


@pytest.mark.parametrize(
    ("command", "written"), [c[1:] for c in WRITES], ids=[c[0] for c in WRITES]
)
def test_files_a_command_writes(command: str, written: list[str]) -> None:
    assert shell_written_files(command) == written


@pytest.mark.parametrize("command", [c[1] for c in READS], ids=[c[0] for c in READS])
def test_commands_that_write_nothing(command: str) -> None:
    assert shell_written_files(command) == []
