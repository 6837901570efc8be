# ruff: noqa: RUF001 (Chinese and Japanese text use full-width punctuation)
"""Value updates for the long chats of the held-out corpus: the same kind of plant as
``updates`` (a subject's value stated, then replaced; the later one is the truth), written
separately: other subjects, other frames (the value sometimes before its subject), other value
shapes (ISO dates, Azure-style regions, lettered stages, job counts and gigabytes), other names.
The plant itself is made by ``updates.value_plant``.
"""

from __future__ import annotations

from random import Random

from bench.retention.plants import Plant, Taken
from bench.retention.updates import Subject, value_plant

FIRST: dict[str, tuple[str, ...]] = {
    "en": ("Heads-up for later — {s}: {v}.", "So you know, we settled on {v} for {s}."),
    "es": ("Apunta esto, {s}: {v}.", "Quedamos en {v} para {s}."),
    "de": ("Merk dir das: {s} – {v}.", "Wir haben {v} für {s} vereinbart."),
    "fr": ("Retiens ça : {s}, {v}.", "On a retenu {v} pour {s}."),
    "zh": ("你记着：{s}——{v}。", "我们定了，{s}用{v}。"),
    "ja": ("覚えておいて：{s}は{v}。", "{s}は{v}で決まったよ。"),
}
UPDATE: dict[str, tuple[str, ...]] = {
    "en": ("Scratch that earlier one, {s} moved to {v}.", "New info on {s}: it's {v} now."),
    "es": ("Olvida lo anterior, {s} cambió a {v}.", "Novedad sobre {s}: ahora es {v}."),
    "de": ("Vergiss das von vorhin, {s} ist auf {v} gewechselt.", "Neu bei {s}: jetzt {v}."),
    "fr": (
        "Oublie ce que je t'ai dit, {s} est passé à {v}.",
        "Du nouveau pour {s} : maintenant {v}.",
    ),
    "zh": ("之前说的不算了，{s}换成{v}。", "{s}有新消息：现在是{v}。"),
    "ja": ("前のは取り消し、{s}は{v}に変わった。", "{s}の件、今は{v}です。"),
}
ACKS: dict[str, tuple[str, ...]] = {
    "en": ("Thanks, updated on my side.", "Okay, I'll go with that."),
    "es": ("Gracias, lo cambio.", "De acuerdo, me quedo con eso."),
    "de": ("Danke, ist vermerkt.", "Gut, dann so."),
    "fr": ("Merci, je mets à jour.", "Entendu, on part là-dessus."),
    "zh": ("好，我这边更新了。", "行，就按这个来。"),
    "ja": ("ありがとう、更新しておきます。", "わかりました、それでいきます。"),
}

_NAMES = {
    "en": ("Maeve Thornbury", "Caleb Ashworth", "Yolanda Price", "Rupert Kilgore", "Nia Osei"),
    "es": ("Ximena Barragán", "Gonzalo Iturbe", "Remedios Ulloa", "Ignacio Salcedo"),
    "de": ("Henrike Wachter", "Jörg Lindqvist", "Annika Vosskuhl", "Bernd Ostermeier"),
    "fr": ("Margaux Vidal", "Thibault Lemaire", "Océane Garnier", "Gaspard Duval"),
    "zh": ("钱思琪", "冯宇航", "蒋欣然", "韩子墨"),
    "ja": ("森本千尋", "石川大輔", "小林由衣", "松田陸"),
}
_STYLES = {
    "en": (
        "short and casual",
        "formal, in full sentences",
        "two lines at most",
        "with a checklist at the end",
    ),
    "es": (
        "cortas e informales",
        "formales, con frases completas",
        "de dos líneas como máximo",
        "con una lista de tareas al final",
    ),
    "de": (
        "kurz und locker",
        "förmlich, in ganzen Sätzen",
        "höchstens zwei Zeilen",
        "mit einer Checkliste am Ende",
    ),
    "fr": (
        "courts et détendus",
        "formels, en phrases complètes",
        "deux lignes au maximum",
        "avec une checklist à la fin",
    ),
    "zh": ("简短随意", "正式完整的句子", "最多两行", "结尾附待办清单"),
    "ja": ("短くカジュアルに", "丁寧な文章で", "2行以内", "最後にチェックリスト付き"),
}
_REGIONS = (
    "westeurope",
    "northeurope",
    "francecentral",
    "germanywestcentral",
    "japaneast",
    "japanwest",
    "brazilsouth",
    "australiaeast",
    "uksouth",
    "eastus2",
    "canadacentral",
)
_STAGES = "BCDEFGH"


def _jobs(rng: Random, lang: str) -> str:
    n = rng.randint(2, 64)
    return {
        "en": f"{n} parallel jobs",
        "es": f"{n} trabajos en paralelo",
        "de": f"{n} parallele Jobs",
        "fr": f"{n} jobs en parallèle",
        "zh": f"{n} 个并行任务",
        "ja": f"並列{n}件",
    }[lang]


