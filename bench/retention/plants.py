# ruff: noqa: RUF001 (Chinese text uses full-width punctuation)
"""The planted artifacts: what kinds there are, and the turns that plant each one.

A plant is a few turns put into a session at a chosen depth, the artifacts it plants (kind,
needle, related facts) and, for a failure that gets fixed, the turns that fix it later. The
corpus places plants, renders the session and only then knows each artifact's message index.

Kinds:

* ``file_edited``: a path the agent wrote or edited (file tool, or shell: redirection,
  ``sed -i``, ``tee``, ``apply_patch``...).
* ``file_named``: a path the user named in a message.
* ``failing_command``: a command that exited non-zero (one line).
* ``exit_code``: that command's exit code.
* ``error_line``: THE error line of that output, for a failure fixed later in the session.
* ``open_error``: the error line of a failure never fixed (its command never succeeds later).
* ``constraint``: a rule or preference the user stated.
* ``user_fact``: a name, date, number, account... the user stated.
* ``decision``: a decision the assistant took, with its reason.
* ``current_value``: the latest value the user gave a subject (a cap, a deadline, a region...)
  after an earlier one; the earlier value is in ``related["superseded"]`` and must not be given
  as current (long chats only: ``updates``, ``heldout_updates``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from bench.retention import chat_texts, failures, texts
from bench.retention.events import Act, Edit, Event, Read, Say, Shell, Turn, Write
from bench.retention.failures import ENTITIES, FIELDS, Failure, _camel, _pascal
from bench.retention.synth import code_edit

KINDS = (
    "file_edited",
    "file_named",
    "failing_command",
    "exit_code",
    "error_line",
    "open_error",
    "constraint",
    "user_fact",
    "decision",
    "current_value",
)
# What a plant of each group plants.
GROUPS = (
    "failure",
    "open_failure",
    "file_edited",
    "file_named",
    "constraint",
    "user_fact",
    "decision",
)
CHAT_GROUPS = ("constraint", "user_fact", "decision")
LONG_CHAT_GROUPS = (*CHAT_GROUPS, "value_update")
Taken = Callable[[str], bool]  # whether a string is already in the session


@dataclass
class Artifact:
    kind: str
    needle: str
    related: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plant:
    group: str
    turns: list[Turn]
    artifacts: list[Artifact]
    followup: list[Turn] = field(default_factory=list)  # the fix and the successful re-run
    blocked_note: bool = False  # an open failure: the task's closing message says so
    # Said earlier than the plant, by about this share of the session (a value's first
    # statement, which the plant updates).
    before: list[Turn] = field(default_factory=list)
    before_gap: float = 0.0

    def needles(self) -> list[str]:
        return [a.needle for a in self.artifacts if a.kind != "exit_code"]


# Visible(turn, needles): whether the rendered turn shows every needle (some agents cut long
# outputs; the corpus only plants what the agent's own transcript shows).
Visible = Callable[[Act, Sequence[str]], bool]


# --- failures ---------------------------------------------------------------------------------


def failure_plant(
    rng: Random,
    *,
    ecosystem: str,
    lang: str,
    is_open: bool,
    cwd: str,
    visible: Visible,
    taken: Callable[[str], bool],
    fix_files: Sequence[tuple[str, str]] = (),
    file_tools: bool = True,
) -> Plant:
    """A failing command in the task's toolchain; fixed a few steps later unless ``is_open``."""
    for _ in range(200):
        failure = failures.failure_for(ecosystem, rng)
        needle = failure.error_line.strip()
        if taken(failure.command) or taken(needle):
            continue
        act = _failing_act(rng, failure, lang=lang, cwd=cwd, visible=visible)
        if act is None:
            continue
        output = act[0].events[0]
        assert isinstance(output, Shell)
        shape = act[1]
        artifacts = [
            Artifact(
                "failing_command",
                failure.command,
                {"exit_code": failure.exit_code, "error_line": needle, "resolved": not is_open},
            ),
            Artifact(
                "exit_code",
                str(failure.exit_code),
                {"command": failure.command, "exit_code": failure.exit_code},
            ),
            Artifact(
                "open_error" if is_open else "error_line",
                needle,
                {
                    "command": failure.command,
                    "exit_code": failure.exit_code,
                    "toolchain": failure.toolchain,
                    "shape": shape,
                    "output_lines": output.output.count("\n"),
                },
            ),
        ]
        plant = Plant("open_failure" if is_open else "failure", [act[0]], artifacts)
        if is_open:
            plant.blocked_note = True
        else:
            plant.followup = _fix_turns(
                rng, failure, lang=lang, cwd=cwd, fix_files=fix_files, file_tools=file_tools
            )
        return plant
    raise RuntimeError(f"no unique failure found for {ecosystem}")


