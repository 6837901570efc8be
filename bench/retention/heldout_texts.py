# ruff: noqa: RUF001 (Chinese text uses full-width punctuation)
"""Held-out wording: what users and agents write around the tool calls, in English, Spanish,
Chinese, Portuguese, French and German, and the planted phrases (constraints, facts, decisions,
paths).

Written for the held-out corpus on its own: other sentences, other names and other shapes than
the dev corpus's texts. Constraints are mostly imperatives, conditions, deadlines and
budgets; decisions are worded many ways, each with its reason.
"""

from __future__ import annotations

from random import Random

LANGS = ("en", "es", "zh", "pt", "fr", "de")

# --- around the work --------------------------------------------------------------------------------

REQUESTS = {
    "en": (
        "{project} ({stack}): {noun} records with an empty {attr} break the nightly run. Track it down and fix it, please.",
        "Next thing in {project}: validate {attr} on {noun}s at the API edge, and add a test that shows the rejection.",
        "The {noun} module in {project} copies the {attr} logic in three places. Pull it into one function without changing behaviour.",
        "Ops says {noun} exports from {project} are slow since the last release. Have a look, {stack} side.",
        "ok so in {project} the {attr} field on {noun} sometimes comes back null from the API even though the DB has it. figure out why",
        "Small one: {project} needs a config switch for the {noun} {attr} default. Wire it through and document it.",
    ),
    "es": (
        "En {project} ({stack}) los {noun} con {attr} vacío rompen el proceso nocturno. Encuentra la causa y arréglalo.",
        "Lo siguiente en {project}: validar {attr} de los {noun} en la API y añadir un test que lo demuestre.",
        "El módulo de {noun} en {project} repite la lógica de {attr} en tres sitios; unifícala sin cambiar el comportamiento.",
        "Me dicen de operaciones que la exportación de {noun} en {project} va lenta desde la última versión. ¿Le echas un ojo?",
    ),
    "zh": (
        "{project}（{stack}）里，{attr} 为空的 {noun} 记录会让夜间任务挂掉，帮忙查一下原因并修掉。",
        "{project} 下一项：在 API 层校验 {noun} 的 {attr}，再补一个能体现拒绝逻辑的测试。",
        "{project} 的 {noun} 模块里 {attr} 的逻辑复制了三份，合并成一个函数，行为不要变。",
        "运维反馈 {project} 的 {noun} 导出从上个版本开始变慢了，你从 {stack} 这边看看。",
    ),
    "pt": (
        "No {project} ({stack}), registos de {noun} com {attr} vazio estão a partir o job noturno. Descobre porquê e corrige.",
        "Próxima tarefa no {project}: validar o {attr} dos {noun} na API e juntar um teste que mostre a rejeição.",
        "O módulo de {noun} do {project} tem a lógica do {attr} copiada em três sítios. Junta tudo numa função, sem mudar o comportamento.",
        "A equipa de operações diz que a exportação de {noun} no {project} ficou lenta desde a última versão. Dá uma vista de olhos?",
        "Preciso que o {project} aceite um valor por omissão configurável para o {attr} dos {noun}. Liga isso e documenta.",
    ),
    "fr": (
        "Dans {project} ({stack}), les {noun} dont le {attr} est vide font planter le traitement de nuit. Trouve la cause et corrige.",
        "Prochaine étape sur {project} : valider le {attr} des {noun} côté API, avec un test qui montre le refus.",
        "Le module {noun} de {project} duplique la logique de {attr} à trois endroits. Regroupe ça dans une seule fonction, sans changer le comportement.",
        "Les ops trouvent que l'export des {noun} de {project} rame depuis la dernière version. Tu peux regarder côté {stack} ?",
        "Il faudrait un paramètre de config pour la valeur par défaut de {attr} sur les {noun} dans {project}. Branche-le et documente-le.",
    ),
    "de": (
        "In {project} ({stack}) lassen {noun}-Datensätze mit leerem {attr} den Nachtlauf abstürzen. Bitte Ursache finden und beheben.",
        "Als Nächstes in {project}: {attr} bei {noun} schon an der API prüfen, plus ein Test, der die Ablehnung zeigt.",
        "Das {noun}-Modul in {project} hat die {attr}-Logik dreimal kopiert. Zieh das in eine Funktion zusammen, ohne das Verhalten zu ändern.",
        "Laut Betrieb ist der {noun}-Export in {project} seit dem letzten Release langsam. Schau dir das mal auf der {stack}-Seite an.",
        "Kleine Sache: {project} braucht einen Konfigurationsschalter für den Standardwert von {attr} bei {noun}. Bitte durchreichen und dokumentieren.",
    ),
}

CLOSES = {
    "en": (
        "Wrapped up: the {noun} change is in, checks are green.",
        "That should do it. {attr} is handled in one place now and the suite passes.",
        "Done here. Happy to split this into smaller commits if review prefers that.",
    ),
    "es": (
        "Terminado: el cambio en {noun} está hecho y las comprobaciones pasan.",
        "Con esto queda. {attr} se gestiona en un solo sitio y la batería de tests pasa.",
    ),
    "zh": (
        "收工：{noun} 的改动已经完成，检查全部通过。",
        "应该可以了，{attr} 现在只在一个地方处理，测试都过了。",
    ),
    "pt": (
        "Feito: a alteração em {noun} está aplicada e as verificações passam.",
        "Acho que fica resolvido. O {attr} é tratado num só sítio e a suite passa.",
    ),
    "fr": (
        "C'est bouclé : la modification sur {noun} est en place, les vérifications passent.",
        "Ça devrait suffire. Le {attr} est géré à un seul endroit et la suite passe.",
    ),
    "de": (
        "Fertig: die Änderung an {noun} ist drin, die Checks sind grün.",
        "Das sollte es sein. {attr} wird jetzt an einer Stelle behandelt, die Tests laufen durch.",
    ),
}

THOUGHTS = {
    "en": (
        "Checking the toolchain first.",
        "Where is this wired up?",
        "Reading the service before touching it.",
        "Running the suite to get a baseline.",
        "This looks like the spot.",
        "Docs say something about this, quick look.",
        "",
        "",
        "",
        "",
    ),
    "es": (
        "Miro primero qué versión hay instalada.",
        "¿Dónde se conecta esto?",
        "Leo el servicio antes de tocarlo.",
        "Paso la suite para tener una referencia.",
        "",
        "",
        "",
    ),
    "zh": (
        "先确认一下工具链版本。",
        "这个是在哪里接进来的？",
        "改之前先读一遍这个服务。",
        "先跑一遍测试当基线。",
        "",
        "",
        "",
    ),
    "pt": (
        "Primeiro confirmo a versão das ferramentas.",
        "Onde é que isto está ligado?",
        "Leio o serviço antes de mexer.",
        "Corro a suite para ter uma base.",
        "",
        "",
        "",
    ),
    "fr": (
        "Je vérifie d'abord la chaîne d'outils.",
        "C'est branché où, ça ?",
        "Je lis le service avant d'y toucher.",
        "Je lance la suite pour avoir une base.",
        "",
        "",
        "",
    ),
    "de": (
        "Erst mal die Toolchain prüfen.",
        "Wo wird das eingebunden?",
        "Ich lese den Service, bevor ich ihn anfasse.",
        "Einmal die Tests laufen lassen, als Ausgangspunkt.",
        "",
        "",
        "",
    ),
}

