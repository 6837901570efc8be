# ruff: noqa: RUF001 (Chinese text uses full-width punctuation)
"""What people and agents write around the tool calls, in English, Spanish and Chinese.

The planted phrases (constraints, facts, decisions, named paths) are here as data; the
corpus picks from them with its seeded generator and records the exact text it planted.
"""

from __future__ import annotations

from random import Random

LANGS = ("en", "es", "zh")

# --- user requests around a real issue ---------------------------------------------------------

REAL_REQUEST = {
    "en": (
        "Next one, in the {repo} checkout under /testbed. Here's the issue:\n\n{issue}",
        "New task. Repo is {repo} (/testbed). Please fix this:\n\n{issue}",
        "Can you pick this up? It's in {repo}, checked out at /testbed.\n\n{issue}\n\nFix it in the library code, not the tests.",
        "Moving on to {repo}. Issue below, same rules as before: source changes only.\n\n{issue}",
    ),
    "es": (
        "Siguiente tarea, en el repo {repo} (/testbed). Te pego el issue:\n\n{issue}",
        "Otra cosa: en {repo} (está en /testbed) tenemos este problema, ¿lo arreglas?\n\n{issue}",
        "Vamos con {repo}. Este es el issue, arréglalo en el código de la librería, no en los tests:\n\n{issue}",
    ),
    "zh": (
        "下一个任务，仓库是 {repo}（在 /testbed）。issue 如下：\n\n{issue}",
        "帮我处理一下 {repo} 的这个问题，代码在 /testbed：\n\n{issue}",
        "接下来看 {repo}。改库的代码，不要改测试。issue：\n\n{issue}",
    ),
}

WRAP_UP = {
    "en": (
        "Done. The fix is in place and the reproduction script now behaves as the issue expects. I left the existing tests untouched.",
        "That's fixed: I changed the source, re-ran the reproduction and the related tests, all green.",
        "Finished. Summary: found the faulty branch, patched it, checked edge cases with a small script. Let me know if you want a regression test.",
        "All set — the change is small and covered by the script I used to reproduce it.",
    ),
    "es": (
        "Listo. El arreglo está hecho y el script de reproducción ya se comporta como pide el issue.",
        "Terminado: cambié el código fuente, volví a ejecutar la reproducción y los tests relacionados; todo en verde.",
        "Hecho. Encontré la rama defectuosa, la corregí y probé los casos límite con un script pequeño.",
    ),
    "zh": (
        "完成了。修复已经提交，复现脚本现在的输出和 issue 里期望的一致。",
        "搞定：改了源码，重新跑了复现脚本和相关测试，全部通过。",
        "好了。定位到出错的分支并修好了，用一个小脚本验证了边界情况。",
    ),
}

ACKS = {
    "en": (
        "Got it.",
        "Understood, I'll keep that in mind.",
        "Noted.",
        "OK, will do.",
        "Makes sense — noted.",
    ),
    "es": ("Entendido.", "De acuerdo, lo tengo en cuenta.", "Anotado.", "Perfecto, así lo hago."),
    "zh": ("好的，明白。", "收到，我会注意。", "明白了，记下了。", "没问题，照这个来。"),
}

NUDGES = {
    "en": (
        "how's it going?",
        "ok, carry on",
        "looks good so far, continue",
        "any luck?",
        "sounds right. keep going",
        "I'm back — where are we?",
    ),
    "es": (
        "¿cómo va?",
        "vale, sigue",
        "pinta bien, continúa",
        "¿alguna novedad?",
        "ya estoy de vuelta, ¿por dónde vamos?",
    ),
    "zh": (
        "进展怎么样？",
        "好，继续",
        "目前看着没问题，接着来",
        "有结果了吗？",
        "我回来了，现在到哪一步了？",
    ),
}

NUDGE_REPLIES = {
    "en": (
        "Still on it; the next step is to re-run the checks after this change.",
        "Making progress — narrowing down where it goes wrong.",
        "Nearly there, a couple of checks left.",
    ),
    "es": (
        "Sigo con ello; el siguiente paso es volver a pasar las comprobaciones.",
        "Avanzando, estoy acotando dónde falla.",
        "Casi está, me quedan un par de comprobaciones.",
    ),
    "zh": (
        "还在处理，下一步是改完后重新跑检查。",
        "有进展，正在缩小出问题的范围。",
        "快好了，还剩几项检查。",
    ),
}

