"""The held-out corpus's content: a ``Content`` (see ``corpus.py``) built only from the held-out
modules (``heldout_failures``, ``heldout_synth``, ``heldout_texts``, ``heldout_chat``).

The corpus machinery (sizing, placing plants at depths, rendering, checking needles) is shared
with the dev corpus; everything said, run, printed or edited comes from here. It was written
without looking at the compressor's rules, so its scores say how those rules do on text they
were not tuned on.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from random import Random

from bench.retention import heldout_chat as hc
from bench.retention import heldout_failures as hf
from bench.retention import heldout_synth as hs
from bench.retention import heldout_texts as ht
from bench.retention import heldout_updates
from bench.retention.events import Act, Edit, Event, Read, Say, Shell, Turn, Write
from bench.retention.filler import RealTask
from bench.retention.plants import Artifact, Plant, Visible, fresh
from bench.retention.synth import Task

Taken = Callable[[str], bool]

# How likely each placement of the error is picked first (then the others, until the agent's
# own transcript shows the error line).
PLACEMENT_WEIGHTS = {"middle": 4, "end": 3, "start": 2, "short": 1}


# --- failures ------------------------------------------------------------------------------------


def failure_plant(
    rng: Random,
    *,
    ecosystem: str,
    lang: str,
    is_open: bool,
    cwd: str,
    visible: Visible,
    taken: Taken,
    fix_files: Sequence[tuple[str, str]],
    file_tools: bool,
) -> Plant:
    """A failing command of the task's toolchain; fixed and re-run later unless ``is_open``."""
    for _ in range(300):
        failure = hf.failure_for(ecosystem, rng)
        if taken(failure.command) or taken(failure.needle):
            continue
        picked = _failing_act(rng, failure, lang=lang, cwd=cwd, visible=visible)
        if picked is None:
            continue
        act, placement = picked
        shell = act.events[0]
        assert isinstance(shell, Shell)
        code = failure.exit_code
        artifacts = [
            Artifact(
                "failing_command",
                failure.command,
                {"exit_code": code, "error_line": failure.needle, "resolved": not is_open},
            ),
            Artifact("exit_code", str(code), {"command": failure.command, "exit_code": code}),
            Artifact(
                "open_error" if is_open else "error_line",
                failure.needle,
                {
                    "command": failure.command,
                    "exit_code": code,
                    "toolchain": failure.toolchain,
                    "shape": placement,
                    "style": failure.style,
                    "output_lines": shell.output.count("\n"),
                },
            ),
        ]
        plant = Plant("open_failure" if is_open else "failure", [act], artifacts)
        if is_open:
            plant.blocked_note = True
        else:
            plant.followup = _fix_turns(
                rng, failure, lang=lang, cwd=cwd, fix_files=fix_files, file_tools=file_tools
            )
        return plant
    raise RuntimeError(f"no fresh held-out failure for {ecosystem}")


def _failing_act(
    rng: Random, failure: hf.Failure, *, lang: str, cwd: str, visible: Visible
) -> tuple[Act, str] | None:
    available = [p for p in hf.PLACEMENTS if p in failure.outputs]
    first = rng.choices(available, weights=[PLACEMENT_WEIGHTS[p] for p in available])[0]
    thought = rng.choice(ht.THOUGHTS_FAIL[lang]) or None
    for placement in [first, *(p for p in available if p != first)]:
        shell = Shell(failure.command, failure.outputs[placement], failure.exit_code, cwd=cwd)
        act = Act((shell,), thought)
        if visible(act, [failure.command, failure.needle]):
            return act, placement
    return None


def _fix_turns(
    rng: Random,
    failure: hf.Failure,
    *,
    lang: str,
    cwd: str,
    fix_files: Sequence[tuple[str, str]],
    file_tools: bool,
) -> list[Turn]:
    thought = rng.choice(ht.THOUGHTS_FIXED[lang]).format(hint=failure.fix_hint)
    rerun = Act((Shell(failure.command, failure.success_output, 0, cwd=cwd),))
    if failure.fix_command:
        return [Act((Shell(failure.fix_command, "", 0, cwd=cwd),), thought), rerun]
    if not fix_files:
        return [Act(rerun.events, thought)]
    path, content = fix_files[rng.randrange(len(fix_files))]
    old, new = hs.tweak(path, content, rng)
    full = path if path.startswith("/") else f"{cwd}/{path}"
    fix: Event = (
        Edit(full, old, new)
        if file_tools
        else Shell(hs.shell_edit(full, old, new, rng), "", 0, cwd=cwd)
    )
    return [Act((fix,), thought), rerun]