PLAN_ITEMS = {
    "en": (
        "Find where {attr} gets lost",
        "Fix the {noun} code path",
        "Cover it with a test",
        "Run lint and the full suite",
    ),
    "es": (
        "Encontrar dónde se pierde {attr}",
        "Corregir el código de {noun}",
        "Cubrirlo con un test",
    ),
    "zh": ("定位 {attr} 在哪里丢失", "修复 {noun} 的代码路径", "补测试并跑全量检查"),
    "pt": (
        "Descobrir onde se perde o {attr}",
        "Corrigir o código de {noun}",
        "Cobrir com um teste",
    ),
    "fr": ("Trouver où {attr} se perd", "Corriger le code de {noun}", "Ajouter un test"),
    "de": (
        "Finden, wo {attr} verloren geht",
        "Den {noun}-Code korrigieren",
        "Mit einem Test absichern",
    ),
}

REAL_REQUEST = {
    "en": (
        "Another upstream bug. Checkout of {repo} is at /testbed; the report:\n\n{issue}\n\nPatch the library, leave the test suite alone.",
        "Got a report against {repo} (code in /testbed). Reproduce it first, then fix.\n\n{issue}",
        "{repo}, /testbed. This one came in from a user:\n\n{issue}",
    ),
    "es": (
        "Otro fallo de {repo}; el código está en /testbed. El informe:\n\n{issue}\n\nArréglalo en la librería, los tests no se tocan.",
    ),
    "zh": ("{repo} 收到一个用户反馈，仓库已检出到 /testbed。请先复现，再修复：\n\n{issue}",),
    "pt": (
        "Mais um bug do {repo}; o checkout está em /testbed. O relatório:\n\n{issue}\n\nCorrige na biblioteca e não mexas nos testes.",
        "Chegou isto de um utilizador do {repo} (código em /testbed). Reproduz primeiro e depois corrige.\n\n{issue}",
    ),
    "fr": (
        "Encore un bug de {repo}, le dépôt est dans /testbed. Le ticket :\n\n{issue}\n\nCorrige dans la bibliothèque, sans toucher aux tests.",
    ),
    "de": (
        "Noch ein Bug in {repo}, Checkout liegt unter /testbed. Die Meldung:\n\n{issue}\n\nBitte in der Bibliothek fixen, Tests nicht anfassen.",
    ),
}

REAL_WRAP_UP = {
    "en": (
        "Patched. The reproduction behaves now, and I checked two neighbouring cases by hand.",
        "Fix is in the library code; my repro script prints the expected result. No test files changed.",
    ),
    "es": ("Corregido. La reproducción ya da lo esperado y probé a mano dos casos cercanos.",),
    "zh": ("修好了。复现脚本现在输出正确结果，另外手动验证了两个相邻的情况。",),
    "pt": (
        "Corrigido. A reprodução já dá o resultado esperado e testei à mão dois casos vizinhos.",
    ),
    "fr": (
        "Corrigé. Le script de reproduction donne maintenant le bon résultat ; j'ai vérifié deux cas voisins à la main.",
    ),
    "de": (
        "Behoben. Das Reproduktionsskript liefert jetzt das erwartete Ergebnis, zwei Nachbarfälle habe ich von Hand geprüft.",
    ),
}

NUDGES = {
    "en": (
        "status?",
        "still with me?",
        "fine, go on",
        "take your time, just checking",
        "lunch done. anything for me to look at?",
    ),
    "es": ("¿cómo lo llevas?", "tira, tira", "¿algo que deba mirar yo?"),
    "zh": ("现在什么情况？", "嗯，往下做", "有需要我看的吗？"),
    "pt": ("como está a correr?", "força, continua", "há alguma coisa para eu ver?"),
    "fr": ("ça avance ?", "vas-y, continue", "il y a un truc que je dois regarder ?"),
    "de": ("wie sieht's aus?", "passt, mach weiter", "soll ich mir irgendwas ansehen?"),
}

NUDGE_REPLIES = {
    "en": (
        "Getting there — one more check after this edit.",
        "Narrowed it to one module, working through it now.",
    ),
    "es": ("Avanzando; después de este cambio paso otra comprobación.",),
    "zh": ("快了，这处改完再跑一次检查。",),
    "pt": ("Está a andar; depois desta alteração corro mais uma verificação.",),
    "fr": ("Ça avance ; encore une vérification après cette modif.",),
    "de": ("Wird — nach dieser Änderung noch ein Check.",),
}

BLOCKED = {
    "en": (
        "Still red: the failing run from earlier in this task. I found no fix I could apply from this machine, so it's yours.",
        "Caveat before anyone merges: one failure in this task stays unresolved (see above) — it needs credentials or an environment I can't reach.",
    ),
    "es": (
        "Sigue en rojo la ejecución fallida de antes; desde esta máquina no encontré un arreglo aplicable, así que te la paso.",
    ),
    "zh": (
        "注意：这个任务里前面那次失败的运行仍然是红的，在这台机器上找不到能直接用的修复，交给你处理。",
    ),
    "pt": (
        "Continua a vermelho a execução que falhou mais acima; daqui não encontrei correção que pudesse aplicar, fica contigo.",
    ),
    "fr": (
        "Toujours en rouge : l'exécution en échec plus haut. Je n'ai pas de correctif applicable depuis cette machine, je te la laisse.",
    ),
    "de": (
        "Weiterhin rot: der fehlgeschlagene Lauf von oben. Von dieser Maschine aus habe ich keinen anwendbaren Fix gefunden, das bleibt bei dir.",
    ),
}

THOUGHTS_FAIL = {
    "en": ("Trying the build.", "What does it say now?", "Running it once.", ""),
    "es": ("Pruebo la compilación.", "A ver qué dice esto.", ""),
    "zh": ("编译试试。", "看看输出什么。", ""),
    "pt": ("Experimento o build.", "Vamos ver o que diz.", ""),
    "fr": ("J'essaie le build.", "Voyons ce que ça donne.", ""),
    "de": ("Ich probiere den Build.", "Mal sehen, was das sagt.", ""),
}