def _failing_act(
    rng: Random, failure: Failure, *, lang: str, cwd: str, visible: Visible
) -> tuple[Act, str] | None:
    """The failing call in the first shape (by preference) whose error line the agent shows."""
    preferred = rng.choices(failures.SHAPES, weights=(7, 2, 1))[0]
    order = [preferred] + [s for s in failures.SHAPES if s != preferred]
    thought = rng.choice(texts.THOUGHTS_FAIL[lang]) or None
    for shape in order:
        if shape not in failure.outputs:
            continue
        act = Act(
            (Shell(failure.command, failure.outputs[shape], failure.exit_code, cwd=cwd),), thought
        )
        if visible(act, [failure.command, failure.error_line.strip()]):
            return act, shape
    return None


def _fix_turns(
    rng: Random,
    failure: Failure,
    *,
    lang: str,
    cwd: str,
    fix_files: Sequence[tuple[str, str]],
    file_tools: bool,
) -> list[Turn]:
    thought = rng.choice(texts.THOUGHTS_FIXED[lang]).format(hint=failure.fix_hint)
    rerun = Shell(failure.command, failure.success_output, 0, cwd=cwd)
    if failure.fix_command:
        fixing = Shell(failure.fix_command, "", 0, cwd=cwd)
        return [Act((fixing,), thought), Act((rerun,))]
    if not fix_files:
        return [Act((rerun,), thought)]
    path, content = fix_files[rng.randrange(len(fix_files))]
    old, new = code_edit(path, content, rng)
    full = path if path.startswith("/") else f"{cwd}/{path}"
    fix: Event = Edit(full, old, new) if file_tools else _python_replace(full, old, new, cwd)
    return [Act((fix,), thought), Act((rerun,))]


def _python_replace(path: str, old: str, new: str, cwd: str) -> Shell:
    script = (
        "from pathlib import Path\n"
        f"p = Path({path!r})\n"
        f"p.write_text(p.read_text().replace({old!r}, {new!r}, 1))"
    )
    return Shell(f"python3 - << 'PY'\n{script}\nPY", "", 0, cwd=cwd)


# --- files ------------------------------------------------------------------------------------