_SHOWN = re.compile(r"\A(?:cat|head -n \d+|sed -n '1,80p') (\S+)\Z")


def task_files(task: Task) -> list[tuple[str, str]]:
    """(path, content) a fix may touch: files the task read or wrote, whole."""
    out: list[tuple[str, str]] = []
    for step in task.steps:
        for turn in step:
            if not isinstance(turn, Act):
                continue
            for event in turn.events:
                if isinstance(event, Read | Write) and event.content.count("\n") > 2:
                    out.append((event.path, event.content))
                elif isinstance(event, Shell) and event.exit_code == 0:
                    m = _SHOWN.match(event.command)
                    if m and event.output.count("\n") > 2:
                        out.append((m.group(1).strip("'"), event.output))
    return out[:12]


# --- files ---------------------------------------------------------------------------------------

_CONTENT: dict[str, Callable[[Random], str]] = {
    ".java": lambda r: (
        f"package org.harborline.berths.api.v2;\n\nfinal class Limits {{\n    static final int MAX_DRAFT_CM = {r.randint(900, 1600)};\n}}\n"
    ),
    ".kt": lambda r: (
        f"package org.tillage.plots\n\nconst val MAX_PLOTS_PER_FARM = {r.randint(20, 400)}\n"
    ),
    ".kts": lambda r: (
        f'plugins {{\n    java\n    id("com.diffplug.spotless")\n}}\n\njava.toolchain.languageVersion.set(JavaLanguageVersion.of({r.choice((17, 21))}))\n'
    ),
    ".cs": lambda r: (
        f"namespace Wardbook.Domain.Dosing;\n\npublic static partial class DoseCalculator\n{{\n    public const double PediatricMaxMgPerKg = {r.randint(10, 40)}.0;\n}}\n"
    ),
    ".json": lambda r: (
        json.dumps(
            {
                "version": f"1.{r.randint(0, 30)}.0",
                "retries": r.randint(1, 6),
                "region": r.choice(("eu-west-1", "eu-central-1")),
            },
            indent=2,
        )
        + "\n"
    ),
    ".yml": lambda r: (
        f'pt-PT:\n  lockers:\n    slot_taken: "Cacifo ocupado"\n    retry_in: "Tente de novo dentro de {r.randint(2, 30)} minutos"\n'
    ),
    ".yaml": lambda r: (
        f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deployment.yaml\n  - service.yaml\nreplicas:\n  - name: api\n    count: {r.randint(2, 8)}\n"
    ),
    ".rb": lambda r: (
        f"class AddBayCodeToLockers < ActiveRecord::Migration[7.1]\n  def change\n    add_column :lockers, :bay_code, :string, limit: {r.randint(8, 32)}\n  end\nend\n"
    ),
    ".erb": lambda r: (
        f'<li class="slot slot--<%= slot.size %>" data-slot-id="<%= slot.id %>">\n  <%= slot.code %> <small><%= t(".free", count: {r.randint(1, 9)}) %></small>\n</li>\n'
    ),
    ".php": lambda r: (
        f"<?php\n\nreturn [\n    'night_band' => 'A faixa noturna começa às :hour.',\n    'max_retries' => {r.randint(2, 9)},\n];\n"
    ),
    ".swift": lambda r: (
        f"import Foundation\n\nextension Planner {{\n    static let tideMarginCentimeters = {r.randint(20, 90)}\n}}\n"
    ),
    ".ex": lambda r: (
        f'defmodule Lockerbay.LockersFixtures do\n  def slot_fixture(attrs \\\\ %{{}}) do\n    Enum.into(attrs, %{{code: "B{r.randint(1, 99)}", size: :m}})\n  end\nend\n'
    ),
    ".exs": lambda r: (
        f"import Config\n\nconfig :lockerbay, Lockerbay.Repo, pool_size: {r.randint(5, 40)}\n"
    ),
    ".heex": lambda r: (
        f'<div id="bay" phx-hook="SlotGrid" data-columns="{r.randint(4, 12)}">\n  <.slot :for={{slot <- @slots}} slot={{slot}} />\n</div>\n'
    ),
    ".tf": lambda r: (
        f'variable "backup_retention_days" {{\n  type    = number\n  default = {r.randint(3, 35)}\n}}\n'
    ),
    ".tpl": lambda r: (
        '{{- define "berths-api.labels" -}}\napp.kubernetes.io/name: {{ .Chart.Name }}\napp.kubernetes.io/version: {{ .Chart.AppVersion | quote }}\n{{- end }}\n'
    ),
    ".j2": lambda r: (
        f"[pgbouncer]\npool_mode = transaction\nmax_client_conn = {r.randint(100, 2000)}\ndefault_pool_size = {r.randint(10, 80)}\n"
    ),
    ".conf": lambda r: (
        f"server {{\n    listen 80;\n    client_max_body_size {r.randint(2, 64)}m;\n    location / {{ proxy_pass http://app:8080; }}\n}}\n"
    ),
    ".tsx": lambda r: (
        f"export default function ResetPage() {{\n  return <ResetForm minLength={{{r.randint(8, 16)}}} />;\n}}\n"
    ),
    ".ts": lambda r: (
        f'export const SLOT_POLL_MS = {r.randint(2, 30)}_000;\n\nexport function useSlot(id: string) {{\n  return useQuery({{ queryKey: ["slot", id], refetchInterval: SLOT_POLL_MS }});\n}}\n'
    ),
    ".mts": lambda r: (
        f'import {{ defineConfig }} from "vite";\n\nexport default defineConfig({{\n  server: {{ port: {r.randint(3000, 5999)} }},\n}});\n'
    ),
    ".py": lambda r: (
        f'"""Night band limits."""\n\nNIGHT_STARTS_AT = {r.randint(20, 23)}\nNIGHT_ENDS_AT = {r.randint(5, 8)}\n'
    ),
    ".go": lambda r: (
        f"package rota\n\n// MinWeekendCover is how many people a ward needs on Saturday and Sunday nights.\nconst MinWeekendCover = {r.randint(2, 5)}\n"
    ),
    ".rs": lambda r: (
        f"pub const MAX_ITERATIONS: usize = {r.randint(1000, 90000)};\n\npub fn solve() -> anyhow::Result<()> {{\n    Ok(())\n}}\n"
    ),
    ".toml": lambda r: (
        f'[toolchain]\nchannel = "1.{r.randint(74, 80)}.0"\ncomponents = ["clippy", "rustfmt"]\n'
    ),
    ".cpp": lambda r: (
        f'#include "turbine/blade/pitch_controller.hpp"\n\nnamespace turbine {{\nconstexpr double kFeatherDeg = {r.randint(80, 95)}.0;\n}}\n'
    ),
    ".hpp": lambda r: (
        f"#pragma once\n\nnamespace turbine {{\nstruct BladeState {{\n    double pitch_deg = {r.randint(0, 9)}.0;\n    double yaw_offset = 0.0;\n}};\n}}\n"
    ),
    ".md": lambda r: (
        f"# Decision\n\nStatus: accepted ({r.randint(2024, 2026)})\n\nWe keep jobs in a Postgres table and poll with SKIP LOCKED.\n"
    ),
    ".sql": lambda r: (
        f"ALTER TABLE berths ADD COLUMN draft_limit_cm integer NOT NULL DEFAULT {r.randint(900, 1600)};\n"
    ),
    ".csv": lambda r: (
        "meter_id,read_at,kwh\n"
        + "".join(
            f"MTR-{r.randint(1000, 9999)},2026-04-{r.randint(10, 28)}T00:00:00Z,{r.uniform(0, 40):.2f}\n"
            for _ in range(4)
        )
    ),
    ".ftl": lambda r: (
        f"checkout-total = Total: {{ $amount }}\ncheckout-retry = Tente novamente dentro de {r.randint(2, 30)} minutos\n"
    ),
    ".rst": lambda r: (
        f"Fixed the UTC offset of naive datetimes parsed from ISO strings (:issue:`{r.randint(10000, 30000)}`).\n"
    ),
    ".txt": lambda r: (
        f"Next release\n============\n\n* Parsing of offsets like +05:45 no longer drops the minutes ({r.randint(100, 999)}).\n"
    ),
    ".props": lambda r: (
        f'<Project>\n  <ItemGroup>\n    <PackageVersion Include="Npgsql" Version="8.0.{r.randint(1, 5)}" />\n  </ItemGroup>\n</Project>\n'
    ),
    ".cmake": lambda r: (
        f"find_package(Eigen3 3.4 REQUIRED NO_MODULE)\nset(TURBINE_MAX_THREADS {r.randint(2, 64)})\n"
    ),
    ".golden": lambda r: "".join(
        f"sat night: N-{r.randint(10, 99)} N-{r.randint(10, 99)}\n" for _ in range(3)
    ),
    ".snap": lambda r: (
        f"---\nsource: crates/rostra-core/tests/solve.rs\nexpression: plan\n---\nweeks: 12\nunfilled: {r.randint(0, 9)}\n"
    ),
}