THOUGHTS_FIXED = {
    "en": (
        "Cause found: {hint}. Same command again.",
        "Changed it so that {hint}; rerunning.",
        "{hint}; trying the same command once more.",
    ),
    "es": (
        "Encontrada la causa: {hint}. Repito el mismo comando.",
        "Cambiado para que {hint}; lo relanzo.",
    ),
    "zh": ("找到原因了：{hint}。同样的命令再跑一次。", "已经改好（{hint}），重跑。"),
    "pt": (
        "Causa encontrada: {hint}. Corro o mesmo comando outra vez.",
        "Alterado para que {hint}; volto a correr.",
    ),
    "fr": (
        "Cause trouvée : {hint}. Je relance la même commande.",
        "Corrigé ({hint}) ; je relance.",
    ),
    "de": (
        "Ursache gefunden: {hint}. Gleicher Befehl noch mal.",
        "Geändert ({hint}), noch ein Lauf.",
    ),
}

ACKS = {
    "en": ("Okay.", "Sure thing.", "Adjusting to that.", "Right."),
    "es": ("Vale.", "De acuerdo, ajusto.", "Hecho."),
    "zh": ("好。", "行，我调整一下。", "没问题。"),
    "pt": ("Ok.", "Certo, ajusto.", "Combinado."),
    "fr": ("D'accord.", "Ça marche, j'ajuste.", "Entendu."),
    "de": ("Okay.", "Passt, ich stelle das um.", "Geht klar."),
}

EDIT_THOUGHTS = {
    "en": ("Making the change.", "Editing it now.", "", ""),
    "es": ("Hago el cambio.", ""),
    "zh": ("动手改。", ""),
    "pt": ("Faço a alteração.", ""),
    "fr": ("Je fais la modif.", ""),
    "de": ("Ich ändere das.", ""),
}

READ_NOTES = {
    "en": ("Opening it.", "Let me read that.", "Looking."),
    "es": ("Lo abro.", "Le echo un vistazo."),
    "zh": ("我打开看看。", "先读一下。"),
    "pt": ("Vou abrir.", "Deixa-me ler isso."),
    "fr": ("Je l'ouvre.", "Je regarde ça."),
    "de": ("Ich schau rein.", "Lese ich mir an."),
}

# --- planted: constraints ----------------------------------------------------------------------------

CONSTRAINTS = {
    "en": (
        "if it touches billing, ping Ana first",
        "prod still runs Java 17, so nothing from the Java 21 API",
        "keep each PR under 400 changed lines and split it otherwise",
        "run the slow integration suite on CI only; locally the unit tests are enough",
        "staging only until Thursday's go/no-go",
        "ask me before bumping anything in the lockfile",
        "write a down step for every migration",
        "leave the feature flag names alone, the marketing dashboards key on them",
        "customer emails go through the outbox table, not straight to SMTP",
        "go through our Sentry wrapper, not the raw SDK",
        "CI minutes are tight this month, so no full-matrix reruns for typo fixes",
        "bump the version in openapi.yaml whenever the API schema changes",
        "Portuguese and Spanish strings come from the translators, don't machine-translate them",
        "secrets stay in 1Password under Platform, nothing in the repo",
        "a new env var goes into .env.example in the same commit",
        "Thursday after 16:00 is deploy freeze",
        "INFO level in prod; DEBUG only behind the verbose flag",
        "stay on Terraform 1.5.x until the state migration is done",
        "the budget for this refactor is two days, after that we talk",
        "touch the payments schema only with Bruno in the review",
    ),
    "es": (
        "si afecta a facturación, avisa antes a Ana",
        "producción sigue en Java 17, así que nada de la API de Java 21",
        "cada PR por debajo de 400 líneas; si no, se parte",
        "la suite de integración lenta solo en CI, en local bastan los unitarios",
        "solo staging hasta la reunión de salida del jueves",
        "pregúntame antes de subir versiones en el lockfile",
        "toda migración lleva su paso de vuelta atrás",
        "los nombres de los feature flags se quedan como están, los cuadros de marketing dependen de ellos",
        "los correos a clientes salen por la tabla outbox, no directamente por SMTP",
        "los textos en portugués los hacen los traductores, nada de traducción automática",
        "una variable de entorno nueva va a .env.example en el mismo commit",
        "el jueves a partir de las 16:00 no se despliega",
        "tenemos dos días para este refactor; pasado eso lo hablamos",
        "el esquema de pagos se toca solo con Bruno en la revisión",
    ),
    "zh": (
        "涉及计费的改动，先跟 Ana 打个招呼",
        "生产环境还是 Java 17，Java 21 的 API 一律别用",
        "每个 PR 控制在 400 行以内，超了就拆",
        "慢的集成测试只在 CI 上跑，本地跑单元测试就够",
        "周四评审会之前只动预发环境",
        "升级 lockfile 里的任何依赖之前先问我",
        "每个迁移都要写回滚步骤",
        "功能开关的名字别改，市场部的看板靠它们统计",
        "发给客户的邮件走 outbox 表，不要直连 SMTP",
        "葡萄牙语和西班牙语的文案由翻译提供，不要用机翻",
        "新增环境变量要在同一个提交里写进 .env.example",
        "周四下午四点以后封版，不发布",
        "这次重构给两天时间，超了再商量",
        "支付相关的表结构只有 Bruno 参与评审时才能改",
    ),
    "pt": (
        "se mexer na faturação, avisa a Ana primeiro",
        "a produção ainda corre Java 17, por isso nada da API do Java 21",
        "cada PR abaixo das 400 linhas alteradas; se passar, divide",
        "a suite de integração lenta corre só no CI, localmente chegam os testes unitários",
        "só staging até à reunião de go/no-go de quinta",
        "pergunta-me antes de atualizar seja o que for no lockfile",
        "cada migração leva o passo de reversão",
        "os nomes das feature flags ficam como estão, os painéis do marketing dependem deles",
        "os emails para clientes saem pela tabela outbox, nada de SMTP direto",
        "os textos em espanhol vêm dos tradutores, nada de tradução automática",
        "variável de ambiente nova entra no .env.example no mesmo commit",
        "quinta depois das 16h há congelamento de deploys",
        "o orçamento deste refactor são dois dias, depois disso falamos",
        "o esquema de pagamentos só se altera com o Bruno na revisão",
        "os valores monetários vão em Decimal com duas casas, arredondamento bancário",
        "os ficheiros SAF-T não se regeneram sem a contabilidade saber",
    ),
    "fr": (
        "si ça touche à la facturation, préviens Ana avant",
        "la prod tourne encore en Java 17, donc rien de l'API Java 21",
        "chaque PR sous les 400 lignes modifiées, sinon on découpe",
        "la suite d'intégration lente tourne seulement en CI ; en local, les tests unitaires suffisent",
        "uniquement la préprod jusqu'au go/no-go de jeudi",
        "demande-moi avant de monter quoi que ce soit dans le lockfile",
        "chaque migration a son étape de retour arrière",
        "les noms des feature flags restent tels quels, les tableaux de bord marketing s'appuient dessus",
        "les mails aux clients passent par la table outbox, pas directement par SMTP",
        "les textes portugais viennent des traducteurs, pas de traduction automatique",
        "toute nouvelle variable d'environnement va dans .env.example dans le même commit",
        "jeudi après 16 h, gel des mises en production",
        "ce refactor a un budget de deux jours, au-delà on en reparle",
        "le schéma des paiements ne bouge qu'avec Bruno en relecture",
        "les montants restent en centimes côté base, la conversion se fait à l'affichage",
        "pas de requête vers l'API du transporteur depuis les tests, on rejoue les cassettes",
    ),
    "de": (
        "wenn es die Abrechnung betrifft, vorher Ana Bescheid geben",
        "Produktion läuft noch auf Java 17, also nichts aus der Java-21-API",
        "jeder PR unter 400 geänderten Zeilen, sonst aufteilen",
        "die langsame Integrationssuite nur im CI, lokal reichen die Unit-Tests",
        "bis zum Go/No-Go am Donnerstag nur Staging",
        "frag mich, bevor du im Lockfile irgendwas hochziehst",
        "jede Migration bekommt einen Rückweg",
        "die Feature-Flag-Namen bleiben, wie sie sind, die Marketing-Dashboards hängen daran",
        "Kundenmails laufen über die Outbox-Tabelle, nicht direkt über SMTP",
        "portugiesische Texte kommen von den Übersetzern, keine maschinelle Übersetzung",
        "eine neue Umgebungsvariable landet im selben Commit in .env.example",
        "Donnerstag ab 16 Uhr ist Deploy-Freeze",
        "für dieses Refactoring sind zwei Tage drin, danach reden wir",
        "am Zahlungsschema nur mit Bruno im Review",
        "Log-Meldungen bleiben englisch, nur Fehlermeldungen für Kunden werden übersetzt",
        "das Rechenzentrum in Frankfurt bleibt die einzige Region für Patientendaten",
    ),
}

