# ruff: noqa: RUF001 (Chinese text uses full-width punctuation)
"""Chat filler of the kind a messaging gateway sees, seeded and deterministic.

Ordinary conversation, questions and their answers, acknowledgements, pings and bots, progress
notes with numbers that matter for a minute ("capped at 30s", "1.2k rps", "14 items"), and
templated status lines that differ by one word or one number (a deploy bot, a CI bot, the same
status sentence again and again). Mostly English, some Spanish, German, French and Chinese by
default; Japanese too when a caller asks for it (the retention corpus's long chats).

It is chatter: nothing in it is a lasting rule, fact or preference phrased as an instruction
(``RULE_WORDS`` lists the words it never uses; a test reads that table), and a caller can name
values that must never appear in it (``forbidden``): a line that would hold one is drawn again.
The templates and slot values below are data; ``chatter`` only draws from them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

# kind -> weight: how often each kind of exchange is drawn.
KINDS = {"talk": 20, "question": 14, "ack": 14, "ping": 10, "progress": 16, "status": 26}
# language -> weight: English mostly.
LANGUAGES = {"en": 76, "es": 6, "de": 6, "fr": 6, "zh": 6}

# Words that would make a line a rule, a standing instruction or a preference: chatter never
# holds them (Latin-script ones are whole words, Chinese ones any substring).
RULE_WORDS = {
    "en": (
        "never",
        "always",
        "must",
        "don't",
        "do not",
        "prefer",
        "prefers",
        "should",
        "make sure",
        "remember to",
        "from now on",
        "rule",
        "required",
        "mandatory",
        "not allowed",
        "forbidden",
        "constraint",
        "only use",
    ),
    "es": (
        "nunca",
        "siempre",
        "debe",
        "debes",
        "tienes que",
        "no hagas",
        "prefiero",
        "prefiere",
        "obligatorio",
        "regla",
        "a partir de ahora",
    ),
    "de": (
        "nie",
        "niemals",
        "immer",
        "muss",
        "musst",
        "darf nicht",
        "bevorzuge",
        "regel",
        "pflicht",
        "ab sofort",
    ),
    "fr": (
        "jamais",
        "toujours",
        "doit",
        "dois",
        "il faut",
        "je préfère",
        "obligatoire",
        "règle",
        "désormais",
        "interdit",
    ),
    "zh": ("必须", "不要", "永远", "总是", "禁止", "务必", "一定要", "规则", "以后都"),
    "ja": (
        "必ず",
        "絶対に",
        "してはいけない",
        "しないで",
        "禁止",
        "いつも",
        "常に",
        "ルール",
        "今後は",
    ),
}

_SERVICES = (
    "search",
    "billing",
    "checkout",
    "notifications",
    "ingest",
    "reports",
    "thumbnails",
    "mailer",
    "scheduler",
    "exports",
    "webhooks",
    "gateway",
)
_ENVS = ("staging", "production", "the preview env", "qa")
_NAMES = ("Ana", "Jonas", "Mei", "Luc", "Sam", "Omar", "Kenji", "Lea", "Tom", "Ines", "Ravi", "Zoe")
_TOPICS = (
    "the slides",
    "the invoice",
    "the demo",
    "the retro notes",
    "the roadmap doc",
    "the offsite",
    "the flaky test",
    "the release notes",
    "the dashboard",
    "the survey",
)
_BRANCHES = (
    "main",
    "release-2.{d}",
    "feat/search-facets",
    "feat/csv-export",
    "fix/dark-mode",
    "fix/retry-jitter",
    "chore/bump-deps",
    "feat/bulk-edit",
)
_CI_RESULTS = (
    "passed",
    "failed",
    "was cancelled",
    "timed out",
    "is green again",
    "is still running",
)
_STATES = (
    "rolling out",
    "done",
    "paused",
    "at {pct}%",
    "waiting on a reviewer",
    "queued",
    "halfway through",
)
_EMOJI = ("👍", "🎉", "🙏", "😅", "✅", "👀", "🚀", "☕")


def _branch(rng: random.Random) -> str:
    return rng.choice(_BRANCHES).format(d=rng.randrange(1, 20))


def _state(rng: random.Random) -> str:
    return rng.choice(_STATES).format(pct=rng.randrange(5, 96, 5))


# slot -> how a value is drawn. Numbers are transient: they matter for a minute, not a session.
SLOTS: dict[str, Callable[[random.Random], str]] = {
    "service": lambda r: r.choice(_SERVICES),
    "service2": lambda r: r.choice(_SERVICES),
    "env": lambda r: r.choice(_ENVS),
    "name": lambda r: r.choice(_NAMES),
    "topic": lambda r: r.choice(_TOPICS),
    "branch": _branch,
    "ci_result": lambda r: r.choice(_CI_RESULTS),
    "state": _state,
    "emoji": lambda r: r.choice(_EMOJI),
    "build": lambda r: str(r.randrange(1000, 10000)),
    "secs": lambda r: str(r.randrange(2, 91)),
    "ms": lambda r: str(r.randrange(12, 481)),
    "items": lambda r: str(r.randrange(2, 81)),
    "items2": lambda r: str(r.randrange(2, 81)),
    "pct": lambda r: str(r.randrange(1, 100)),
    "krps": lambda r: f"{r.randrange(4, 40) / 10:.1f}k",
    "mb": lambda r: str(r.randrange(3, 900)),
    "clock": lambda r: f"{r.randrange(7, 20):02d}:{r.randrange(0, 60, 5):02d}",
    "mins": lambda r: str(r.randrange(2, 46)),
    "pr": lambda r: str(r.randrange(100, 2000)),
}

# (kind, language) -> user-side templates. "question" lines are answered from ANSWERS.
TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("talk", "en"): (
        "morning all {emoji}",
        "back from lunch, catching up on the thread",
        "that demo went better than I expected",
        "I'm in the office today if anyone wants to pair",
        "coffee machine on 3 is fixed btw {emoji}",
        "reading {topic} now, looks good so far",
        "heads up, I'm out early today",
        "{name} says hi from the offsite",
        "the new laptop finally arrived",
        "ok that was a long meeting",
        "I'll be a bit late to the sync, sorry",
        "nice work on {topic}, {name}",
        "still chewing on yesterday's discussion about {topic}",
        "weather is awful here, working from home",
        "lol that error message is a classic",
        "I think we covered most of it in the call",
        "quick brain dump: {topic} is mostly done, the rest is polish",
        "trying the new {service} dashboard, it is a lot faster",
    ),
    ("question", "en"): (
        "anyone know where {topic} ended up?",
        "is {env} up right now?",
        "did the {service} deploy go out?",
        "who has the link to {topic}?",
        "how long does the {service} test suite take these days?",
        "are we still meeting at {clock}?",
        "is PR #{pr} ready for another look?",
        "what was the build number for the last green run?",
        "can someone check why {service} is slow?",
        "did anyone else get logged out just now?",
        "is the {service} queue draining?",
        "where do I find the logs for {service}?",
    ),
    ("ack", "en"): (
        "ok",
        "thanks!",
        "ty {emoji}",
        "sounds good",
        "perfect, thanks",
        "got it",
        "cool",
        "{emoji}",
        "makes sense",
        "nice",
        "ok will do",
        "great, thank you",
        "yep",
        "ack",
        "👍 thanks {name}",
    ),
    ("ping", "en"): (
        "@here sync in {mins} min",
        "ping {name}",
        "[reminder-bot] Stand-up starts in {mins} minutes.",
        "[calendar] {topic} review moved to {clock}",
        "@{name} when you have a sec",
        "[pagerbot] alert resolved: {service} latency back to normal",
        "[pagerbot] {service} error rate {pct}% over the last {mins} min",
        "[dependabot] opened PR #{pr}: bump a dev dependency",
        "bump",
        "[standup-bot] {items} of {items2} people have posted their update",
    ),
    ("progress", "en"): (
        "retries on {service} are capped at {secs}s for now while we look",
        "load test is at {krps} rps, no errors yet",
        "{items} items left in the import queue",
        "migration script processed {items} of {items2} tables",
        "p95 for {service} is {ms} ms after the cache warmed up",
        "export is {pct}% done, about {mins} min to go",
        "cleared {items} stale jobs from the {service} queue",
        "memory on the {service} box is at {pct}%",
        "uploaded {mb} MB of fixtures to the scratch bucket",
        "rebased {branch}, {items} conflicts, fixing them now",
        "triaged {items} tickets this morning, {items2} left",
        "the batch job took {mins} min this time, was {mins} yesterday",
    ),
    ("status", "en"): (
        "[deploy-bot] {service} → {env}: finished in {secs}s",
        "[deploy-bot] {service} → {env}: started by {name}",
        "[deploy-bot] {service} → {env}: rolled back after {secs}s",
        "[ci] Build #{build} {ci_result} on {branch}",
        "[ci] Build #{build} {ci_result} on {branch} ({mins} min)",
        "[ci] Pipeline #{build} for {branch}: {items} jobs, {ci_result}",
        "The {service} deploy is {state}.",
        "The {service} deploy is {state}.",
        "The {service} migration is {state}.",
        "Status: {service} {state}, {service2} ok",
        "[uptime] {service} is up ({ms} ms)",
        "[uptime] {service} is up ({ms} ms)",
        "[backup] nightly backup of {service} finished at {clock}, {mb} MB",
        "[queue] depth {items} (was {items2})",
        "[cron] report job for {service} ran in {secs}s",
    ),
    ("talk", "es"): (
        "buenos días a todos {emoji}",
        "vuelvo en diez minutos",
        "la demo salió bastante bien",
        "hoy trabajo desde casa",
        "estoy leyendo {topic}, pinta bien",
        "qué reunión más larga",
    ),
    ("question", "es"): (
        "¿alguien sabe dónde quedó {topic}?",
        "¿está arriba {env}?",
        "¿seguimos con la reunión a las {clock}?",
        "¿salió ya el despliegue de {service}?",
    ),
    ("ack", "es"): ("vale", "¡gracias!", "perfecto", "entendido {emoji}", "de acuerdo", "genial"),
    ("ping", "es"): ("@{name} ¿tienes un minuto?", "[recordatorio] reunión en {mins} minutos"),
    ("progress", "es"): (
        "quedan {items} elementos en la cola de importación",
        "la exportación va por el {pct}%",
        "la prueba de carga va por {krps} rps sin errores",
    ),
    ("status", "es"): (
        "[ci] Compilación #{build} {ci_result_es} en {branch}",
        "El despliegue de {service} está {state_es}.",
        "[despliegue] {service} → {env}: terminado en {secs}s",
    ),
    ("talk", "de"): (
        "Guten Morgen zusammen {emoji}",
        "bin gleich wieder da",
        "die Demo lief echt gut",
        "heute im Homeoffice",
        "lese gerade {topic}, sieht gut aus",
    ),
    ("question", "de"): (
        "weiß jemand, wo {topic} gelandet ist?",
        "läuft {env} gerade?",
        "bleibt es bei {clock} für das Meeting?",
        "ist das Deployment von {service} schon raus?",
    ),
    ("ack", "de"): ("ok", "danke!", "passt", "alles klar {emoji}", "super, danke", "verstanden"),
    ("ping", "de"): ("@{name} hast du kurz Zeit?", "[Erinnerung] Meeting in {mins} Minuten"),
    ("progress", "de"): (
        "noch {items} Einträge in der Import-Warteschlange",
        "der Export ist bei {pct}%",
        "Lasttest bei {krps} rps, keine Fehler",
    ),
    ("status", "de"): (
        "[ci] Build #{build} {ci_result_de} auf {branch}",
        "Das Deployment von {service} ist {state_de}.",
        "[deploy] {service} → {env}: fertig nach {secs}s",
    ),
    ("talk", "fr"): (
        "bonjour à tous {emoji}",
        "je reviens dans dix minutes",
        "la démo s'est bien passée",
        "télétravail aujourd'hui",
        "je lis {topic}, ça a l'air bien",
    ),
    ("question", "fr"): (
        "quelqu'un sait où est passé {topic} ?",
        "est-ce que {env} répond ?",
        "on garde la réunion à {clock} ?",
        "le déploiement de {service} est parti ?",
    ),
    ("ack", "fr"): ("ok", "merci !", "parfait", "d'accord {emoji}", "super, merci", "compris"),
    ("ping", "fr"): ("@{name} tu as une minute ?", "[rappel] réunion dans {mins} minutes"),
    ("progress", "fr"): (
        "encore {items} éléments dans la file d'import",
        "l'export en est à {pct}%",
        "test de charge à {krps} rps, aucune erreur",
    ),
    ("status", "fr"): (
        "[ci] Build #{build} {ci_result_fr} sur {branch}",
        "Le déploiement de {service} est {state_fr}.",
        "[déploiement] {service} → {env} : terminé en {secs}s",
    ),
    ("talk", "zh"): (
        "大家早上好 {emoji}",
        "我十分钟后回来",
        "演示效果不错",
        "今天在家办公",
        "正在看{topic_zh}，看起来不错",
    ),
    ("question", "zh"): (
        "有人知道{topic_zh}放哪儿了吗？",
        "{env}现在能用吗？",
        "会议还是{clock}开吗？",
        "{service} 的部署上线了吗？",
    ),
    ("ack", "zh"): ("好的", "谢谢！", "收到 {emoji}", "没问题", "明白了", "好嘞"),
    ("ping", "zh"): ("@{name} 有空吗？", "[提醒] 会议{mins}分钟后开始"),
    ("progress", "zh"): (
        "导入队列里还剩 {items} 条",
        "导出进度 {pct}%",
        "压测到 {krps} rps，没有报错",
    ),
    ("status", "zh"): (
        "[ci] 构建 #{build} 在 {branch} 上{ci_result_zh}",
        "{service} 的部署{state_zh}。",
        "[部署] {service} → {env}：{secs} 秒完成",
    ),
    ("talk", "ja"): (
        "おはようございます {emoji}",
        "10分で戻ります",
        "デモうまくいきました",
        "今日は在宅です",
        "{topic_ja}を読んでます、よさそう",
    ),
    ("question", "ja"): (
        "{topic_ja}ってどこにありますか？",
        "{env}って今動いてますか？",
        "ミーティングは{clock}のままですか？",
        "{service} のデプロイ終わりました？",
    ),
    ("ack", "ja"): ("了解です", "ありがとう！", "OKです {emoji}", "承知しました", "助かります"),
    ("ping", "ja"): ("@{name} ちょっといいですか？", "[リマインダー] {mins}分後に会議です"),
    ("progress", "ja"): (
        "インポート待ちが残り {items} 件",
        "エクスポートは {pct}% まで来ました",
        "負荷試験 {krps} rps、エラーなし",
    ),
    ("status", "ja"): (
        "[ci] ビルド #{build} は {branch} で{ci_result_ja}",
        "{service} のデプロイは{state_ja}。",
        "[デプロイ] {service} → {env}：{secs}秒で完了",
    ),
}

# Localized slot values for the templates above that need them.
SLOTS.update(
    {
        "ci_result_es": lambda r: r.choice(("pasó", "falló", "se canceló", "sigue en curso")),
        "state_es": lambda r: r.choice(("en curso", "terminado", "en pausa", "en cola")),
        "ci_result_de": lambda r: r.choice(("erfolgreich", "fehlgeschlagen", "abgebrochen")),
        "state_de": lambda r: r.choice(("unterwegs", "fertig", "pausiert", "in der Warteschlange")),
        "ci_result_fr": lambda r: r.choice(("réussi", "échoué", "annulé", "en cours")),
        "state_fr": lambda r: r.choice(("en cours", "terminé", "en pause", "en attente")),
        "ci_result_zh": lambda r: r.choice(("通过了", "失败了", "被取消了", "还在跑")),
        "state_zh": lambda r: r.choice(("进行中", "完成了", "暂停了", "排队中")),
        "topic_zh": lambda r: r.choice(("幻灯片", "发票", "周报", "复盘记录", "路线图")),
        "ci_result_ja": lambda r: r.choice(
            ("成功しました", "失敗しました", "キャンセルされました")
        ),
        "state_ja": lambda r: r.choice(
            ("進行中です", "完了しました", "一時停止中です", "待機中です")
        ),
        "topic_ja": lambda r: r.choice(
            ("スライド", "請求書", "週報", "振り返りメモ", "ロードマップ")
        ),
    }
)

# language -> the assistant's short replies; "question" exchanges are answered from ANSWERS.
REPLIES: dict[str, tuple[str, ...]] = {
    "en": (
        "Got it.",
        "Thanks!",
        "On it.",
        "Sure.",
        "👍",
        "Looking now.",
        "Done.",
        "Noted, thanks.",
        "Will check after lunch.",
        "Ok.",
        "Nice!",
        "Makes sense.",
        "Checking the logs now.",
        "Sounds good.",
        "Thanks for the heads up.",
    ),
    "es": ("Entendido.", "¡Gracias!", "Vale.", "Lo miro ahora.", "Perfecto."),
    "de": ("Verstanden.", "Danke!", "Alles klar.", "Schaue ich mir an.", "Passt."),
    "fr": ("Compris.", "Merci !", "D'accord.", "Je regarde.", "Parfait."),
    "zh": ("好的。", "收到。", "谢谢！", "我看一下。", "明白。"),
    "ja": (
        "了解です。",
        "ありがとうございます！",
        "確認します。",
        "承知しました。",
        "見てみます。",
    ),
}
ANSWERS: dict[str, tuple[str, ...]] = {
    "en": (
        "It's in the shared folder.",
        "Yes, it is up.",
        "About {mins} minutes now.",
        "Not yet, {name} is on it.",
        "I think so, checking.",
        "Yes, merged this morning.",
        "Looks like it, {items} jobs left.",
        "Build #{build}, I think.",
    ),
    "es": ("Está en la carpeta compartida.", "Sí, ya salió.", "Todavía no, lo mira {name}."),
    "de": ("Liegt im geteilten Ordner.", "Ja, ist raus.", "Noch nicht, {name} ist dran."),
    "fr": (
        "C'est dans le dossier partagé.",
        "Oui, c'est parti.",
        "Pas encore, {name} s'en occupe.",
    ),
    "zh": ("在共享文件夹里。", "已经上线了。", "还没有，{name} 在处理。"),
    "ja": ("共有フォルダにあります。", "もう出ています。", "まだです、{name} さんが対応中です。"),
}

_SLOT = re.compile(r"\{(\w+)\}")
_MAX_REDRAWS = 10_000  # in a row: the forbidden values leave (almost) nothing to say


@dataclass(frozen=True, slots=True)
class Exchange:
    kind: str
    language: str
    user: str  # what the person wrote
    assistant: str  # the assistant's short reply


def fill(template: str, rng: random.Random) -> str:
    """The template with each ``{slot}`` drawn from ``SLOTS``."""
    return _SLOT.sub(lambda m: SLOTS[m.group(1)](rng), template)


def _pick(rng: random.Random, weights: Mapping[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _draw(rng: random.Random, languages: Mapping[str, int]) -> Exchange:
    language = _pick(rng, languages)
    kind = _pick(rng, KINDS)
    user = fill(rng.choice(TEMPLATES[kind, language]), rng)
    replies = ANSWERS if kind == "question" else REPLIES
    return Exchange(kind, language, user, fill(rng.choice(replies[language]), rng))


def holds_any(text: str, values: Collection[str]) -> bool:
    """Whether any of ``values`` occurs in ``text``, case-insensitively (as the kit probes)."""
    lower = text.lower()
    return any(v in lower for v in values)


def chatter(
    seed: int | str,
    *,
    forbidden: Collection[str] = (),
    languages: Mapping[str, int] = LANGUAGES,
) -> Iterator[Exchange]:
    """An endless, deterministic stream of exchanges for ``seed`` in ``languages`` (by weight;
    any of ``LANGUAGES`` and Japanese); none holds a forbidden value (an exchange that would is
    drawn again)."""
    rng = random.Random(f"chatter:{seed}")
    values = {v.lower() for v in forbidden if v}
    misses = 0
    while True:
        exchange = _draw(rng, languages)
        if holds_any(exchange.user, values) or holds_any(exchange.assistant, values):
            misses += 1
            if misses > _MAX_REDRAWS:
                raise ValueError(f"the forbidden values rule out almost every line: {values}")
            continue
        misses = 0
        yield exchange