_BY_NAME: dict[str, Callable[[Random], str]] = {
    "CODEOWNERS": lambda r: (
        f"* @{r.choice(('harborline', 'meterly', 'wardbook'))}/platform\n/infra/ @platform-oncall\n/db/migrations/ @dba-team @bruno\n"
    ),
    ".tool-versions": lambda r: (
        f"nodejs 18.{r.randint(16, 20)}.0\npython 3.12.{r.randint(1, 4)}\nterraform 1.5.7\n"
    ),
    ".env.example": lambda r: (
        f"DATABASE_URL=postgres://app:app@localhost:5432/app\nQUEUE_POLL_MS={r.randint(1, 9) * 500}\nSENTRY_DSN=\n"
    ),
    "renovate.json5": lambda r: (
        f'{{\n  extends: ["config:recommended"],\n  schedule: ["before 6am on monday"],\n  prConcurrentLimit: {r.randint(2, 8)},\n}}\n'
    ),
    ".gitlab-ci.yml": lambda r: (
        f"stages: [lint, test, deploy]\n\ntest:\n  stage: test\n  image: python:3.12\n  parallel: {r.randint(2, 6)}\n  script: [make test]\n"
    ),
    "Dockerfile.worker": lambda r: (
        f'FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nRUN pip install --no-cache-dir .\nENV WORKER_CONCURRENCY={r.randint(2, 16)}\nCMD ["python", "-m", "worker"]\n'
    ),
    ".pre-commit-config.yaml": lambda r: (
        f"repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.{r.randint(4, 6)}.{r.randint(0, 9)}\n    hooks:\n      - id: ruff\n      - id: ruff-format\n"
    ),
    "devcontainer.json": lambda r: (
        f'{{\n  "image": "mcr.microsoft.com/devcontainers/base:bookworm",\n  "forwardPorts": [{r.randint(3000, 9000)}]\n}}\n'
    ),
    "Package.resolved": lambda r: (
        f'{{\n  "pins": [\n    {{ "identity": "swift-collections", "state": {{ "version": "1.1.{r.randint(0, 4)}" }} }}\n  ],\n  "version": 2\n}}\n'
    ),
    "Localizable.xcstrings": lambda r: (
        f'{{\n  "sourceLanguage": "en",\n  "strings": {{ "berth.full": {{ "comment": "shown when all {r.randint(4, 30)} berths are taken" }} }}\n}}\n'
    ),
}