CONSTRAINT_FRAMES = {
    "en": (
        "{clause}.",
        "{clause}, please.",
        "ok. {clause}",
        "Read your last message, fine by me. {clause}, just so you know.",
        "Ana pinged me about this: {clause}.",
        "Note for whoever picks this up, you included: {clause}.",
    ),
    "es": (
        "{clause}.",
        "{clause}, por favor.",
        "Visto tu último mensaje, me parece bien. Eso sí: {clause}.",
        "Me escribe Ana sobre esto: {clause}.",
    ),
    "zh": (
        "{clause}。",
        "麻烦注意：{clause}。",
        "看了你上一条，没意见。另外，{clause}。",
        "Ana 刚找我说了这事：{clause}。",
    ),
    "pt": (
        "{clause}.",
        "{clause}, por favor.",
        "Vi a tua última mensagem, por mim está bem. Só uma nota: {clause}.",
        "A Ana falou comigo sobre isto: {clause}.",
    ),
    "fr": (
        "{clause}.",
        "{clause}, s'il te plaît.",
        "Vu ton dernier message, ça me va. Par contre, {clause}.",
        "Ana m'a écrit à ce sujet : {clause}.",
    ),
    "de": (
        "{clause}.",
        "{clause}, bitte.",
        "Deine letzte Nachricht gelesen, passt. Nur: {clause}.",
        "Ana hat mich deswegen angeschrieben: {clause}.",
    ),
}

# --- planted: user facts -------------------------------------------------------------------------

_GIVEN = (
    "Ana",
    "Bruno",
    "Chiara",
    "Dmitri",
    "Eun-ji",
    "Farah",
    "Gustavo",
    "Hanne",
    "Ilse",
    "Joaquim",
    "Kofi",
    "Léa",
)
_FAMILY = (
    "Albuquerque",
    "Brenner",
    "Caputo",
    "Dufresne",
    "Esposito",
    "Fagerlund",
    "Grünewald",
    "Haraldsen",
    "Ibarra",
    "Jovanović",
)
_ZH_PEOPLE = ("林嘉禾", "许沐阳", "郑书瑶", "何远航", "邓可欣", "罗一凡")
_TEAMS = ("Platform", "Payments", "Berths", "Dosing", "Data", "Mobile")
_CITIES = ("Porto", "Lyon", "Leipzig", "Valencia", "Braga", "Nantes", "Graz", "Córdoba")
_STREETS = (
    "Rua de Cedofeita",
    "Rue Paul Bert",
    "Karl-Liebknecht-Straße",
    "Calle de Colón",
    "Avenida da Liberdade",
    "Rue de la Loire",
)


def _digits(rng: Random, n: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(n))


def _values(rng: Random) -> dict[str, str]:
    return {
        "given": rng.choice(_GIVEN),
        "family": rng.choice(_FAMILY),
        "zh": rng.choice(_ZH_PEOPLE),
        "team": rng.choice(_TEAMS),
        "kt": str(rng.randint(7, 9)),
        "pg": f"{rng.choice((13, 14, 15, 16))}.{rng.randint(2, 9)}",
        "acct": "1"
        + "".join(
            rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789")
            for _ in range(15)
        ),
        "acct7": _digits(rng, 7),
        "day": str(rng.randint(2, 28)),
        "hh": f"{rng.randint(8, 18):02d}",
        "k": str(rng.randint(3, 60)),
        "street": rng.choice(_STREETS),
        "num": str(rng.randint(3, 240)),
        "postcode": f"{rng.randint(1000, 9999)}-{rng.randint(100, 999)}",
        "city": rng.choice(_CITIES),
        "iban": f"PT50 {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 1)}",
        "phone": f"+351 9{rng.randint(10, 39)} {_digits(rng, 3)} {_digits(rng, 3)}",
        "host": f"bastion-{rng.randint(1, 9)}.{rng.choice(('harborline', 'meterly', 'wardbook'))}.internal",
        "cus": "cus_"
        + "".join(
            rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")
            for _ in range(14)
        ),
        "ios": f"{rng.choice((15, 16, 17))}.{rng.randint(0, 4)}",
        "pct": str(rng.randint(2, 40)),
    }