BLOCKED = {
    "en": (
        "One thing is still open: that failure above is not fixed, and I don't have what I need to fix it from here. Leaving it for you.",
        "Heads-up: the failing step earlier is still failing. It needs access or information I don't have, so I've stopped there.",
    ),
    "es": (
        "Queda una cosa abierta: el fallo de antes sigue sin resolver y desde aquí no puedo arreglarlo. Te lo dejo a ti.",
        "Aviso: el paso que fallaba sigue fallando; necesita accesos que no tengo, así que lo he dejado ahí.",
    ),
    "zh": (
        "还有一个问题没解决：前面那个失败还在，我这边没有条件修，先留给你。",
        "提醒一下：之前失败的那一步现在还是失败，需要我没有的权限，所以先停在这里。",
    ),
}

THOUGHTS_FAIL = {
    "en": ("Let me run it.", "Running the check now.", "Let's see whether this passes.", ""),
    "es": ("Lo ejecuto.", "Paso la comprobación.", "A ver si pasa.", ""),
    "zh": ("跑一下看看。", "先执行检查。", "看看能不能通过。", ""),
}

THOUGHTS_FIXED = {
    "en": (
        "That failed: {hint} should fix it. Re-running.",
        "Fixed — {hint}. Running it again.",
        "Re-running after the change ({hint}).",
    ),
    "es": (
        "Falló; lo arreglo ({hint}) y vuelvo a ejecutar.",
        "Corregido: {hint}. Lo lanzo otra vez.",
        "Lo repito después del cambio ({hint}).",
    ),
    "zh": (
        "失败了，改一下（{hint}）再跑。",
        "已修复：{hint}。重新执行。",
        "改完之后再跑一次（{hint}）。",
    ),
}

# --- planted: constraints ------------------------------------------------------------------------

CONSTRAINTS = {
    "en": (
        "keep the public API of parse() unchanged",
        "we ship Friday 14 March, nothing risky before that",
        "don't touch the generated files under gen/",
        "use pnpm in this repo, the lockfile is pnpm's",
        "tests go next to the code, not in a separate tests/ folder",
        "no new dependencies without asking me first",
        "stick to the standard library for the CLI",
        "leave the legacy v1 endpoints alone, the mobile app still calls them",
        "commit messages in the imperative, one line, under 72 characters",
        "run migrations against the staging copy first, prod only after I say so",
        "I'd rather have a slower query than another index on orders",
        "keep the log lines in JSON, ops parses them",
        "prices are integers in cents everywhere, no floats",
        "don't reformat files you're not otherwise changing",
        "target Node 18, that's what our Lambda runtime is",
        "the Rust code has to build on stable, so no nightly features",
        "anything touching auth goes in its own PR so it gets a second reviewer",
        "timestamps are stored in UTC and only converted in the UI",
        "keep Go 1.21 compatibility, the build boxes are pinned to it",
        "plain SQL in the reporting service, we took the ORM out on purpose",
        "user-facing error messages go through the i18n table",
        "the C code has to compile with -std=c99 on the old toolchain",
        "new feature flags default to off",
        "rename nothing in the public schema until the partners have migrated",
        "use the docker Postgres in tests instead of mocking the database",
        "the Docker image has to stay under 200 MB",
        "the changelog entry goes in the same PR as the change",
        "the retry limit should be configurable rather than hard-coded",
    ),
    "es": (
        "No uses moment.js, ya tenemos date-fns",
        "Respóndeme siempre en español",
        "los precios van en céntimos, nada de decimales",
        "antes de tocar la base de datos de producción me avisas",
        "prefiero que los tests estén junto al código",
        "no cambies la firma de calcular_total(), la usa facturación",
        "las ramas llevan delante el número del ticket",
        "nada de dependencias nuevas sin preguntarme",
        "el despliegue del viernes no se mueve, así que nada arriesgado antes",
        "los mensajes de commit en inglés aunque hablemos en español",
        "deja intactos los endpoints v1, la app móvil todavía los usa",
        "mantén la compatibilidad con Python 3.9 porque el servidor del cliente no se actualiza",
        "las fechas se guardan en UTC y se convierten solo en la interfaz",
        "en este repo se usa pnpm, no npm",
        "los logs tienen que seguir saliendo en JSON",
    ),
    "zh": (
        "部署之前先跑一遍集成测试，没过就别发",
        "回复我的时候用中文就行，代码注释用英文",
        "不要改动 parse() 的公开接口，下游在用",
        "金额一律用分存整数，别用浮点数",
        "别引入新的依赖，除非先问过我",
        "周五发版，在那之前别做有风险的改动",
        "测试用真实的 Postgres 容器，不要 mock 数据库",
        "日志保持 JSON 格式，运维那边要解析",
        "生成的代码目录 gen/ 不要手动修改",
        "提交信息用英文写，一行说清楚就行",
        "旧版 v1 接口先别动，移动端还在调用",
        "时间统一按 UTC 存储，只在前端转换",
        "Go 版本要兼容 1.21，构建机是锁定的",
        "每个改动单独开 PR，别直接推到 main",
        "镜像大小控制在 200 MB 以内",
    ),
}