def _gigabytes(rng: Random, lang: str) -> str:
    return f"{rng.randint(3, 150)} GB"


def _iso_date(rng: Random, lang: str) -> str:
    return f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _azure_region(rng: Random, lang: str) -> str:
    return rng.choice(_REGIONS)


def _stage(rng: Random, lang: str) -> str:
    letter = rng.choice(_STAGES)
    return {
        "en": f"stage {letter}",
        "es": f"la etapa {letter}",
        "de": f"Etappe {letter}",
        "fr": f"l'étape {letter}",
        "zh": f"{letter} 阶段",
        "ja": f"ステージ{letter}",
    }[lang]


def _owner(rng: Random, lang: str) -> str:
    return rng.choice(_NAMES[lang])


def _style(rng: Random, lang: str) -> str:
    return rng.choice(_STYLES[lang])


SUBJECTS: tuple[Subject, ...] = (
    Subject("cap:ci-jobs", "cap", {
        "en": "parallel build jobs on the CI runner", "es": "los trabajos del runner de CI",
        "de": "parallele Build-Jobs auf dem CI-Runner", "fr": "les builds du runner CI",
        "zh": "CI 机器上的并行构建数", "ja": "CIランナーの並列ビルド数"}, _jobs),
    Subject("cap:phone-data", "cap", {
        "en": "the data cap on my phone plan", "es": "el límite de datos de mi tarifa",
        "de": "das Datenvolumen meines Handytarifs", "fr": "le forfait data de mon téléphone",
        "zh": "手机套餐的流量上限", "ja": "スマホのデータ上限"}, _gigabytes),
    Subject("deadline:tax", "deadline", {
        "en": "the tax return", "es": "la declaración de la renta", "de": "die Steuererklärung",
        "fr": "la déclaration d'impôts", "zh": "报税的截止日", "ja": "確定申告の期限"}, _iso_date),
    Subject("deadline:lease", "deadline", {
        "en": "the notice for the lease renewal", "es": "el aviso de renovación del alquiler",
        "de": "die Frist für die Mietverlängerung", "fr": "le préavis pour le bail",
        "zh": "续租通知的期限", "ja": "賃貸更新の通知期限"}, _iso_date),
    Subject("region:storage", "region", {
        "en": "the storage account", "es": "la cuenta de almacenamiento",
        "de": "das Storage-Konto", "fr": "le compte de stockage", "zh": "存储账户",
        "ja": "ストレージアカウント"}, _azure_region),
    Subject("region:video-archive", "region", {
        "en": "the video archive", "es": "el archivo de vídeos", "de": "das Videoarchiv",
        "fr": "l'archive vidéo", "zh": "视频归档", "ja": "動画アーカイブ"}, _azure_region),
    Subject("phase:garden", "phase", {
        "en": "the garden project", "es": "el proyecto del jardín", "de": "das Gartenprojekt",
        "fr": "le projet du jardin", "zh": "花园改造", "ja": "庭のプロジェクト"}, _stage),
    Subject("phase:app-release", "phase", {
        "en": "the app release", "es": "el lanzamiento de la app", "de": "das App-Release",
        "fr": "la sortie de l'appli", "zh": "应用发布", "ja": "アプリのリリース"}, _stage),
    Subject("owner:cleaning-rota", "owner", {
        "en": "the cleaning rota lead", "es": "quien coordina los turnos de limpieza",
        "de": "wer den Putzplan koordiniert", "fr": "qui coordonne le planning de ménage",
        "zh": "打扫排班的负责人", "ja": "掃除当番のまとめ役"}, _owner),
    Subject("owner:quarterly-review", "owner", {
        "en": "the reviewer for the quarterly numbers", "es": "quien revisa las cifras trimestrales",
        "de": "wer die Quartalszahlen prüft", "fr": "qui relit les chiffres trimestriels",
        "zh": "季度数据的审核人", "ja": "四半期の数字のレビュー担当"}, _owner),
    Subject("style:meeting-notes", "style", {
        "en": "the meeting notes", "es": "las actas de reunión", "de": "die Besprechungsnotizen",
        "fr": "les comptes rendus de réunion", "zh": "会议纪要", "ja": "議事録"}, _style),
    Subject("style:reminders", "style", {
        "en": "my reminders", "es": "mis recordatorios", "de": "meine Erinnerungen",
        "fr": "mes rappels", "zh": "提醒消息", "ja": "リマインダー"}, _style),
)  # fmt: skip


def heldout_value_plant(rng: Random, *, lang: str, used: set[str], taken: Taken) -> Plant:
    """A held-out value update (``updates.value_plant`` with this module's data)."""
    return value_plant(
        rng, lang=lang, used=used, taken=taken, subjects=SUBJECTS, frames=(FIRST, UPDATE), acks=ACKS
    )