FACTS: dict[str, tuple[tuple[str, str], ...]] = {
    # (fact, message template around it)
    "en": (
        (
            "I'm {given} {family}, tech lead for {team}",
            "Hi — {f}. Put my name on the changelog entry.",
        ),
        ("the Android build is still on Kotlin 1.{kt}", "fyi {f}."),
        ("RDS runs Postgres {pg}", "For the record, {f}; the local container is newer."),
        (
            "test payments go through Stripe account acct_{acct}",
            "If you need to look at a payment, {f}.",
        ),
        ("code freeze starts on the {day}th at {hh}:00 CET", "Timeline: {f}."),
        ("we have {k}k EUR left for infra this quarter", "Budget-wise, {f}."),
        (
            "the return address is {street} {num}, {postcode} {city}",
            "For the shipping label template, {f}.",
        ),
        ("supplier payouts go to IBAN {iban}", "Test data: {f}."),
        ("{given}'s phone for release night is {phone}", "In case things go sideways, {f}."),
        ("the prod change request is CHG{acct7}", "Oh, {f}."),
        ("the bastion host is {host}", "To reach the DB from outside, {f}."),
        ("the customer who reported it is {cus}", "Context: {f}."),
        ("the iOS app still supports {ios}", "Keep in mind {f}."),
        ("about {pct}% of the lockers still run firmware 2.x", "One more data point: {f}."),
    ),
    "es": (
        (
            "soy {given} {family}, responsable técnico de {team}",
            "Hola, {f}. Pon mi nombre en el changelog.",
        ),
        ("la app de Android sigue con Kotlin 1.{kt}", "Para que lo sepas, {f}."),
        (
            "los pagos de prueba van por la cuenta de Stripe acct_{acct}",
            "Si tienes que revisar un pago, {f}.",
        ),
        ("el congelamiento empieza el día {day} a las {hh}:00", "Calendario: {f}."),
        ("nos quedan {k} mil euros de infraestructura este trimestre", "De presupuesto, {f}."),
        (
            "la dirección de devolución es {street} {num}, {postcode} {city}",
            "Para la etiqueta de envío, {f}.",
        ),
        ("la solicitud de cambio para producción es la CHG{acct7}", "Ah, {f}."),
        (
            "el teléfono de {given} para la noche del despliegue es {phone}",
            "Por si algo se tuerce, {f}.",
        ),
    ),
    "zh": (
        ("我是{zh}，负责 {team} 组的技术", "你好，{f}。更新日志里写我的名字。"),
        ("安卓端还在用 Kotlin 1.{kt}", "说明一下，{f}。"),
        ("测试支付走的是 Stripe 账号 acct_{acct}", "要查支付记录的话，{f}。"),
        ("{day} 号 {hh}:00 开始封版", "时间安排：{f}。"),
        ("这个季度基础设施预算还剩 {k} 万欧元", "预算方面，{f}。"),
        ("上线的变更单号是 CHG{acct7}", "对了，{f}。"),
        ("跳板机是 {host}", "从外网连数据库的话，{f}。"),
        ("报问题的客户 ID 是 {cus}", "背景：{f}。"),
    ),
    "pt": (
        (
            "sou a {given} {family}, tech lead da equipa {team}",
            "Olá, {f}. Põe o meu nome no changelog.",
        ),
        ("a app Android ainda está no Kotlin 1.{kt}", "Só para saberes, {f}."),
        ("o RDS corre Postgres {pg}", "Para constar, {f}; o contentor local é mais recente."),
        (
            "os pagamentos de teste passam pela conta Stripe acct_{acct}",
            "Se precisares de ver um pagamento, {f}.",
        ),
        ("o congelamento começa no dia {day} às {hh}:00", "Calendário: {f}."),
        ("temos {k} mil euros para infraestrutura até ao fim do trimestre", "Orçamento: {f}."),
        (
            "a morada de devolução é {street}, {num}, {postcode} {city}",
            "Para o modelo da etiqueta, {f}.",
        ),
        ("os pagamentos a fornecedores vão para o IBAN {iban}", "Dados de teste: {f}."),
        (
            "o telemóvel do {given} para a noite do deploy é {phone}",
            "Se alguma coisa correr mal, {f}.",
        ),
        ("o pedido de mudança para produção é o CHG{acct7}", "Ah, {f}."),
        ("o cliente que reportou é o {cus}", "Contexto: {f}."),
    ),
    "fr": (
        (
            "je suis {given} {family}, lead tech de l'équipe {team}",
            "Bonjour, {f}. Mets mon nom dans le changelog.",
        ),
        ("le build Android est encore en Kotlin 1.{kt}", "Pour info, {f}."),
        (
            "la base RDS est en Postgres {pg}",
            "Pour mémoire, {f} ; le conteneur local est plus récent.",
        ),
        (
            "les paiements de test passent par le compte Stripe acct_{acct}",
            "Si tu dois vérifier un paiement, {f}.",
        ),
        ("le gel des livraisons commence le {day} à {hh} h", "Calendrier : {f}."),
        ("il nous reste {k} k€ de budget infra ce trimestre", "Côté budget, {f}."),
        ("l'adresse de retour est {num} {street}, {city}", "Pour le modèle d'étiquette, {f}."),
        ("le numéro de {given} pour la nuit de mise en prod est le {phone}", "Si ça dérape, {f}."),
        ("la demande de changement pour la prod est la CHG{acct7}", "Ah, {f}."),
        ("le bastion est {host}", "Pour joindre la base depuis l'extérieur, {f}."),
        ("l'app iOS supporte encore {ios}", "Garde en tête que {f}."),
    ),
    "de": (
        (
            "ich bin {given} {family}, Tech Lead im Team {team}",
            "Hallo, {f}. Bitte meinen Namen in den Changelog.",
        ),
        ("der Android-Build hängt noch auf Kotlin 1.{kt}", "Zur Info: {f}."),
        ("RDS läuft mit Postgres {pg}", "Fürs Protokoll: {f}; der lokale Container ist neuer."),
        (
            "Testzahlungen laufen über das Stripe-Konto acct_{acct}",
            "Falls du eine Zahlung prüfen musst: {f}.",
        ),
        ("der Code-Freeze beginnt am {day}. um {hh}:00 Uhr", "Zeitplan: {f}."),
        ("für Infrastruktur sind dieses Quartal noch {k}k EUR übrig", "Zum Budget: {f}."),
        (
            "die Rücksendeadresse ist {street} {num}, {postcode} {city}",
            "Für die Etikettenvorlage: {f}.",
        ),
        ("der Change Request für Prod ist CHG{acct7}", "Ach so, {f}."),
        ("der Bastion-Host ist {host}", "Um von außen an die DB zu kommen: {f}."),
        ("der meldende Kunde ist {cus}", "Hintergrund: {f}."),
    ),
}


def user_fact(lang: str, rng: Random) -> tuple[str, str, str]:
    """(message, needle, sort): a fact the user states, the exact fragment that states it, and
    which of the language's facts it is."""
    i = rng.randrange(len(FACTS[lang]))
    fact, frame = FACTS[lang][i]
    needle = fact.format(**_values(rng))
    return frame.format(f=needle), needle, f"fact/{lang}/{i}"