EDITED_PATHS = (
    "app/(tabs)/settings.tsx",
    "app/(tabs)/_layout.tsx",
    "src/app/[id]/page.tsx",
    "app/api/webhooks/[provider]/route.ts",
    "src/routes/+page.svelte",
    "src/routes/blog/[slug]/+page.server.ts",
    "packages/@acme/ui/src/Button/Button.stories.tsx",
    "node_modules/.pnpm/patches/@tanstack+query-core@5.59.0.patch",
    "config/.env.staging.local",
    "deploy/k8s/overlays/prod-eu-west-1/kustomization.yaml",
    "lib/utils/v2.3/compat.shim.js",
    "internal/platform/storage/s3/multipart/upload_test.go",
    "crates/ledger-core/src/bin/replay.rs",
    "src/main/java/com/acme/billing/invoice/InvoiceService.java",
    "db/migrations/20260314_0012_add_tenant_id.sql",
    ".github/workflows/release-please.yml",
    "tests/fixtures/users@2x.json",
    "docs/adr/0007-use-sqlite-for-local-cache.md",
    "src/components/Chart/Chart.module.css",
    "scripts/one-off/backfill_2026-03.py",
    "pkg/apis/relay/v1beta1/zz_generated.deepcopy.go",
    "include/net/ring_buf.h",
    "src/net/ring_buf.c",
    "services/notify/src/templates/emails/es-419/reset+password.mjml",
    "apps/mobile/ios/Runner/Info.plist",
    "infra/terraform/modules/rds-aurora@v2/variables.tf",
    "python/acme_sdk/_vendor/urllib3/util/retry.py",
    "web/src/pages/[[...slug]].tsx",
    "src/lib/server/db/schema.v3.ts",
    "ops/ansible/roles/node_exporter/templates/node_exporter.service.j2",
    "test/e2e/specs/checkout.flow.spec.ts",
    "packages/api-client/src/__generated__/graphql.ts",
    "charts/api/templates/_helpers.tpl",
    "src/features/billing/components/InvoiceTable/InvoiceTable.test.tsx",
    "migrations/versions/2026_03_02_1410-7f3a9c1d2e4b_add_refund_reason.py",
    "cmd/relayd/internal/config/defaults.go",
    "etc/nginx/sites-available/api.acme.dev.conf",
    "src/i18n/locales/zh-Hans/common.json",
    "lib/legacy/~deprecated/payments.rb",
    "app/models/concerns/soft_deletable.rb",
    "crates/relay-proto/src/gen/relay.v1.rs",
    "benches/ring+buffer.rs",
    "third_party/lz4-1.9.4/lib/lz4hc.c",
    "db/migrations/V3.2.1__split_names.sql",
    "supabase/migrations/20260301120000_init+rls.sql",
    "internal/api/v2/orders/handler.v2_test.go",
)


_BY_EXTENSION = {
    "typescript": (".tsx", ".ts", ".js", ".svelte", ".css", ".mjml", ".patch", "common.json"),
    "go": (".go",),
    "rust": (".rs",),
    "c": (".c", ".h"),
    "python": (".py", "@2x.json"),
    "python-real": (".py", "@2x.json"),
    "sql": (".sql",),
}
_LANGUAGE_FILES = tuple(ext for exts in _BY_EXTENSION.values() for ext in exts)


def fits(path: str, ecosystem: str) -> bool:
    """Whether an agent working in ``ecosystem`` plausibly edits ``path``: files of that
    language, or configuration and docs (which any project has)."""
    if path.endswith(_BY_EXTENSION.get(ecosystem, ())):
        return True
    return not path.endswith(_LANGUAGE_FILES)


def file_content(path: str, rng: Random) -> str:
    """Plausible content for a file, by its extension."""
    ent, fld = rng.choice(ENTITIES), rng.choice(FIELDS)
    E, f = _pascal(ent), _camel(fld)
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".tsx", ".ts", ".js", ".mjs")):
        return (
            f'import {{ use{E} }} from "@/hooks/use{E}";\n\n'
            f"export default function {E}Panel() {{\n"
            f"  const {{ data, isLoading }} = use{E}();\n"
            "  if (isLoading) return null;\n"
            f'  return <section aria-label="{ent}">{{data?.{f} ?? "—"}}</section>;\n}}\n'
        )
    if name.endswith((".yaml", ".yml")):
        return f'# {ent} settings\nname: {ent}-api\nreplicas: {rng.randint(2, 6)}\nenv:\n  - name: {fld.upper()}\n    value: "{rng.randint(1, 999)}"\n'
    if name.endswith(".sql"):
        return f"ALTER TABLE {ent}s ADD COLUMN {fld} text;\nCREATE INDEX {ent}s_{fld}_idx ON {ent}s ({fld});\n"
    if name.endswith(".go"):
        return f'package {ent}\n\n// Default{_pascal(fld)} is used when the config leaves {fld} empty.\nconst Default{_pascal(fld)} = "{rng.randint(1, 99)}"\n'
    if name.endswith((".rs",)):
        return f'fn main() -> anyhow::Result<()> {{\n    let {ent} = ledger_core::{ent}::load(std::env::args().nth(1))?;\n    println!("{{}}", {ent}.{fld});\n    Ok(())\n}}\n'
    if name.endswith((".py",)):
        return f'def {fld}_of({ent}):\n    return {ent}.get("{fld}") or DEFAULT_{fld.upper()}\n'
    if name.endswith((".c", ".h")):
        return f"size_t {ent}_{fld}(const struct {ent} *p);\n"
    if name.endswith(".json"):
        return f'{{\n  "{f}": "{E}",\n  "retries": {rng.randint(1, 9)}\n}}\n'
    if name.endswith(".md"):
        return f"# Use SQLite for the local {ent} cache\n\nStatus: accepted\n\nWe need a cache that survives restarts without running a server.\n"
    if name.endswith(".css"):
        return f".{f} {{\n  display: grid;\n  gap: {rng.randint(2, 24)}px;\n}}\n"
    return f"{fld}={rng.randint(1, 9999)}\n"