def sample_content(path: str, rng: Random) -> str:
    name = path.rsplit("/", 1)[-1]
    if name in _BY_NAME:
        return _BY_NAME[name](rng)
    for ext, make in _CONTENT.items():
        if name.endswith(ext):
            return make(rng)
    return f"# {name}\nOWNER=platform\nRETRIES={rng.randint(1, 9)}\n"


def _sed_escape(text: str) -> str:
    out = text.replace("\\", "\\\\")
    for c in "/&.*[]^$":
        out = out.replace(c, "\\" + c)
    return out


def _moved_from(rel: str) -> str:
    """Where a moved or copied file came from: the repository root, or an older name."""
    base = rel.rsplit("/", 1)[-1]
    if "/" in rel:
        return base
    return base.lstrip(".") if base.startswith(".") else f"old-{base}"


def _shell_edits(rel: str, old: str, new: str, content: str) -> dict[str, str]:
    """Every shell way of writing ``rel`` (relative to the task root): via -> command."""
    q = shlex.quote(rel)
    source = shlex.quote(_moved_from(rel))
    folder = shlex.quote(rel.rsplit("/", 1)[0]) if "/" in rel else "."
    js = json.dumps
    added = "".join(f"+{line}\n" for line in content.rstrip().split("\n"))
    out = {
        "sed": f"sed -i 's/{_sed_escape(old.strip())}/{_sed_escape(new.strip())}/' {q}",
        "heredoc": f"mkdir -p {folder} && cat > {q} <<'EOF'\n{content.rstrip()}\nEOF",
        "tee": f"tee {q} >/dev/null <<'EOF'\n{content.rstrip()}\nEOF",
        "python": (
            "python3 - <<'PY'\nfrom pathlib import Path\n"
            f"target = Path({rel!r})\ntext = target.read_text(encoding='utf-8')\n"
            f"target.write_text(text.replace({old!r}, {new!r}), encoding='utf-8')\n"
            "print('rewrote', target)\nPY"
        ),
        "node": (
            "node <<'JS'\nconst fs = require('node:fs');\n"
            f"const file = {js(rel)};\n"
            f"fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace({js(old)}, {js(new)}));\nJS"
        ),
        "apply_patch": (
            f"apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n"
            "*** End Patch\nPATCH"
        ),
        "apply_patch_add": (
            f"apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: {rel}\n{added}*** End Patch\nPATCH"
        ),
        "git_mv": f"git mv {source} {q}",
        "cp": f"cp {source} {q} && git add {q}",
    }
    if not any(c in old + new for c in "$@/\\'"):
        script = "s/" + re.escape(old.strip()) + "/" + new.strip() + "/"
        out["perl"] = f"perl -pi -e {shlex.quote(script)} {q}"
    return out