# --- planted: decisions --------------------------------------------------------------------------

DECISIONS = {
    "en": (
        "Going with a queue table in Postgres: we already run it and the volume is a few hundred jobs an hour.",
        "Optimistic locking wins here — two admins editing the same record is rare and a retry is cheap.",
        "Picked Testcontainers over the in-memory H2 database given that the bug only shows up with Postgres' JSONB operators.",
        "Decided against caching the tariff table since rates change mid-month and a stale rate would bill people wrongly.",
        "Decision: keep the CSV export synchronous. Rationale: files stay under 2 MB and a background job would need a new notification path.",
        "Settled on putting the new planner behind a flag, which lets ops switch back without a deploy.",
        "Retries get jitter and a 30 s cap instead of the fixed 5 s sleep — with 200 lockers reconnecting at once, the fixed sleep is what flattened the broker.",
        "Splitting this into two PRs — the rename is mechanical, and mixed with the logic change it would hide the logic change.",
        "Using ON CONFLICT DO NOTHING for the import: the upstream file repeats rows and the first copy is the authoritative one.",
        "Chose a per-tenant semaphore over a global rate limit, as one noisy tenant shouldn't slow everyone else down.",
        "Sticking with the generated client; the hand-written calls drifted from the schema twice last quarter.",
        "Not upgrading the ORM in this change. It drags in unrelated query changes, so it gets its own ticket.",
        "Rolling the firmware out to 10% of lockers first, because a bad image can't be rolled back remotely.",
        "Helm over plain manifests for this one, given the same chart has to run in three regions with different values.",
        "Dropping the Redis lock in favour of a Postgres advisory lock — one less moving part, and the critical section already holds a transaction.",
        "Plan: a materialised view refreshed every 10 minutes. Why: the dashboard tolerates that staleness and the raw query takes 40 s.",
    ),
    "es": (
        "Me quedo con una tabla de cola en Postgres: ya la tenemos en marcha y el volumen son unos cientos de trabajos por hora.",
        "Aquí gana el bloqueo optimista: que dos administradores editen el mismo registro es raro y reintentar sale barato.",
        "Descarto cachear la tabla de tarifas, porque cambian a mitad de mes y una tarifa vieja facturaría mal.",
        "Decisión: la exportación CSV sigue siendo síncrona. Motivo: los ficheros no pasan de 2 MB y un proceso en segundo plano pediría otra vía de aviso.",
        "Los reintentos llevan jitter y un tope de 30 s en lugar del sleep fijo de 5 s — con 200 taquillas reconectando a la vez, el sleep fijo es lo que tumbó el broker.",
        "Parto esto en dos PR: el renombrado es mecánico y mezclado con el cambio de lógica lo taparía.",
        "Elegí un semáforo por cliente en vez de un límite global; un cliente ruidoso no debería frenar a todos.",
        "No actualizo el ORM en este cambio: trae cambios de consultas que no vienen a cuento, irá en su propio ticket.",
        "Despliego el firmware primero al 10 % de las taquillas, dado que una imagen mala no se puede revertir en remoto.",
        "Opto por Helm frente a manifiestos sueltos: el mismo chart corre en tres regiones con valores distintos.",
        "Quito el candado de Redis y uso un advisory lock de Postgres — una pieza menos, y la sección crítica ya va dentro de una transacción.",
        "Mantengo el cliente generado; las llamadas escritas a mano se desviaron del esquema dos veces el trimestre pasado.",
    ),
    "zh": (
        "决定用 Postgres 里的队列表：数据库本来就在用，量也就每小时几百个任务。",
        "这里选乐观锁——两个管理员同时改同一条记录的情况很少，重试成本也低。",
        "不缓存费率表了，费率会在月中调整，用旧费率会算错账。",
        "结论：CSV 导出保持同步。理由：文件都在 2 MB 以内，改成后台任务还得另做通知。",
        "重试改成带抖动、上限 30 秒，不再固定睡 5 秒——200 个柜子同时重连时，就是固定间隔把 broker 压垮的。",
        "拆成两个 PR：改名是机械性的，和逻辑改动混在一起会把逻辑改动淹没。",
        "选了按租户的信号量，没用全局限流，一个吵闹的租户不该拖慢所有人。",
        "这次不升级 ORM，它会带进一堆无关的查询变化，单独开工单处理。",
        "固件先推给 10% 的柜子，坏镜像没法远程回滚。",
        "这个用 Helm 而不用裸清单，同一个 chart 要在三个区域用不同参数部署。",
        "去掉 Redis 锁，换成 Postgres 的 advisory lock——少一个组件，而且临界区本来就在事务里。",
        "继续用生成的客户端，手写的调用上个季度已经两次和接口定义对不上了。",
    ),
    "pt": (
        "Vou com uma tabela de fila no Postgres: já o temos a correr e o volume são umas centenas de jobs por hora.",
        "Aqui ganha o bloqueio otimista — dois administradores a editar o mesmo registo é raro e repetir sai barato.",
        "Escolhi Testcontainers em vez do H2 em memória, já que o bug só aparece com os operadores JSONB do Postgres.",
        "Decidi não pôr a tabela de tarifas em cache, porque as tarifas mudam a meio do mês e uma tarifa antiga faturava mal.",
        "Decisão: a exportação CSV continua síncrona. Motivo: os ficheiros não passam dos 2 MB e um job em segundo plano precisava de outro canal de aviso.",
        "Os retries passam a ter jitter e um teto de 30 s em vez do sleep fixo de 5 s — com 200 cacifos a religar ao mesmo tempo, foi o sleep fixo que deitou o broker abaixo.",
        "Divido isto em dois PRs — o renomear é mecânico e, misturado com a lógica, escondia a mudança de lógica.",
        "Optei por um semáforo por cliente em vez de um limite global, pois um cliente barulhento não deve atrasar os outros.",
        "Não atualizo o ORM nesta alteração: traz mudanças de queries que não têm nada a ver, fica para um ticket próprio.",
        "O firmware vai primeiro para 10% dos cacifos, porque uma imagem má não se reverte remotamente.",
        "Helm em vez de manifestos soltos, dado que o mesmo chart corre em três regiões com valores diferentes.",
        "Tiro o lock do Redis e passo para um advisory lock do Postgres — menos uma peça, e a secção crítica já está dentro de uma transação.",
        "Fico com o cliente gerado; as chamadas escritas à mão desalinharam-se do esquema duas vezes no último trimestre.",
    ),
    "fr": (
        "Je pars sur une table de file d'attente dans Postgres : on l'exploite déjà et le volume tourne autour de quelques centaines de jobs par heure.",
        "Le verrouillage optimiste l'emporte ici — deux admins qui modifient le même enregistrement, c'est rare, et une nouvelle tentative ne coûte rien.",
        "J'ai pris Testcontainers plutôt que H2 en mémoire, vu que le bug n'apparaît qu'avec les opérateurs JSONB de Postgres.",
        "Pas de cache sur la table des tarifs : ils changent en milieu de mois et un tarif périmé facturerait faux.",
        "Décision : l'export CSV reste synchrone. Justification : les fichiers font moins de 2 Mo et un job en arrière-plan demanderait un nouveau canal de notification.",
        "Les relances prennent du jitter et un plafond de 30 s au lieu du sleep fixe de 5 s — avec 200 casiers qui se reconnectent en même temps, c'est le sleep fixe qui a mis le broker à genoux.",
        "Je découpe en deux PR — le renommage est mécanique et, mêlé au changement de logique, il le masquerait.",
        "Retenu : un sémaphore par client plutôt qu'une limite globale, car un client bruyant ne doit pas ralentir tout le monde.",
        "Je ne mets pas l'ORM à jour dans ce changement ; il embarque des modifications de requêtes sans rapport, ce sera un ticket à part.",
        "Le firmware part d'abord sur 10 % des casiers, une image défectueuse ne pouvant pas être annulée à distance.",
        "Helm plutôt que des manifestes bruts pour celui-ci, étant donné que le même chart tourne dans trois régions avec des valeurs différentes.",
        "J'abandonne le verrou Redis au profit d'un advisory lock Postgres — une pièce de moins, et la section critique tient déjà dans une transaction.",
        "On garde le client généré ; les appels écrits à la main ont divergé du schéma deux fois le trimestre dernier.",
    ),
    "de": (
        "Ich nehme eine Queue-Tabelle in Postgres: die Datenbank läuft ohnehin, und es sind nur ein paar hundert Jobs pro Stunde.",
        "Optimistisches Locking gewinnt hier — dass zwei Admins denselben Datensatz bearbeiten, ist selten, und ein Retry kostet wenig.",
        "Testcontainers statt H2 im Speicher, da der Fehler nur mit den JSONB-Operatoren von Postgres auftritt.",
        "Gegen einen Cache für die Tariftabelle entschieden, weil sich Tarife mitten im Monat ändern und ein veralteter Tarif falsch abrechnen würde.",
        "Entscheidung: der CSV-Export bleibt synchron. Begründung: die Dateien bleiben unter 2 MB, und ein Hintergrundjob bräuchte einen neuen Benachrichtigungsweg.",
        "Retries bekommen Jitter und eine Obergrenze von 30 s statt des festen 5-s-Sleeps — wenn 200 Schließfächer gleichzeitig neu verbinden, hat genau der feste Sleep den Broker umgehauen.",
        "Ich teile das in zwei PRs auf — die Umbenennung ist mechanisch und würde, mit der Logikänderung vermischt, diese verdecken.",
        "Ein Semaphor pro Mandant statt eines globalen Rate-Limits, denn ein lauter Mandant soll nicht alle anderen bremsen.",
        "Das ORM-Upgrade kommt nicht in diese Änderung; es zieht fremde Query-Änderungen nach sich und bekommt ein eigenes Ticket.",
        "Die Firmware geht zuerst an 10 % der Schließfächer, da sich ein fehlerhaftes Image nicht aus der Ferne zurückrollen lässt.",
        "Helm statt loser Manifeste, weil dasselbe Chart in drei Regionen mit unterschiedlichen Werten laufen muss.",
        "Der Redis-Lock fliegt raus, stattdessen ein Postgres-Advisory-Lock — ein Teil weniger, und der kritische Abschnitt läuft schon in einer Transaktion.",
        "Wir bleiben beim generierten Client; die handgeschriebenen Aufrufe sind letztes Quartal zweimal vom Schema abgewichen.",
    ),
}