def _edit_event(
    rng: Random, full: str, rel: str, content: str, *, file_tools: bool
) -> tuple[Event, str]:
    lines = content.splitlines()
    old = lines[1] if len(lines) > 1 and lines[1].strip() else lines[0]
    digits = [c for c in old if c.isdigit()]
    if digits:
        new = old.replace(digits[0], str((int(digits[0]) + 1) % 10), 1)
    elif rel.endswith((".py", ".yaml", ".yml", ".rb", ".tf", ".sh", ".j2", ".local")):
        new = old + "  # keep in sync with the API"
    else:
        new = old + "  // keep in sync with the API"
    options: list[str] = ["sed", "redirect", "tee", "apply_patch", "python"]
    if file_tools:
        options += ["write", "edit", "edit", "write"]
    via = rng.choice(options)
    q = shlex.quote(rel)
    if via == "write":
        return Write(full, content), via
    if via == "edit":
        return Edit(full, old, new), via
    if via == "sed":
        pattern = "s/" + _sed(old.strip()) + "/" + _sed(new.strip()) + "/"
        return Shell(f"sed -i {shlex.quote(pattern)} {q}", "", 0), via
    if via == "redirect":
        return Shell(f"cat > {q} << 'EOF'\n{content.rstrip()}\nEOF", "", 0), via
    if via == "tee":
        return Shell(f"tee {q} > /dev/null << 'EOF'\n{content.rstrip()}\nEOF", "", 0), via
    if via == "apply_patch":
        patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n*** End Patch"
        return Shell(
            f"apply_patch << 'EOF'\n{patch}\nEOF",
            f"Success. Updated the following files:\nM {rel}\n",
            0,
        ), via
    return _python_replace(rel, old, new, ""), via


def _sed(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace("/", "\\/")
        .replace("&", "\\&")
        .replace("[", "\\[")
        .replace("]", "\\]")
        .replace(".", "\\.")
        .replace("*", "\\*")
    )


def file_edited_plant(
    rng: Random,
    *,
    lang: str,
    root: str,
    used: set[str],
    file_tools: bool,
    taken: Callable[[str], bool],
    ecosystem: str = "",
) -> Plant:
    fitting = tuple(p for p in EDITED_PATHS if fits(p, ecosystem))
    path = fresh(rng, fitting, used, taken)
    content = file_content(path, rng)
    event, via = _edit_event(rng, f"{root}/{path}", path, content, file_tools=file_tools)
    if isinstance(event, Shell):
        event = Shell(event.command, event.output, event.exit_code, cwd=root)
    thoughts = {
        "en": ("Updating this file.", "Now the change itself.", "", "Writing the new version."),
        "es": ("Actualizo este fichero.", "Ahora el cambio en sí.", ""),
        "zh": ("更新这个文件。", "接下来是具体改动。", ""),
    }[lang]
    return Plant(
        "file_edited",
        [Act((event,), rng.choice(thoughts) or None)],
        [Artifact("file_edited", path, {"via": via})],
    )


def fresh(rng: Random, pool: Sequence[str], used: set[str], taken: Callable[[str], bool]) -> str:
    """An item of ``pool`` (a path, a sentence) neither used in this session nor taken."""
    free = [p for p in pool if p not in used and not taken(p)]
    if not free:
        raise RuntimeError("pool exhausted for this session")
    item = free[rng.randrange(len(free))]
    used.add(item)
    return item