CONSTRAINT_WRAPPERS = {
    "en": (
        "{clause}.",
        "Quick note before you continue: {clause}.",
        "Thanks. One thing for the rest of this session — {clause}. Carry on.",
        "Also, {clause}. I should have said that earlier.",
        "Looks fine. Reminder: {clause}. Then go ahead with the next step.",
    ),
    "es": (
        "{clause}.",
        "Una cosa antes de seguir: {clause}.",
        "Gracias. Para todo lo que queda: {clause}. Sigue.",
        "Ah, y {clause}. Tendría que habértelo dicho antes.",
    ),
    "zh": (
        "{clause}。",
        "继续之前说一句：{clause}。",
        "谢谢。接下来都按这个来：{clause}。你继续。",
        "对了，{clause}。之前忘了说。",
    ),
}

# --- planted: user facts -------------------------------------------------------------------------

_FIRST = (
    "Lucía",
    "Marta",
    "Diego",
    "Priya",
    "Tomás",
    "Aiko",
    "Olu",
    "Sven",
    "Camila",
    "Jonas",
    "Noor",
    "Mateo",
)
_LAST = (
    "Fernández",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Castillo",
    "Nakamura",
    "Iyer",
    "Brandt",
    "Quispe",
    "Haddad",
)
_ZH_NAMES = ("王雨桐", "李思远", "陈嘉怡", "张明轩", "刘晓峰", "赵一鸣", "周若曦", "孙浩然")
_MONTHS_EN = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "September",
    "October",
    "November",
)
_MONTHS_ES = (
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "septiembre",
    "octubre",
    "noviembre",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_PROJECTS = ("PAY", "OPS", "WEB", "CORE", "DATA", "INFRA", "MOB")


def user_fact(lang: str, rng: Random) -> tuple[str, str]:
    """(message, needle): a fact the user states, and the exact fragment that states it."""
    port = rng.choice((8443, 9443, 7443, 6443, 5433, 8081, 9092, 15432))
    n = rng.randint(2, 400)
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    day = rng.randint(2, 28)
    acct = "".join(str(rng.randint(0, 9)) for _ in range(12))
    ip = f"10.{rng.randint(0, 60)}.{rng.randint(0, 255)}.{rng.randint(2, 250)}"
    ticket = f"{rng.choice(_PROJECTS)}-{rng.randint(100, 4999)}"
    options: tuple[tuple[str, str], ...]
    if lang == "es":
        options = (
            (
                f"mi nombre es {first} {last}",
                "Por cierto, {f}, por si lo necesitas para los commits.",
            ),
            (f"el puerto de staging es el {port}", "Ojo: {f}, no el de siempre."),
            (f"la fecha límite es el {day} de {rng.choice(_MONTHS_ES)}", "Para que lo sepas, {f}."),
            (
                f"el presupuesto es de {n * 100} euros al mes",
                "En cuanto a la infraestructura, {f}, no más.",
            ),
            (f"la cuenta de AWS de pruebas es la {acct}", "Si hace falta, {f}."),
            (f"el ticket es el {ticket}", "Apúntalo en la rama: {f}."),
            (f"el servidor de la VPN del cliente es {ip}", "Para las pruebas, {f}."),
        )
    elif lang == "zh":
        options = (
            (f"预算是 {rng.randint(2, 40)} 万元", "跟你说一下，这个项目{f}。"),
            (f"我叫{rng.choice(_ZH_NAMES)}", "对了，{f}，提交记录里用这个名字。"),
            (f"截止日期是 {rng.randint(1, 12)} 月 {day} 日", "时间上，{f}。"),
            (f"测试环境的端口是 {port}", "注意，{f}，不是默认的那个。"),
            (f"工单号是 {ticket}", "分支名带上工单号，{f}。"),
            (f"服务器 IP 是 {ip}", "部署用的{f}。"),
        )
    else:
        options = (
            (f"the staging port is {port}", "FYI {f}, not the default."),
            (f"my name is {first} {last}", "By the way, {f} — use that for the changelog credit."),
            (
                f"the deadline for this is {rng.choice(_WEEKDAYS)} {day} {rng.choice(_MONTHS_EN)}",
                "Timing: {f}.",
            ),
            (f"our staging AWS account is {acct}", "In case you need it, {f}."),
            (
                f"the budget for the migration is {rng.randint(3, 30)} engineer-days",
                "For planning: {f}.",
            ),
            (f"the ticket is {ticket}", "Put it in the branch name — {f}."),
            (f"the on-call this week is {first} {last}", "If something breaks, {f}."),
            (f"the client's VPN gateway is {ip}", "For the integration tests, {f}."),
            (
                f"the partner rejects payloads over {rng.choice((64, 128, 256, 512))} KB",
                "Keep in mind {f}.",
            ),
            (
                f"the demo is on {rng.choice(_WEEKDAYS)} at {rng.randint(9, 17)}:{rng.choice(('00', '30'))}",
                "Also, {f}.",
            ),
        )
    fact, template = options[rng.randrange(len(options))]
    return template.format(f=fact), fact


# --- planted: decisions --------------------------------------------------------------------------

DECISIONS = {
    "en": (
        "I'll keep the retry in the client rather than the worker, because the worker can't see the HTTP status.",
        "I'm going with a partial index on the open rows instead of a full index, since only open rows are ever queried.",
        "I'll store the amounts as integer cents rather than NUMERIC, because every consumer already works in cents.",
        "I'll fix this in the serializer rather than in the view, because three other endpoints share the serializer.",
        "I'll pin the plugin to the previous minor instead of upgrading its peer, since the upgrade would touch every form.",
        "I'm putting the cache in front of the lookup rather than inside it, so the tests can bypass it.",
        "I'll use a channel instead of a mutex here, because the consumer already runs in its own goroutine.",
        "I'll add the column as nullable first and backfill in a second migration, because the table is too big to rewrite under a lock.",
        "I'll keep the old function as a thin wrapper around the new one so existing callers don't break.",
        "I'll mark the flaky test as skipped with a link to the ticket instead of deleting it, so we keep the case.",
        "Rather than raising the timeout, I'll make the test wait for the webhook, since a longer timeout would only hide the race.",
        "I'll vendor the single header instead of adding the whole library, because we only use two functions from it.",
        "I'll go with SQLite for the local cache because it's a single process and we don't want to run a server.",
        "I'll write the parser by hand instead of with a regex, because the format nests.",
        "I'll convert time zones at the API boundary, so the core keeps working in UTC only.",
        "I'll return a 409 instead of silently overwriting, because two tabs editing the same record is a real case here.",
        "I'm splitting the migration in two so the schema change can ship before the code that uses it.",
        "I'll put the limit in config with the current value as default, so nothing changes until someone sets it.",
        "I'll use a BTreeMap instead of a HashMap here, because the report output has to be in a stable order.",
        "I'll leave the C API as it is and add the new behaviour behind a flag, since other binaries link against it.",
        "I'll debounce on the client instead of rate-limiting on the server, because the server limit would also hit the batch jobs.",
        "I'm keeping the generated client out of the diff and regenerating it in CI, so reviews stay readable.",
    ),
    "es": (
        "Usaré SQLite en lugar de Postgres porque el despliegue es en un solo nodo.",
        "Dejo el reintento en el cliente y no en el worker, porque el worker no ve el código HTTP.",
        "Voy a añadir la columna como nullable y rellenarla en otra migración, porque la tabla es demasiado grande para bloquearla.",
        "Mantengo la función antigua como envoltorio de la nueva para no romper a quien ya la llama.",
        "Prefiero corregirlo en el serializador y no en la vista, porque lo comparten otros tres endpoints.",
        "Convierto las zonas horarias en la capa de la API, así el núcleo sigue trabajando solo en UTC.",
        "En vez de subir el timeout, haré que el test espere al webhook, porque un timeout mayor solo esconde la carrera.",
        "Guardo los importes en céntimos enteros porque todos los consumidores ya trabajan en céntimos.",
        "Separo la migración en dos para que el cambio de esquema salga antes que el código que lo usa.",
        "Pongo el límite en la configuración con el valor actual por defecto, así no cambia nada hasta que alguien lo ajuste.",
    ),
    "zh": (
        "我把重试放在客户端而不是 worker 里，因为 worker 看不到 HTTP 状态码。",
        "这里用 SQLite 而不是 Postgres，因为只部署在单节点上。",
        "先把这一列加成可空，再用第二个迁移回填，因为这张表太大，不能锁表重写。",
        "旧函数保留成新函数的薄包装，这样现有调用方不会出问题。",
        "我在序列化层修，而不是在视图里修，因为另外三个接口也共用这个序列化器。",
        "时区转换放在 API 边界做，这样核心逻辑始终只处理 UTC。",
        "不加大超时时间，而是让测试等 webhook 回来，因为加大超时只会掩盖竞态问题。",
        "金额用整数分来存，因为所有下游本来就是按分计算的。",
        "把迁移拆成两步，让表结构变更先于使用它的代码上线。",
        "限制值放进配置里，默认值保持现在的数值，这样在有人修改之前行为不变。",
    ),
}

# --- planted: a path the user names ------------------------------------------------------------

FILE_NAMED_WRAPPERS = {
    "en": (
        "Also have a look at {path}, I think the problem starts there.",
        "Before you go on: {path} has the settings the staging job uses.",
        "The config you need is in {path}.",
        "btw {path} is what the nightly job reads, check it too",
        "Don't forget {path} — someone else changed it last week.",
        "Look at {path} first; the numbers there look wrong to me.",
    ),
    "es": (
        "Échale un vistazo también a {path}, creo que el problema empieza ahí.",
        "La configuración que necesitas está en {path}.",
        "Antes de seguir, revisa {path}: es lo que lee el job nocturno.",
        "No te olvides de {path}, alguien lo cambió la semana pasada.",
    ),
    "zh": (
        "另外看一下 {path}，我觉得问题是从那里开始的。",
        "你需要的配置在 {path} 里。",
        "继续之前先检查 {path}，夜间任务读的就是它。",
        "别忘了 {path}，上周有人改过。",
    ),
}

NAMED_PATHS = (
    "config/deploy/staging.yaml",
    "infra/terraform/envs/prod-eu-west-1/main.tf",
    ".github/workflows/nightly-e2e.yml",
    "docs/runbooks/db-failover.md",
    "services/billing/src/main/resources/application-staging.properties",
    "packages/@acme/ui/src/theme/tokens.json",
    "app/(auth)/login/page.tsx",
    "src/pages/[org]/[project]/settings.vue",
    "deploy/helm/charts/api/values.prod.yaml",
    "tests/fixtures/invoices/2026-02+corrections.csv",
    "scripts/ops/rotate_keys.v2.sh",
    "db/seeds/tenants@staging.sql",
    "crates/relay-proto/build.rs",
    "cmd/relayd/main.go",
    "include/ring/ring_buf.h",
    "migrations/0042_split_names.up.sql",
    "config/feature-flags/2026-Q1.json",
    "ops/grafana/dashboards/api-latency.p99.json",
    "src/server/jobs/nightly/reconcile_payouts.py",
    "web/src/routes/(app)/billing/+layout.svelte",
    "libs/shared/data-access/src/lib/+state/orders.effects.ts",
    "k8s/overlays/staging/patches/hpa@api.yaml",
    "docs/adr/0011-event-sourcing-for-ledger.md",
    "tools/ci/lint.d/10-shellcheck.sh",
)


def pick_distinct(rng: Random, pool: tuple[str, ...], used: set[str]) -> str:
    """A pool entry not used yet in this session (the pool is large enough for one session)."""
    free = [p for p in pool if p not in used]
    if not free:
        raise ValueError("pool exhausted for this session")
    choice = free[rng.randrange(len(free))]
    used.add(choice)
    return choice