DECISION_FRAMES = {
    "en": (
        "{d}",
        "{d}",
        "Weighed both options. {d} Moving on to the tests.",
        "{d} I'll note it in the PR description.",
    ),
    "es": ("{d}", "{d}", "He comparado las dos opciones. {d} Sigo con los tests."),
    "zh": ("{d}", "{d}", "两个方案都比较过了。{d}接下来写测试。"),
    "pt": ("{d}", "{d}", "Comparei as duas opções. {d} Passo aos testes."),
    "fr": ("{d}", "{d}", "J'ai comparé les deux options. {d} Je passe aux tests."),
    "de": ("{d}", "{d}", "Beide Varianten abgewogen. {d} Weiter mit den Tests."),
}

# --- planted: paths ---------------------------------------------------------------------------------

FILE_NAMED_FRAMES = {
    "en": (
        "The numbers in {path} came from finance last week; check them against what the code assumes.",
        "{path} is where the prod overrides live. Compare it with staging before changing anything.",
        "Read {path} first, it explains why the second retry exists.",
        "heads up, {path} got rewritten in the last release",
        "Can you also open {path}? Ana says the failing case is described in there.",
    ),
    "es": (
        "Las cifras de {path} las mandó finanzas la semana pasada; compáralas con lo que supone el código.",
        "En {path} están los valores de producción. Compáralos con staging antes de cambiar nada.",
        "Lee primero {path}, ahí se explica por qué existe el segundo reintento.",
    ),
    "zh": (
        "{path} 里的数字是财务上周给的，跟代码里的假设对一下。",
        "生产环境的覆盖配置在 {path}，改之前先和预发的对比一下。",
        "先读 {path}，里面解释了为什么要有第二次重试。",
    ),
    "pt": (
        "Os números em {path} vieram da contabilidade na semana passada; confirma se batem com o que o código assume.",
        "O {path} tem os valores de produção. Compara com staging antes de mudar o que quer que seja.",
        "Lê primeiro o {path}, explica porque é que existe a segunda tentativa.",
        "atenção que o {path} foi reescrito na última versão",
    ),
    "fr": (
        "Les chiffres de {path} viennent de la compta la semaine dernière ; vérifie qu'ils collent avec ce que suppose le code.",
        "{path} contient les surcharges de prod. Compare avec la préprod avant de changer quoi que ce soit.",
        "Lis d'abord {path}, ça explique pourquoi la deuxième tentative existe.",
        "au fait, {path} a été réécrit à la dernière version",
    ),
    "de": (
        "Die Zahlen in {path} kamen letzte Woche von der Buchhaltung; gleich sie mit dem ab, was der Code annimmt.",
        "In {path} liegen die Prod-Overrides. Vergleich sie mit Staging, bevor du etwas änderst.",
        "Lies zuerst {path}, da steht, warum es den zweiten Retry gibt.",
        "Achtung, {path} wurde im letzten Release neu geschrieben",
    ),
}