def file_named_plant(
    rng: Random,
    *,
    lang: str,
    root: str,
    used: set[str],
    file_tools: bool,
    taken: Callable[[str], bool],
) -> Plant:
    path = fresh(rng, texts.NAMED_PATHS, used, taken)
    message = rng.choice(texts.FILE_NAMED_WRAPPERS[lang]).format(path=path)
    turns: list[Turn] = [Say("user", message)]
    if rng.random() < 0.5:
        content = file_content(path, rng)
        event: Event = (
            Read(f"{root}/{path}", content)
            if file_tools
            else Shell(f"cat {shlex.quote(path)}", content, 0, cwd=root)
        )
        turns.append(Act((event,), rng.choice(texts.ACKS[lang])))
    else:
        turns.append(Say("assistant", rng.choice(texts.ACKS[lang])))
    return Plant(
        "file_named",
        turns,
        [
            Artifact(
                "file_named", path, {"read_by_agent": len(turns) == 2 and isinstance(turns[1], Act)}
            )
        ],
    )


# --- what people say ----------------------------------------------------------------------------


def constraint_plant(
    rng: Random,
    *,
    lang: str,
    used: set[str],
    taken: Callable[[str], bool],
    pool: Sequence[str] | None = None,
    acks: Sequence[str] | None = None,
) -> Plant:
    clause = fresh(rng, pool or texts.CONSTRAINTS[lang], used, taken)
    wrapper = rng.choice(texts.CONSTRAINT_WRAPPERS[lang])
    if wrapper.startswith("{clause}") and lang != "zh":
        clause = clause[0].upper() + clause[1:]
    return Plant(
        "constraint",
        [
            Say("user", wrapper.format(clause=clause)),
            Say("assistant", rng.choice(acks or texts.ACKS[lang])),
        ],
        [Artifact("constraint", clause, {"language": lang})],
    )


def user_fact_plant(
    rng: Random,
    *,
    lang: str,
    taken: Callable[[str], bool],
    fact: Callable[[str, Random], tuple[str, str]] = texts.user_fact,
    acks: Sequence[str] | None = None,
) -> Plant:
    for _ in range(100):
        message, needle = fact(lang, rng)
        if not taken(needle):
            return Plant(
                "user_fact",
                [Say("user", message), Say("assistant", rng.choice(acks or texts.ACKS[lang]))],
                [Artifact("user_fact", needle, {"language": lang})],
            )
    raise RuntimeError("no fresh user fact")


def decision_plant(
    rng: Random, *, lang: str, used: set[str], taken: Callable[[str], bool]
) -> Plant:
    """A decision in the agent's prose (it becomes the thought of its next action)."""
    sentence = fresh(rng, texts.DECISIONS[lang], used, taken)
    return Plant(
        "decision",
        [Say("assistant", sentence)],
        [Artifact("decision", sentence, {"language": lang})],
    )


CHAT_DECISION_ASKS = {
    "es": (
        "¿Tú qué harías?",
        "¿Qué me recomiendas entonces?",
        "Dudo entre las dos opciones, ¿cuál elijo?",
    ),
    "zh": ("你觉得怎么安排好？", "那你建议怎么选？", "两个方案我拿不定主意，选哪个？"),
    "en": ("What would you do?", "Which one should I pick?"),
}
CHAT_DECISION_TAILS = {
    "es": (" Si te parece bien, lo dejamos así.", " Dime si prefieres otra cosa.", ""),
    "zh": ("如果你觉得可以，就这么定。", "你要是有别的想法再告诉我。", ""),
    "en": (" Let me know if you'd rather do it the other way.", ""),
}


def chat_decision_plant(
    rng: Random, *, lang: str, used: set[str], taken: Callable[[str], bool]
) -> Plant:
    """In a chat: asked for advice, the assistant decides and says why."""
    sentence = fresh(rng, chat_texts.CHAT_DECISIONS[lang], used, taken)
    answer = sentence + rng.choice(CHAT_DECISION_TAILS[lang])
    return Plant(
        "decision",
        [Say("user", rng.choice(CHAT_DECISION_ASKS[lang])), Say("assistant", answer)],
        [Artifact("decision", sentence, {"language": lang})],
    )