_SHELL_OUTPUT = {
    "python": "rewrote {rel}\n",
    "apply_patch": "Success. Updated the following files:\nM {rel}\n",
    "apply_patch_add": "Success. Updated the following files:\nA {rel}\n",
}


def file_edited_plant(
    rng: Random,
    *,
    lang: str,
    root: str,
    ecosystem: str,
    used: set[str],
    taken: Taken,
    file_tools: bool,
) -> Plant:
    pool = ht.EDITED_PATHS.get(ecosystem, ()) + ht.EDITED_PATHS["any"]
    if not [p for p in pool if p not in used and not taken(p)]:
        pool = tuple(p for paths in ht.EDITED_PATHS.values() for p in paths)
    rel = fresh(rng, pool, used, taken)
    content = sample_content(rel, rng)
    old, new = hs.tweak(rel, content, rng)
    shell = _shell_edits(rel, old, new, content)
    options = list(shell)
    if file_tools:
        options += ["write", "edit", "edit", "write", "edit"]
    via = rng.choice(options)
    full = f"{root}/{rel}"
    event: Event
    if via == "write":
        event = Write(full, content)
    elif via == "edit":
        event = Edit(full, old, new)
    else:
        event = Shell(shell[via], _SHELL_OUTPUT.get(via, "").format(rel=rel), 0, cwd=root)
    thought = rng.choice(ht.EDIT_THOUGHTS[lang]) or None
    return Plant(
        "file_edited", [Act((event,), thought)], [Artifact("file_edited", rel, {"via": via})]
    )


def file_named_plant(
    rng: Random, *, lang: str, root: str, used: set[str], taken: Taken, file_tools: bool
) -> Plant:
    rel = fresh(rng, ht.NAMED_PATHS, used, taken)
    message = rng.choice(ht.FILE_NAMED_FRAMES[lang]).format(path=rel)
    turns: list[Turn] = [Say("user", message)]
    read = rng.random() < 0.55
    if read:
        content = sample_content(rel, rng)
        q = shlex.quote(rel)
        event: Event = (
            Read(f"{root}/{rel}", content)
            if file_tools
            else Shell(rng.choice((f"cat {q}", f"sed -n '1,120p' {q}")), content, 0, cwd=root)
        )
        turns.append(Act((event,), rng.choice(ht.READ_NOTES[lang])))
    else:
        turns.append(Say("assistant", rng.choice(ht.ACKS[lang])))
    return Plant("file_named", turns, [Artifact("file_named", rel, {"read_by_agent": read})])


# --- what people say -------------------------------------------------------------------------------


def constraint_plant(
    rng: Random,
    *,
    lang: str,
    used: set[str],
    taken: Taken,
    pool: Sequence[str],
    frames: Sequence[str],
    acks: Sequence[str],
) -> Plant:
    clause = fresh(rng, pool, used, taken)
    frame = rng.choice(frames)
    if frame.startswith("{clause}") and lang != "zh":
        clause = clause[0].upper() + clause[1:]
    return Plant(
        "constraint",
        [Say("user", frame.format(clause=clause)), Say("assistant", rng.choice(acks))],
        [Artifact("constraint", clause, {"language": lang})],
    )


def user_fact_plant(
    rng: Random,
    *,
    lang: str,
    used: set[str],
    taken: Taken,
    fact: Callable[[str, Random], tuple[str, str, str]],
    acks: Sequence[str],
) -> Plant:
    """A fact the user states; one fact of each sort per session (two budgets would conflict)."""
    for attempt in range(200):
        message, needle, sort = fact(lang, rng)
        if sort in used and attempt < 150:
            continue
        if not taken(needle):
            used.add(sort)
            return Plant(
                "user_fact",
                [Say("user", message), Say("assistant", rng.choice(acks))],
                [Artifact("user_fact", needle, {"language": lang})],
            )
    raise RuntimeError("no fresh held-out user fact")