NAMED_PATHS = (
    "config/tenants/acme-corp/overrides.yaml",
    "ops/runbooks/restore-from-pitr.md",
    "infra/envs/prod-sa-east-1/terraform.tfvars",
    "services/tariffs/src/main/resources/rates/2026-Q2.csv",
    "apps/portal/src/app/(dashboard)/billing/page.tsx",
    "docs/legal/data-retention (v3).md",
    "tools/release/changelog.tmpl",
    "lib/lockerbay/carriers/ctt_pt.ex",
    "app/Exports/SepaXml/PainBuilder.php",
    "deploy/argocd/apps/berths-api.yaml",
    "src/Wardbook.Api/appsettings.Staging.json",
    ".github/ISSUE_TEMPLATE/incident.yml",
    "db/seeds/wards_lisboa.sql",
    "fixtures/carrier_rates/dhl-2026-05.json",
    "scripts/sql/backfill_night_band.sql",
    "packages/shared-types/src/tariff.d.ts",
    "mobile/android/app/src/main/res/values-pt-rBR/strings.xml",
    "terraform/modules/vpc/outputs.tf",
    "config/pricing/zones.de-AT.toml",
    "ansible/inventories/prod/group_vars/all/vault.yml",
    "spec/support/shared_examples/a_billable_record.rb",
    "src/main/resources/i18n/messages_fr_CA.properties",
    "docs/architecture/C4 - context.puml",
    "Sources/BerthKit/Resources/tide-tables/leixoes-2026.json",
    "notebooks/2026-05 night tariff check.ipynb",
    "crates/rostra-core/src/solver/constraints/weekend.rs",
    "include/turbine/blade/limits.hpp",
    "web/public/.well-known/apple-app-site-association",
    "k8s/clusters/fra-1/worker/pdb.yaml",
    "var/reports/reconciliation_2026-04_v2.xlsx.csv",
)

EDITED_PATHS: dict[str, tuple[str, ...]] = {
    "jvm": (
        "src/main/resources/db/migration/V2026.05.12.1__add_draft_limit.sql",
        "buildSrc/src/main/kotlin/harbor.java-conventions.gradle.kts",
        "src/test/resources/__files/tide-window@noon.json",
        "gradle/libs.versions.toml",
        "src/main/resources/application-local.yml",
        "src/main/java/org/harborline/berths/api/v2/BerthAssignmentController.java",
        "src/main/kotlin/org/tillage/plots/PlotYield.kt",
    ),
    "dotnet": (
        "src/Wardbook.Api/Properties/launchSettings.json",
        "src/Wardbook.Domain/Dosing/DoseCalculator.Pediatric.cs",
        "tests/Wardbook.Tests/Snapshots/DoseReportTests.Renders_summary.verified.txt",
        "Directory.Packages.props",
        "src/Wardbook.Api/appsettings.Development.json",
    ),
    "ruby": (
        "config/locales/pt-PT.yml",
        "app/views/lockers/_slot.html.erb",
        "db/migrate/20260512093012_add_bay_code_to_lockers.rb",
        "spec/fixtures/vcr_cassettes/Carrier_API/returns_rates.yml",
        "config/initializers/sidekiq.rb",
        "app/javascript/controllers/slot_picker_controller.js",
    ),
    "php": (
        "lang/fr/validation.php",
        "database/migrations/2026_05_12_101500_add_night_band_to_tariffs.php",
        "app/Http/Middleware/EnsureTenant.php",
        "routes/api_v2.php",
        "resources/views/bills/partials/_line.blade.php",
    ),
    "swift": (
        "Sources/BerthKit/Resources/Localizable.xcstrings",
        "Sources/BerthKit/Planner+Tide.swift",
        "Package.resolved",
        "HarborPilot.xcodeproj/xcshareddata/xcschemes/HarborPilot.xcscheme",
    ),
    "elixir": (
        "lib/lockerbay_web/live/bay_live/show.html.heex",
        "priv/repo/migrations/20260512093012_add_slot_size.exs",
        "config/runtime.exs",
        "test/support/fixtures/lockers_fixtures.ex",
    ),
    "infra": (
        "envs/prod-eu-central-1/rds.tf",
        "modules/ecs-service/variables.tf",
        "charts/berths-api/templates/cronjob-reindex.yaml",
        "ansible/roles/pgbouncer/templates/pgbouncer.ini.j2",
        ".github/workflows/terraform-plan.yml",
        "k8s/base/kustomization.yaml",
        "docker/nginx/conf.d/default.conf",
        "Dockerfile.worker",
    ),
    "web": (
        "src/routes/(auth)/reset/[token].tsx",
        "src/features/lockers/hooks/useSlot.ts",
        "src/styles/tokens.css.ts",
        "vite.config.mts",
        "src/locales/pt-PT/checkout.ftl",
        "src/components/ui/data-table/columns.tsx",
        ".storybook/preview.tsx",
        "src/mocks/handlers/carriers.ts",
    ),
    "python": (
        "meterly/tariffs/bands.py",
        "alembic/versions/0f3c9a1b2d4e_night_band.py",
        "src/meterly/_compat/zoneinfo_backport.py",
        "tests/data/readings_2026-04.csv",
        "meterly/jobs/__main__.py",
    ),
    "go": (
        "internal/rota/weekend_cover.go",
        "cmd/rostra-scheduler/main.go",
        "internal/rota/testdata/ward-b.golden",
        "api/openapi/rostra.v1.yaml",
        "internal/store/queries.sql.go",
    ),
    "rust": (
        "crates/rostra-core/src/solver/mod.rs",
        "crates/rostra-cli/src/bin/rota-solve.rs",
        "benches/solver_12w.rs",
        "crates/rostra-core/tests/snapshots/solve__ward_b.snap",
        "rust-toolchain.toml",
        ".cargo/config.toml",
    ),
    "cpp": (
        "src/blade/pitch_controller.cpp",
        "include/turbine/blade/state.hpp",
        "cmake/Dependencies.cmake",
        "tests/data/gusts-30ms.yaml",
        "CMakePresets.json",
    ),
    "python-real": (
        "docs/changes/12873.bugfix.rst",
        "changelog.d/+utc-offset.fixed.md",
        "scratch/check_edge_cases.py",
        "repro_case_2.py",
        "docs/releases/next.txt",
    ),
    "any": (
        "docs/adr/0012-queue-table-instead-of-sqs.md",
        ".github/CODEOWNERS",
        "docs/runbooks/On-call handover.md",
        ".env.example",
        "renovate.json5",
        ".tool-versions",
        "docs/decisions/2026-05 rate limits.md",
        ".gitlab-ci.yml",
        "compose.override.yaml",
        ".devcontainer/devcontainer.json",
        ".pre-commit-config.yaml",
    ),
}
