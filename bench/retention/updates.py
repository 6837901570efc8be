# ruff: noqa: RUF001 (Chinese and Japanese text use full-width punctuation)
"""Value updates for the long chats of the dev corpus: a person states a subject's value (a cap,
a deadline, a region, a phase, an owner, a style) and, later in the chat, gives it a new one.
The later value is the truth (kind ``current_value``); the earlier one is superseded.

Data, then one generator: frames per language (``{s}`` the subject, ``{v}`` its value), each
subject's name per language and how its values are drawn. An update never repeats the old
value (so a kept update says nothing stale), the two values never contain each other, and the
word "superseded" is never written: the stale check looks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random

from bench.retention.events import Say
from bench.retention.plants import Artifact, Plant, Taken

LANGS = ("en", "es", "de", "fr", "zh", "ja")

FIRST: dict[str, tuple[str, ...]] = {
    "en": ("For the record, {s} is {v}.", "Quick note so you have it: {s} is {v}."),
    "es": ("Para que lo tengas: {s} es {v}.", "Te lo apunto aquí: {s}, {v}."),
    "de": ("Zur Info: {s} – {v}.", "Damit du es hast: {s}: {v}."),
    "fr": ("Pour info : {s}, c'est {v}.", "Note-le : {s}, {v}."),
    "zh": ("记一下：{s}是{v}。", "先跟你说一声，{s}定的是{v}。"),
    "ja": ("メモしておいて：{s}は{v}です。", "念のため伝えておくね、{s}は{v}。"),
}
UPDATE: dict[str, tuple[str, ...]] = {
    "en": ("Change of plan: {s} is now {v}.", "Correction to what I told you earlier: {s} is {v}."),
    "es": ("Cambio de planes: {s} ahora es {v}.", "Corrijo lo de antes: {s} pasa a {v}."),
    "de": ("Planänderung: {s} ist jetzt {v}.", "Korrektur zu vorhin: {s} ab heute {v}."),
    "fr": ("Changement de programme : {s}, c'est maintenant {v}.", "Je corrige : {s} passe à {v}."),
    "zh": ("有变化：{s}改成{v}了。", "更正一下，{s}现在是{v}。"),
    "ja": ("変更です：{s}は{v}になりました。", "さっきの訂正：{s}は{v}に変更。"),
}
ACKS: dict[str, tuple[str, ...]] = {
    "en": ("Noted.", "Got it, thanks.", "OK, I have that."),
    "es": ("Anotado.", "Entendido, gracias.", "Vale, apuntado."),
    "de": ("Notiert.", "Alles klar, danke.", "Ok, hab ich."),
    "fr": ("C'est noté.", "Compris, merci.", "D'accord, je l'ai."),
    "zh": ("记下了。", "好的，明白。", "收到。"),
    "ja": ("メモしました。", "了解です。", "承知しました。"),
}

_MONTHS = {
    "en": (
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
    ),
    "es": (
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
    ),
    "de": (
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "September",
        "Oktober",
        "November",
    ),
    "fr": (
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "septembre",
        "octobre",
        "novembre",
    ),
}
_NAMES = {
    "en": (
        "Hannah Whitcombe",
        "Oliver Brandt",
        "Priscilla Okafor",
        "Dmitri Lawson",
        "Grace Tanaka-Hill",
        "Felix Montrose",
    ),
    "es": ("Inés Robledo", "Tomás Arriaga", "Carmen Villalba", "Rodrigo Peña", "Alba Cifuentes"),
    "de": ("Jana Kröger", "Matthias Veit", "Sabine Oltmanns", "Lukas Brenner", "Frieda Hauschild"),
    "fr": (
        "Camille Roussel",
        "Étienne Marchal",
        "Sophie Lagarde",
        "Bastien Ferrand",
        "Noémie Carpentier",
    ),
    "zh": ("刘一鸣", "赵晓雯", "孙浩然", "吴佳琪", "郑子涵"),
    "ja": ("佐藤美咲", "高橋健太", "伊藤彩花", "渡辺翔", "中村玲奈"),
}
_STYLES = {
    "en": (
        "bullet points",
        "one short paragraph",
        "a numbered list",
        "a two-column table",
        "plain sentences with no headings",
    ),
    "es": (
        "viñetas",
        "un solo párrafo corto",
        "una lista numerada",
        "una tabla de dos columnas",
        "frases sueltas sin títulos",
    ),
    "de": (
        "Stichpunkte",
        "ein kurzer Absatz",
        "eine nummerierte Liste",
        "eine Tabelle mit zwei Spalten",
        "Fließtext ohne Überschriften",
    ),
    "fr": (
        "des puces",
        "un seul paragraphe court",
        "une liste numérotée",
        "un tableau à deux colonnes",
        "des phrases simples sans titres",
    ),
    "zh": ("要点列表", "一段简短的话", "编号列表", "两栏表格", "不带标题的纯文字"),
    "ja": ("箇条書き", "短い一段落", "番号付きリスト", "2列の表", "見出しなしの文章"),
}
_REGIONS = (
    "eu-west",
    "eu-central",
    "eu-north",
    "us-east",
    "us-west",
    "ap-south",
    "ap-northeast",
    "sa-east",
    "ca-central",
)


def _rate(rng: Random, lang: str) -> str:
    n = rng.randrange(20, 400)
    return {
        "en": f"{n} requests a second",
        "es": f"{n} peticiones por segundo",
        "de": f"{n} Anfragen pro Sekunde",
        "fr": f"{n} requêtes par seconde",
        "zh": f"每秒 {n} 个请求",
        "ja": f"毎秒{n}リクエスト",
    }[lang]


def _spend(rng: Random, lang: str) -> str:
    n = rng.randrange(4, 30) * 5
    return {
        "en": f"{n} euros a day",
        "es": f"{n} euros al día",
        "de": f"{n} Euro am Tag",
        "fr": f"{n} euros par jour",
        "zh": f"每天 {n * 7} 元",
        "ja": f"1日{n * 150}円",
    }[lang]


def _date(rng: Random, lang: str) -> str:
    month, day = rng.randrange(10), rng.randint(1, 28)
    if lang in ("zh", "ja"):
        return f"{(1, 2, 3, 4, 5, 6, 7, 9, 10, 11)[month]}月{day}日"
    name = _MONTHS[lang][month]
    return {"es": f"{day} de {name}", "de": f"{day}. {name}"}.get(lang, f"{day} {name}")


def _region(rng: Random, lang: str) -> str:
    return f"{rng.choice(_REGIONS)}-{rng.randint(1, 3)}"


def _phase(rng: Random, lang: str) -> str:
    total = rng.randint(4, 9)
    at = rng.randint(2, total - 1)
    return {
        "en": f"phase {at} of {total}",
        "es": f"fase {at} de {total}",
        "de": f"Phase {at} von {total}",
        "fr": f"phase {at} sur {total}",
        "zh": f"第 {at} 阶段（共 {total} 个）",
        "ja": f"全{total}段階中の第{at}段階",
    }[lang]


def _owner(rng: Random, lang: str) -> str:
    return rng.choice(_NAMES[lang])


def _style(rng: Random, lang: str) -> str:
    return rng.choice(_STYLES[lang])


@dataclass(frozen=True, slots=True)
class Subject:
    key: str  # unique in a session
    kind: str  # cap, deadline, region, phase, owner, style
    names: Mapping[str, str]  # language -> what the person calls it
    value: Callable[[Random, str], str]


SUBJECTS: tuple[Subject, ...] = (
    Subject("cap:partner-api", "cap", {
        "en": "the rate cap on the partner API", "es": "el límite de la API de socios",
        "de": "das Limit der Partner-API", "fr": "la limite de l'API partenaire",
        "zh": "合作方 API 的限流", "ja": "パートナーAPIの上限"}, _rate),
    Subject("cap:trip-spend", "cap", {
        "en": "my daily spending cap on the trip", "es": "mi tope de gasto diario en el viaje",
        "de": "mein Tageslimit für Ausgaben auf der Reise",
        "fr": "mon plafond de dépenses par jour pendant le voyage",
        "zh": "旅行的每日花销上限", "ja": "旅行中の1日の予算上限"}, _spend),
    Subject("deadline:visa", "deadline", {
        "en": "the deadline for the visa papers", "es": "el plazo para los papeles del visado",
        "de": "die Frist für die Visumsunterlagen", "fr": "la date limite pour le dossier de visa",
        "zh": "签证材料的截止日期", "ja": "ビザ書類の締め切り"}, _date),
    Subject("deadline:grant", "deadline", {
        "en": "the due date for the grant report", "es": "la entrega del informe de la beca",
        "de": "der Abgabetermin für den Förderbericht", "fr": "la remise du rapport de subvention",
        "zh": "基金报告的提交日期", "ja": "助成金レポートの提出日"}, _date),
    Subject("region:photo-backups", "region", {
        "en": "the region for the photo backups",
        "es": "la región de las copias de seguridad de fotos",
        "de": "die Region für die Foto-Backups", "fr": "la région des sauvegardes de photos",
        "zh": "照片备份所在的区域", "ja": "写真バックアップのリージョン"}, _region),
    Subject("region:staging", "region", {
        "en": "the region the staging servers run in", "es": "la región de los servidores de pruebas",
        "de": "die Region der Testserver", "fr": "la région des serveurs de préproduction",
        "zh": "测试服务器的区域", "ja": "検証用サーバーのリージョン"}, _region),
    Subject("phase:kitchen", "phase", {
        "en": "the kitchen renovation", "es": "la obra de la cocina",
        "de": "die Küchenrenovierung", "fr": "l'avancement des travaux de la cuisine",
        "zh": "厨房装修的进度", "ja": "キッチン改装の進み具合"}, _phase),
    Subject("phase:db-migration", "phase", {
        "en": "the database migration", "es": "la migración de la base de datos",
        "de": "die Datenbankmigration", "fr": "la migration de la base de données",
        "zh": "数据库迁移", "ja": "データベース移行"}, _phase),
    Subject("owner:newsletter", "owner", {
        "en": "the person running the newsletter", "es": "quien lleva la newsletter",
        "de": "wer den Newsletter macht", "fr": "la personne qui gère la newsletter",
        "zh": "负责简报的人", "ja": "ニュースレターの担当"}, _owner),
    Subject("owner:pager", "owner", {
        "en": "whoever holds the pager this week", "es": "quien tiene la guardia esta semana",
        "de": "wer diese Woche Rufbereitschaft hat", "fr": "la personne d'astreinte cette semaine",
        "zh": "本周值班的人", "ja": "今週のオンコール担当"}, _owner),
    Subject("style:weekly-summary", "style", {
        "en": "how I want the weekly summary", "es": "cómo quiero el resumen semanal",
        "de": "die Form der Wochenzusammenfassung", "fr": "la forme du résumé de la semaine",
        "zh": "周报的格式", "ja": "週報の書き方"}, _style),
    Subject("style:trip-plans", "style", {
        "en": "the format for trip plans", "es": "el formato de los planes de viaje",
        "de": "das Format für Reisepläne", "fr": "le format des plans de voyage",
        "zh": "行程安排的格式", "ja": "旅行プランの形式"}, _style),
)  # fmt: skip
STALE_WORD = "superseded"  # never written here: the stale check looks for it


def value_plant(
    rng: Random,
    *,
    lang: str,
    used: set[str],
    taken: Taken,
    subjects: tuple[Subject, ...] = SUBJECTS,
    frames: tuple[Mapping[str, tuple[str, ...]], Mapping[str, tuple[str, ...]]] = (FIRST, UPDATE),
    acks: Mapping[str, tuple[str, ...]] = ACKS,
) -> Plant:
    """A subject's value, stated (``before``, some way earlier in the chat) and then updated:
    the update is the plant, its new value the ``current_value`` needle."""
    free = [s for s in subjects if s.key not in used]
    if not free:
        raise RuntimeError("no subject left for a value update in this session")
    subject = free[rng.randrange(len(free))]
    used.add(subject.key)
    first_frames, update_frames = frames
    name = subject.names[lang]
    for _ in range(100):
        old, new = subject.value(rng, lang), subject.value(rng, lang)
        first = rng.choice(first_frames[lang]).format(s=name, v=old)
        update = rng.choice(update_frames[lang]).format(s=name, v=new)
        if _distinct(old, new, first, update) and not (taken(old) or taken(new)):
            return Plant(
                "value_update",
                [Say("user", update), Say("assistant", rng.choice(acks[lang]))],
                [Artifact("current_value", new, {"language": lang, "subject": subject.kind,
                                                 "superseded": [old]})],
                before=[Say("user", first), Say("assistant", rng.choice(acks[lang]))],
                before_gap=rng.uniform(0.08, 0.22),
            )  # fmt: skip
    raise RuntimeError(f"no fresh values for {subject.key}")


def _distinct(old: str, new: str, first: str, update: str) -> bool:
    """Neither value is inside the other's statement (nor the other value), and the stale word
    is in neither."""
    texts = (first.lower(), update.lower())
    return (
        old not in update
        and new not in first
        and old not in new
        and new not in old
        and all(STALE_WORD not in t for t in texts)
    )