def decision_plant(rng: Random, *, lang: str, used: set[str], taken: Taken, chat: bool) -> Plant:
    if chat:
        sentence = fresh(rng, hc.DECISIONS[lang], used, taken)
        turns: list[Turn] = [
            Say("user", rng.choice(hc.DECISION_ASKS[lang])),
            Say("assistant", sentence),
        ]
    else:
        sentence = fresh(rng, ht.DECISIONS[lang], used, taken)
        turns = [Say("assistant", rng.choice(ht.DECISION_FRAMES[lang]).format(d=sentence))]
    return Plant("decision", turns, [Artifact("decision", sentence, {"language": lang})])


# --- the Content -------------------------------------------------------------------------------------


class HeldoutContent:
    """What the held-out corpus says and runs (see the module docstring)."""

    real_share = 0.15

    def real_request(self, rng: Random, lang: str, task: RealTask) -> str:
        return rng.choice(ht.REAL_REQUEST[lang]).format(repo=task.repo, issue=task.issue)

    def real_wrap_up(self, rng: Random, lang: str) -> str:
        return rng.choice(ht.REAL_WRAP_UP[lang])

    def synthetic_task(self, rng: Random, lang: str, *, n_steps: int, file_tools: bool) -> Task:
        return hs.synthetic_task(rng, lang, n_steps=n_steps, file_tools=file_tools)

    def nudge(self, rng: Random, lang: str) -> tuple[str, str]:
        return rng.choice(ht.NUDGES[lang]), rng.choice(ht.NUDGE_REPLIES[lang])

    def chat_language(self, spec_language: str, current: str | None, rng: Random) -> str:
        if "+" not in spec_language:
            return spec_language
        first, second = spec_language.split("+")
        if current is None:
            return first
        if rng.random() < 0.2:
            return second if current == first else first
        return current

    def chat_exchanges(self, lang: str, rng: Random) -> list[tuple[str, str]]:
        return hc.exchanges(lang, rng)

    def blocked(self, rng: Random, lang: str) -> str:
        return rng.choice(ht.BLOCKED[lang])

    def plant(
        self,
        group: str,
        rng: Random,
        *,
        lang: str,
        task: Task,
        used: set[str],
        taken: Taken,
        visible: Visible,
        file_tools: bool,
        chat: bool,
    ) -> Plant:
        root = task.root or "/workspace"
        if group in ("failure", "open_failure"):
            return failure_plant(
                rng,
                ecosystem=task.ecosystem,
                lang=lang,
                is_open=group == "open_failure",
                cwd=root,
                visible=visible,
                taken=taken,
                fix_files=task_files(task),
                file_tools=file_tools,
            )
        if group == "file_edited":
            return file_edited_plant(
                rng,
                lang=lang,
                root=root,
                ecosystem=task.ecosystem,
                used=used,
                taken=taken,
                file_tools=file_tools,
            )
        if group == "file_named":
            return file_named_plant(
                rng, lang=lang, root=root, used=used, taken=taken, file_tools=file_tools
            )
        if group == "constraint":
            pool, frames, acks = (
                (hc.CONSTRAINTS[lang], hc.CONSTRAINT_FRAMES[lang], hc.ACKS[lang])
                if chat
                else (ht.CONSTRAINTS[lang], ht.CONSTRAINT_FRAMES[lang], ht.ACKS[lang])
            )
            return constraint_plant(
                rng, lang=lang, used=used, taken=taken, pool=pool, frames=frames, acks=acks
            )
        if group == "user_fact":
            if chat:
                return user_fact_plant(
                    rng, lang=lang, used=used, taken=taken, fact=hc.chat_fact, acks=hc.ACKS[lang]
                )
            return user_fact_plant(
                rng, lang=lang, used=used, taken=taken, fact=ht.user_fact, acks=ht.ACKS[lang]
            )
        if group == "decision":
            return decision_plant(rng, lang=lang, used=used, taken=taken, chat=chat)
        raise ValueError(group)

    def value_plant(self, rng: Random, *, lang: str, used: set[str], taken: Taken) -> Plant:
        return heldout_updates.heldout_value_plant(rng, lang=lang, used=used, taken=taken)


CONTENT = HeldoutContent()
