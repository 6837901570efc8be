"""What matters in what a person said: one score per statement, from signals anyone can read.

A statement is a short user message, or one sentence of a long one. It is worth keeping for
what it says, never for a label in front of it:

* ``content``: what it carries that the rest of the session does not. Each distinct token
  counts by its shape (a code, an identifier, a host, a path, a date, an amount: 3; a name or a
  time: 2; a number: 1.5; a word: 1) divided by the number of statement families that hold it,
  so a token found nowhere else counts whole and one said everywhere ("the", a label, a
  greeting) counts next to nothing. Language-independent: shapes, not words.
* ``directive``: it instructs or restricts: obligation, prohibition, exclusivity, a limit, a
  preference. One table (``DIRECTIVES``), the languages side by side; a negation opening the
  sentence counts as a prohibition.
* ``addressed``: the user speaks to the assistant (second person, "please" and its kin).

And against it: a statement said again and again is a refrain (its content counts less, its
directive does not: a rule repeated is a rule insisted on); a question asks rather than tells;
an acknowledgement says nothing to keep.

Statements alike are one family (``families``): the same words but for their values ("Build
4412 passed in 3m12s", "Build 4413 passed in 2m58s"), or but for one word, or the same subject
said with a new value in other words (two statements that share the words naming their subject
and each give a value of one shape). The latest member is the current one and is quoted; what
only earlier members said is listed with it as superseded, so collapsing never loses a token.
An earlier statement of the same subject in other words is quoted on its own, marked
superseded, and ranks below the statement that replaced it.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import NamedTuple

from worker.compressor import cues, prose
from worker.compressor.cuts import quote

# Token shapes: the value of a statement is in its shaped tokens.
URL, EMAIL, PATH, DATE, MONEY, CODE, HOST, TIME, NAME, NUMBER, WORD = range(11)
# A number alone is weak: chatter is full of them ("capped at 30s", "1.2k rps", "14 items").
_SHAPE_WEIGHTS = (3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 1.0, 2.0, 0.75, 0.5)
# Plain words add up to at most this much: a long remark is not a fact for being long.
_WORDS_MOST = 2.0
_VALUE_SHAPES = frozenset({URL, EMAIL, PATH, DATE, MONEY, CODE, HOST, TIME, NAME, NUMBER})

# Quotes, brackets and stops around a token (Latin, curly and CJK).
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>*«»\u201c\u201d\u2018\u2019…\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f\uff08\uff09\u300c\u300d\u300e\u300f\u3010\u3011"
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}")
_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?")
_MONEY = re.compile(r"[$€£¥₹]\s?\d[\d,.]*[kKmM]?|\d[\d,.]*[$€£¥₹]")
_NUMBER = re.compile(r"[#~+-]?\d[\d,.]*(?:%|[a-z]{1,3})?")
_HOST = re.compile(r"[a-z][\w-]*(?:\.[a-z0-9][\w-]*)+")
_DIGIT = re.compile(r"\d")
_ID_DIGITS = 7
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class Token:
    norm: str  # lower-cased, edge punctuation off
    shape: int
    text: str  # as written


def tokens(text: str) -> list[Token]:
    """The tokens of ``text``: runs between spaces with their edge punctuation taken off; a run
    of CJK characters becomes its overlapping pairs (CJK writes no spaces between words)."""
    out: list[Token] = []
    # A capital opening a sentence, or after a determiner (German capitalises every noun:
    # "die Übergabe"), makes no name.
    plain = True
    no_cjk = not cues.is_cjk(text)
    for raw in text.split():
        word = raw.strip(_EDGE_PUNCT)
        if word.endswith(("'s", "\u2019s")):
            word = word[:-2]
        if word and (len(word) > 1 or word.isdigit()):
            if not no_cjk and cues.is_cjk(word):
                out += _cjk_tokens(word)
            else:
                out.append(Token(word.lower(), _shape(word, plain), word))
        plain = raw[-1:] in ".!?;\u3002\uff01\uff1f" or word.lower() in _DETERMINERS
    return out


# The words before a noun that make its capital no name's, in the languages that capitalise
# nouns or open a sentence with them ("Die Datenbank läuft", "Mein Sohn liebt ...").
_DETERMINER_WORDS = (
    "the a an my our your his her their this that these those "
    "der die das den dem des ein eine einen einem einer mein meine meinen meinem meiner dein "
    "deine sein seine ihr ihre unser unsere kein keine dieser diese dieses jeder jede "
    "el la los las un una mi mis su sus este esta o os as um uma meu minha le les une mon ma "
    "mes il lo gli"
)
_DETERMINERS = frozenset(_DETERMINER_WORDS.split())


# A label opening a statement ("SAFETY RULE:", "NOTE:", "TODO:"): one to four words in
# capitals before a colon; or a tag in brackets, as bots put in front of theirs ("[ci]",
# "[reminder-bot]"). What follows it is what the statement says.
_LABEL = re.compile(
    r"\s*(?:(?:[^\W\d_a-z]{2,}[ \t]+){0,3}[^\W\d_a-z]{2,}\s*:|\[[^\]\s]{1,24}\])\s+"
)


def without_label(text: str) -> str:
    """``text`` without a label in capitals opening it."""
    m = _LABEL.match(text)
    if m is None or (m.group().islower() and not m.group().lstrip().startswith("[")):
        return text
    return text[m.end() :]


def _cjk_tokens(word: str) -> list[Token]:
    """A CJK run as its character pairs; Latin pieces inside it as tokens of their own."""
    out: list[Token] = []
    for piece in re.findall(r"[\u2e80-\U0002ffff]+|[^\u2e80-\U0002ffff]+", word):
        if not cues.is_cjk(piece):
            piece = piece.strip(_EDGE_PUNCT)
            if len(piece) > 1:
                out.append(Token(piece.lower(), _shape(piece, False), piece))
            continue
        pairs = [piece[i : i + 2] for i in range(max(1, len(piece) - 1))]
        out += [Token(p, WORD, p) for p in pairs]
    return out


def _shape(word: str, sentence_start: bool) -> int:
    if word.isalpha():  # most tokens: a word or a name
        return NAME if _named(word, sentence_start) else WORD
    lowered = word.lower()
    if "://" in word:
        return URL
    if "@" in word[1:-1]:
        return EMAIL
    if _DATE.fullmatch(word):
        return DATE
    if _TIME.fullmatch(lowered):
        return TIME
    if _MONEY.fullmatch(word):
        return MONEY
    has_digit = _DIGIT.search(word) is not None
    has_alpha = _LETTER.search(word) is not None
    if "/" in word.strip("/") and has_alpha:
        return PATH
    if has_digit and _NUMBER.fullmatch(lowered):
        # A long run of digits is a reference, an account, a phone number: no quantity is
        # written so.
        return CODE if len(word) >= _ID_DIGITS and word.isdigit() else NUMBER
    if (has_digit and has_alpha) or "_" in word:
        return CODE
    if "." in word and _HOST.fullmatch(lowered):
        return HOST
    if _named(word, sentence_start):
        return NAME
    return WORD


def _named(word: str, sentence_start: bool) -> bool:
    """A capitalised word inside a sentence, an all-caps word, or one with capitals inside it
    ("OAuth", "MySQL"): a name, a product, a code word."""
    if not word[0].isupper():
        return False
    rest = word[1:]
    if not rest.islower():
        return any(c.isupper() for c in rest)  # OAuth, LANTERN, MySQL
    return not sentence_start


# ---------------------------------------------------------------------------------------------
# Directives: one table, one group per idea, the languages side by side (en; es; pt; fr; de;
# it; ru; zh; ja). "_" joins the words of a phrase.

DIRECTIVES: dict[str, tuple[str, ...]] = {
    "obligation": (
        "must mustn't should shouldn't shall need_to needs_to have_to has_to required "
        "mandatory make_sure ensure",
        "debe debes deben debemos tiene_que tienes_que hay_que obligatorio asegúrate",
        "deve devem tem_de tem_que precisa_de obrigatório certifica-te",
        "doit doivent dois il_faut obligatoire assure-toi assurez-vous",
        "muss müssen musst soll sollen sollte solltest erforderlich pflicht",
        "devi devono bisogna obbligatorio assicurati",
        "должен должна должны нужно надо обязательно необходимо",
        "必须 应该 务必 一定要",
        "必ず べき なければならない",
    ),
    "prohibition": (
        "never don't do_not does_not cannot can't forbidden prohibited avoid "
        "under_no_circumstances no_one nobody_else",
        "nunca jamás no_uses no_hagas prohibido evita evitar",
        "nunca jamais não_use não_faça proibido evite evitar",
        "jamais ne_jamais n'utilise_pas interdit évite éviter",
        "nie niemals kein keine keinen verboten vermeide bitte_nicht auf_keinen_fall",
        "mai non_usare vietato evita evitare",
        "никогда нельзя запрещено избегай не_используй",
        "不要 别 禁止 不准 不许 绝不 从不",
        "しないで 禁止 決して だめ",
    ),
    "exclusivity": (
        "always only ever at_all_times every_time",
        "siempre solo sólo únicamente en_todo_momento",
        "sempre só apenas somente",
        "toujours seulement uniquement",
        "immer nur ausschließlich jederzeit",
        "sempre solo soltanto",
        "всегда только",
        "总是 永远 只 只能 仅 始终 一律",
        "いつも 常に 絶対 だけ のみ",
    ),
    "limit": (
        "until unless except cap capped limit max maximum minimum at_most at_least exceed "
        "exceeding within deadline budget no_later_than",
        "hasta salvo excepto límite máximo mínimo como_máximo al_menos superar plazo presupuesto",
        "até exceto limite máximo mínimo no_máximo pelo_menos exceder prazo orçamento",
        "jusqu'à sauf excepté limite maximum minimum au_plus au_moins dépasser échéance",
        "außer grenze höchstens mindestens überschreiten frist",
        "fino_a tranne eccetto limite massimo minimo al_massimo almeno superare scadenza",
        "кроме лимит максимум минимум не_более не_менее превышать срок бюджет",
        "除非 除了 上限 最多 最少 至少 超过 截止 期限 预算",
        "まで 以外 上限 最大 以内 超え 締め切り 期限 予算",
    ),
    "condition": (
        "if unless whenever in_case",
        "si cuando siempre_que en_caso_de",
        "quando",
        "si quand lorsque au_cas_où",
        "wenn falls sobald",
        "qualora nel_caso",
        "если когда",
        "如果 的话 一旦",
        "場合 なら たら",
    ),
    "preference": (
        "prefer prefers preferred want wants would_rather rather i'd_like i_like wish",
        "prefiero prefiere quiero quiere me_gusta preferiría",
        "prefiro prefere quero quer gosto",
        "préfère préfèrent veux veut voudrais j'aime",
        "bevorzuge bevorzugt lieber möchte mag",
        "preferisco preferisce voglio vuole vorrei",
        "предпочитаю предпочитает хочу хочет",
        "喜欢 更喜欢 想要 希望 偏好",
        "好き 欲しい ほしい 希望",
    ),
}
# The user says where the work stands or goes: a goal, a task, the next step, a plan.
PLANS: tuple[str, ...] = (
    "next_step next_up goal task plan todo priority milestone phase roadmap",
    "siguiente_paso próximo_paso objetivo meta tarea plan prioridad fase",
    "próximo_passo objetivo meta tarefa plano prioridade fase",
    "prochaine_étape objectif but tâche plan priorité phase",
    "nächster_schritt nächste_schritt ziel aufgabe plan priorität phase",
    "prossimo_passo obiettivo compito piano priorità fase",
    "следующий_шаг цель задача план приоритет этап",
    "下一步 接下来 目标 任务 计划 优先 阶段",
    "次の 目標 タスク 計画 優先 段階",
)
_PLAN_CUE = cues.Cue(*PLANS)
_PLAN_WEIGHT = 1.0
_CONDITION_WEIGHT = 0.75

# The user speaks to the assistant: the second person and the words of asking.
ADDRESS: tuple[str, ...] = (
    "you your yours yourself please",
    "tú usted tu te ti por_favor",
    "você te teu tua por_favor",
    "vous tu ton ta tes s'il_te_plaît s'il_vous_plaît",
    "du dich dir dein deine bitte",
    "tu ti tuo tua per_favore",
    "ты вы тебя вас твой ваш пожалуйста",
    "你 您 请",
    "あなた ください お願い",
)
# A negation opening a sentence prohibits ("No peanuts at the counter", "Not JavaScript").
_NEGATION_READ_CHARS = 400
_NEGATION_WORDS = (
    "no not none nothing ningún ninguna não nenhum pas aucun aucune kein keine nicht non не нет"
)
_OPENING_NEGATIONS = frozenset(_NEGATION_WORDS.split())

_DIRECTIVE_CUES = cues.CueSet({name: cues.Cue(*words) for name, words in DIRECTIVES.items()})
# The words that give a statement its form (a directive, an address, a negation) say nothing
# of its subject.
_FORM_WORDS = frozenset(
    word
    for group in (*DIRECTIVES.values(), ADDRESS, (_NEGATION_WORDS,))
    for words in group
    for phrase in words.split()
    for word in phrase.split("_")
)
_ADDRESS_CUE = cues.Cue(*ADDRESS)

_DIRECTIVE_WEIGHT = 1.5  # for each kind of directive, at most two
# Scores a reader may sort by: at or above HIGH a statement carries much found nowhere else (a
# code, a host, a date, a name, or several rare words); below LOW it says next to nothing.
HIGH = 5.0
LOW = 1.0
MATTERS = 3.0
_ADDRESS_WEIGHT = 0.75
_QUESTION_FACTOR = 0.7  # a question asks: it is answered in the turns that follow
_CARRIED_BONUS = 1.0
_BOT_TAG = re.compile(r"\s*\[[^\]\s]{1,24}\]\s")
_BOT_FACTOR = 0.5
_CARRIED_FACTOR = 1.25
_TEMPLATE_PENALTY = 0.75


def directive_kinds(text: str) -> int:
    """How many kinds of directive (obligation, prohibition, exclusivity, limit, preference;
    a condition beside one of them) ``text`` holds. (A condition alone, "if anyone wants to
    pair", is half a rule at most: it adds to a statement's score, not to its kinds.)"""
    return _directives(_kinds(text))


def _directives(kinds: set[str]) -> int:
    return len(kinds) if kinds != {"condition"} else 0


def _kinds(text: str) -> set[str]:
    lowered = text.lower()
    found = _DIRECTIVE_CUES.scan(lowered)
    kinds = {name for name, at in found.items() if at}
    if "prohibition" not in kinds and _opens_with_negation(lowered):
        kinds.add("prohibition")
    return kinds


def _opens_with_negation(lowered: str) -> bool:
    """A sentence of ``lowered`` (of its first few hundred characters) opens with a negation."""
    for _, sentence in cues.sentences(lowered[:_NEGATION_READ_CHARS]):
        first = sentence.split(maxsplit=1)[:1]
        if first and first[0].strip(_EDGE_PUNCT) in _OPENING_NEGATIONS:
            return True
    return False


# What a reply says when it only acknowledges: a message of these words alone keeps nothing.
ACKNOWLEDGEMENTS: tuple[str, ...] = (
    "ok okay k kk thanks thank you thx ty cool great nice perfect sure yes yep yeah yup no nope "
    "got it sounds good alright right fine good awesome done noted understood agreed lol haha "
    "hi hello hey bye cheers please ping so much very lot a",
    "vale gracias perfecto genial sí si claro bueno hola listo entendido de acuerdo muchas mil",
    "obrigado obrigada valeu ótimo beleza sim claro olá certo entendi combinado muito",
    "merci parfait d'accord oui super génial bonjour salut compris entendu beaucoup bien",
    "danke super passt gut ja klar okay hallo verstanden genau prima dir euch sehr vielen "
    "vielmals schön",
    "grazie perfetto va bene sì certo ciao capito ottimo mille tante",
    "спасибо хорошо ок понял поняла да ладно отлично привет большое",
    "好的 谢谢 收到 了解 好 是的 明白 没问题 你好",
    "はい ありがとう 了解 わかりました 大丈夫 こんにちは",
)
_ACK_WORDS = frozenset(w for group in ACKNOWLEDGEMENTS for w in group.split())
_ACK_MOST_WORDS = 6
_ACK_MOST_CHARS = 80


def idle(text: str) -> bool:
    """``text`` only acknowledges ("ok thanks!", "¡Gracias!", "好的"): a few words, every
    one of them in ``ACKNOWLEDGEMENTS``."""
    if len(text) > _ACK_MOST_CHARS:
        return False
    words = [w.strip(_EDGE_PUNCT + "¡¿~-") for w in text.lower().split()]
    words = [w for w in words if w and any(c.isalnum() for c in w)]
    if not words or len(words) > _ACK_MOST_WORDS:
        return not words and len(text) < _ACK_MOST_WORDS * 8  # emoji, punctuation
    if len(words) == 1 and cues.is_cjk(words[0]):
        return _cjk_acknowledges(words[0])
    return all(w in _ACK_WORDS for w in words)


def _cjk_acknowledges(text: str) -> bool:
    """A CJK message (no spaces) made only of acknowledgement words."""
    rest = text
    while rest:
        for word in sorted((w for w in _ACK_WORDS if rest.startswith(w)), key=len, reverse=True):
            rest = rest[len(word) :].lstrip(_EDGE_PUNCT + " ")
            break
        else:
            return False
    return True


def addressed(text: str) -> bool:
    """The speaker addresses the listener (second person, "please"), not someone named at its
    start ("@Ines, do you have a minute?" is for Ines)."""
    return not to_someone_else(text) and _ADDRESS_CUE.search(text)


def to_someone_else(text: str) -> bool:
    """``text`` opens by naming whom it is for ("@Ines ...")."""
    return text.lstrip().startswith("@")


# ---------------------------------------------------------------------------------------------
# Statements and their families


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement to rank: where it was said (a message index; lines an earlier summary
    carried come first, below 0) and its text."""

    at: int
    text: str
    question: bool = False
    idle: bool = False  # an acknowledgement, a thank-you: nothing to keep
    # Carried by an earlier summary: how often it had been said, the earlier values listed
    # with it, and whether it had been superseded already.
    times: int = 1
    earlier: tuple[str, ...] = ()
    table: bool = False
    superseded: bool = False


@dataclass(frozen=True, slots=True)
class Ranked:
    """A statement as ranked: the latest of its family, or an earlier one of the same subject
    said in other words (``superseded``)."""

    at: int
    text: str
    score: float
    directive: int  # kinds of directive it holds (``directive_kinds``); a question holds none
    times: int = 1  # statements alike in its family, itself included
    # What only earlier members said: the values they gave, superseded by this one's; or, when
    # they differ in more than one place (``table``), each member's own words, a row each.
    earlier: tuple[str, ...] = ()
    table: bool = False
    superseded: bool = False  # replaced by a later statement of the same subject
    # The ``at`` of the statement that replaced it (when ``superseded``).
    replaced_by: int = -1

    @property
    def matters(self) -> bool:
        """A rule, or a statement that carries something of its own, not superseded: what a
        summary makes room for first (chatter, a bot's status, a refrain come after)."""
        return not self.superseded and (self.directive > 0 or self.score >= MATTERS)

    def render(self, limit: int) -> str:
        """The statement as an exact quote, with what its family adds (``carried`` reads it
        back)."""
        notes = []
        if self.times > 1:
            notes.append(
                f"said alike {self.times} times" if self.earlier else f"said {self.times} times"
            )
        if self.earlier:
            label, sep = (_OTHERS, _ROW_SEP) if self.table else (_EARLIER, _VALUE_SEP)
            notes.append(label + _listed(self.earlier, sep))
        if self.superseded:
            notes.append(_SUPERSEDED)
        if len(self.text) <= limit:
            quoted = f'"{quote(self.text, limit)}"'
        else:  # a long message: its opening, its most salient sentences, its close
            quoted = f'"{excerpt(self.text, _EXCERPT_CHARS)}"'
            notes.insert(0, f"{len(self.text):,} chars in all")
        return f"{quoted} ({'; '.join(notes)})" if notes else quoted


_EXCERPT_CHARS = 900
_EARLIER = "earlier values, superseded: "
_OTHERS = "the others: "
_VALUE_SEP, _ROW_SEP = ", ", " | "
_MORE = " … and {n} more"
_LISTED_CHARS = 400  # of what a family's earlier members said: the rest is counted


def _listed(items: Sequence[str], sep: str) -> str:
    """``items`` joined by ``sep``, the newest kept when they run past ``_LISTED_CHARS``."""
    kept: list[str] = []
    used = 0
    for item in reversed(items):
        used += len(item) + len(sep)
        if kept and used > _LISTED_CHARS:
            break
        kept.append(item)
    text = sep.join(reversed(kept))
    left = len(items) - len(kept)
    return f"{_MORE.format(n=left).strip()}{sep}{text}" if left else text


_SUPERSEDED = "superseded by a later statement"
_CARRIED = re.compile(r'"(?P<text>.*)"(?: \((?P<notes>[^()]*(?:\([^()]*\)[^()]*)*)\))?')
_TIMES = re.compile(r"said (?:alike )?(\d+) times")


def carried(line: str, at: int) -> Statement | None:
    """A statement as ``Ranked.render`` wrote it into an earlier summary, read back (``at``:
    where it is to stand, before the window); None when ``line`` is not one."""
    m = _CARRIED.fullmatch(line.strip())
    if m is None:
        return None
    text, notes = m["text"], m["notes"] or ""
    if "…[" in text:
        return None  # cut: the text is not whole, and a family would not match it
    times = _TIMES.search(notes)
    earlier: tuple[str, ...] = ()
    table = _OTHERS in notes
    label, sep = (_OTHERS, _ROW_SEP) if table else (_EARLIER, _VALUE_SEP)
    if label in notes:
        listed = notes.split(label, 1)[1].split("; ", 1)[0]
        earlier = tuple(v for v in listed.split(sep) if v and not v.startswith("… and "))
    return Statement(
        at,
        text,
        times=int(times[1]) if times else 1,
        earlier=earlier,
        table=table,
        superseded=_SUPERSEDED in notes,
    )


# Of a long message (a task, a paste), its opening is what it is scored by.
_SCORED_CHARS = 1_000


def rank(said: Sequence[Statement]) -> list[Ranked]:
    """Every statement of ``said`` as its family ranks it, in order of where it was said (a
    group of statements alike once, at the place of its latest member)."""
    toks = [tokens(without_label(s.text[:_SCORED_CHARS])) for s in said]
    groups = _alike_groups(toks)
    family = _subject_families(said, toks, groups)
    members: dict[int, list[int]] = {}
    for g, root in enumerate(family):
        members.setdefault(root, []).append(g)
    df: dict[str, int] = {}
    for fam in members.values():
        for norm in {t.norm for g in fam for i in groups[g] for t in toks[i]}:
            df[norm] = df.get(norm, 0) + 1
    templated = _templated(toks, groups)
    out: list[Ranked] = []
    for fam in members.values():
        out += _ranked_family(said, toks, [groups[g] for g in fam], df, templated)
    return sorted(out, key=lambda r: r.at)


_TEMPLATE_AT = 3  # a pair of words said in this many other groups is a template's


def _templated(toks: Sequence[list[Token]], groups: list[list[int]]) -> dict[int, float]:
    """For each statement, the share of its phrasing (pairs of words in a row, values as their
    shapes) that other statements use too: a bot's and a status line's template, said with
    other words and values each time ("[ci] Build #2815 timed out on main", "[ci] Build #7728
    is green again on feat/x"), where a rule or a fact is put in words of its own."""
    # (A long message, a task or a paste, is no template's line: its pairs are not read.)
    pairs_of = [_pairs(toks[g[-1]]) if len(toks[g[-1]]) <= _MAX_FRAME else set() for g in groups]
    df: dict[tuple[str, str], int] = {}
    for pairs in pairs_of:
        for pair in pairs:
            df[pair] = df.get(pair, 0) + 1
    out: dict[int, float] = {}
    for g, pairs in zip(groups, pairs_of, strict=True):
        share = sum(df[p] > _TEMPLATE_AT for p in pairs) / len(pairs) if pairs else 0.0
        for i in g:
            out[i] = share
    return out


def _pairs(toks: Sequence[Token]) -> set[tuple[str, str]]:
    frame = _frame(toks)
    return set(pairwise(frame))


def _ranked_family(
    said: Sequence[Statement],
    toks: Sequence[list[Token]],
    fam: list[list[int]],
    df: dict[str, int],
    templated: dict[int, float],
) -> list[Ranked]:
    """A family (its groups of statements alike, each in order) as ranked statements: each
    group once, as its latest member with what only earlier members said; the group said last
    is current, the others (the subject in other words, or with another value) are superseded
    by it. A group of a few wordings is a value updated: each wording is quoted, the earlier
    ones marked; a group of many (a status line, a bot's template) is collapsed."""
    fam = sorted((w for g in fam for w in _wordings(toks, g)), key=lambda g: g[-1])
    # The wording said last is current; one an earlier summary marked superseded never is
    # again (the summary lists it apart from what replaced it, maybe after it).
    live = [g for g in fam if not said[g[-1]].superseded] or fam
    fam = [g for g in fam if g is not live[-1]] + [live[-1]]
    current = fam[-1][-1]
    top = _score(
        said[current],
        toks[current],
        df,
        times=_times(said, fam[-1]),
        changed=len(fam[-1]) > 1 and _changed(toks, fam[-1]),
        templated=templated[current],
    )
    out: list[Ranked] = []
    for group in fam:
        last = group[-1]
        rows = _rows(toks, group)
        table = any(said[i].table for i in group) or any(len(row) > 1 for row in rows)
        carried = [v for i in group for v in said[i].earlier]
        mine = [" ".join(row) for row in rows] if table else [v for row in rows for v in row]
        earlier = tuple(_unique([*carried, *(v for v in mine if v)]))
        times = _times(said, group)
        superseded = last != current or said[last].superseded
        score = (
            top
            if last == current
            else _score(
                said[last],
                toks[last],
                df,
                times=times,
                changed=bool(earlier),
                templated=templated[last],
            )
        )
        out.append(
            Ranked(
                said[last].at,
                said[last].text,
                min(score, top) * _SUPERSEDED_FACTOR if superseded else score,
                0 if said[last].question else directive_kinds(said[last].text[:_SCORED_CHARS]),
                times,
                earlier,
                table=table,
                superseded=superseded,
                replaced_by=said[current].at if last != current else -1,
            )
        )
    return out


_FEW_WORDINGS = 3


def _rows(toks: Sequence[list[Token]], group: list[int]) -> list[list[str]]:
    """For each earlier member of ``group``, its words where the members differ (statements
    alike have as many tokens each: one frame, or one word apart); a member of another length
    (carried from an earlier summary) gives the words the latest lacks."""
    last = toks[group[-1]]
    same = [toks[i] for i in group if len(toks[i]) == len(last)]
    places = [k for k in range(len(last)) if any(ts[k].norm != last[k].norm for ts in same)]
    kept = {t.norm for t in last}
    rows = []
    for i in group[:-1]:
        ts = toks[i]
        if len(ts) == len(last):
            rows.append([ts[k].text for k in places])
        else:
            rows.append([t.text for t in ts if t.norm not in kept])
    return rows


def _wordings(toks: Sequence[list[Token]], group: list[int]) -> list[list[int]]:
    """``group`` split by wording (each in order) when it has at most ``_FEW_WORDINGS``;
    else ``group`` whole."""
    by_words: dict[tuple[str, ...], list[int]] = {}
    for i in group:
        by_words.setdefault(tuple(t.norm for t in toks[i]), []).append(i)
    return list(by_words.values()) if len(by_words) <= _FEW_WORDINGS else [group]


def _changed(toks: Sequence[list[Token]], group: list[int]) -> bool:
    """The members of ``group`` do not all say the same."""
    first = [t.norm for t in toks[group[0]]]
    return any([t.norm for t in toks[i]] != first for i in group[1:])


def _times(said: Sequence[Statement], group: list[int]) -> int:
    return sum(said[i].times for i in group)


_SUPERSEDED_FACTOR = 0.3  # an earlier value ranks below the one that replaced it


def _score(
    said: Statement,
    toks: Sequence[Token],
    df: dict[str, int],
    *,
    times: int,
    changed: bool,
    templated: float = 0.0,
) -> float:
    """The salience of one statement: content (divided by how often it was said, and less the
    more of its phrasing is a template's: ``templated``), directive, addressed; a question
    counts less, an acknowledgement nothing."""
    if said.idle:
        return 0.0
    # An earlier summary kept it, weighed against what was said around it then: it keeps a
    # head start over what was said since, the more the more it mattered.
    carried = said.at < 0
    seen: set[str] = set()
    shaped = words = 0.0
    for t in toks:
        if t.norm in seen:
            continue
        seen.add(t.norm)
        weight = _SHAPE_WEIGHTS[t.shape] / df.get(t.norm, 1)
        if t.shape == WORD:
            words += weight
        else:
            shaped += weight
    content = (shaped + min(words, _WORDS_MOST)) * (1.0 - _TEMPLATE_PENALTY * templated)
    # A refrain: said again as it was, or again and again with other values (a status line).
    # Said twice with a new value, it is an update.
    if times > 2 or (times > 1 and not changed):
        content /= 1.0 + math.log2(times - 1 if changed else times)
    # A question that uses a directive's words ("what should we see?") sets no rule. A long
    # message is weighed by its opening, as its tokens were.
    opening = said.text[:_SCORED_CHARS]
    kinds = _kinds(opening)
    directive = 0 if said.question else _directives(kinds)
    score = content + _DIRECTIVE_WEIGHT * min(directive, 2)
    if addressed(opening):
        score += _ADDRESS_WEIGHT
    if _PLAN_CUE.search(opening):
        score += _PLAN_WEIGHT
    if not said.question and kinds == {"condition"}:
        score += _CONDITION_WEIGHT
    score = score * _QUESTION_FACTOR if said.question else score
    if _BOT_TAG.match(said.text):
        score *= _BOT_FACTOR  # a bot's line ("[ci] Build #6260 timed out"): status, not a person
    return score * _CARRIED_FACTOR + _CARRIED_BONUS if carried else score


# ---------------------------------------------------------------------------------------------
# Families: statements alike are found by keys, never by comparing every pair.


class _Joined:
    """Disjoint sets over ``n`` items (union by the smaller index, path halving)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)

    def groups(self) -> list[list[int]]:
        out: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            out.setdefault(self.find(i), []).append(i)
        return list(out.values())


def _alike_groups(toks: Sequence[list[Token]]) -> list[list[int]]:
    """Statements alike (one frame, or frames one word apart), each group in order; every
    statement is in one group."""
    joined = _Joined(len(toks))
    for group in _alike(toks):
        for j in group[1:]:
            joined.join(group[0], j)
    return joined.groups()


def _subject_families(
    said: Sequence[Statement], toks: Sequence[list[Token]], groups: list[list[int]]
) -> list[int]:
    """For each group, its family: groups whose statements give one subject other values in
    other words are one family."""
    group_of = [0] * len(said)
    for g, members in enumerate(groups):
        for i in members:
            group_of[i] = g
    joined = _Joined(len(groups))
    for i, j in [*_same_subject(said, toks), *_same_slot(said, toks)]:
        joined.join(group_of[i], group_of[j])
    return [joined.find(g) for g in range(len(groups))]


def _same_slot(said: Sequence[Statement], toks: Sequence[list[Token]]) -> list[tuple[int, int]]:
    """Pairs of short statements, the earlier first, that give a value of one shape and length
    in the same slot: right after or before the same word ("Base commit for the work is
    7f8fbee", "We branched from commit bbbe5ce"; "phase 2 of 6", "Migration progress: phase
    4 of 5"), a word few statements use. The word names what the value is of, unless words
    before it tell two things apart ("the access code X", "the contact code Y")."""
    df: dict[str, int] = {}
    for ts in toks:
        for norm in {t.norm for t in ts}:
            df[norm] = df.get(norm, 0) + 1
    common = max(2, int(len(said) * _COMMON))
    by_slot: dict[tuple[str, int, int], list[tuple[int, str, str]]] = {}
    for i, ts in enumerate(toks):
        if len(said[i].text) <= _UPDATE_CHARS and not (said[i].question or said[i].idle):
            for key, value, qualifier in _slots(ts, df, common):
                by_slot.setdefault(key, []).append((i, value, qualifier))
    pairs: set[tuple[int, int]] = set()
    for found in by_slot.values():
        if len(found) <= _MAX_STEM_GROUP:
            pairs.update(_slot_pairs(found))
    which: dict[int, _Which] = {}
    for i in {k for pair in pairs for k in pair}:
        which[i] = _qualifiers(toks[i])
    return sorted((i, j) for i, j in pairs if not _told_apart(which[i], which[j]))


def _slots(
    ts: Sequence[Token], df: dict[str, int], common: int
) -> Iterator[tuple[tuple[str, int, int], str, str]]:
    """(slot, value, qualifier) for each shaped value beside a word that can name it: the
    slot is that word, the value's shape and length; the qualifier the word beyond it."""
    for k, t in enumerate(ts):
        if t.shape not in _SLOT_SHAPES:
            continue
        for n, beyond in ((k - 1, k - 2), (k + 1, k + 2)):
            if 0 <= n < len(ts) and _anchors(ts[n], df, common):
                q = ts[beyond].norm if 0 <= beyond < len(ts) else ""
                qualifier = q if len(q) >= 3 and q not in _FUNCTION_WORDS else ""
                yield (ts[n].norm, t.shape, len(t.norm)), t.norm, qualifier


def _slot_pairs(found: Sequence[tuple[int, str, str]]) -> Iterator[tuple[int, int]]:
    for a, (i, value, qualifier) in enumerate(found):
        for j, other, theirs in found[a + 1 :]:
            if i != j and value != other and not (qualifier and theirs and qualifier != theirs):
                yield min(i, j), max(i, j)


# A slot's value is shaped: a code, a number, a date, an amount, a path (a plain word beside
# the same word is as often a qualifier: "the production database", "the staging database").
_SLOT_SHAPES = frozenset({URL, EMAIL, PATH, DATE, MONEY, CODE, HOST, TIME, NUMBER})


# Words that join a noun to the rest (prepositions, articles, the copula), in the languages of
# the directive table: beyond a slot's word they qualify nothing.
_FUNCTION_WORD_LIST = (  # (shorter words qualify nothing anyway)
    "the are was for from with and "
    "del los las con por para una "
    "dos com "
    "des les aux sur dans avec pour est "
    "der die das den dem von vom aus auf mit für zum zur ist "
    "della gli per con "
    "над для"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_LIST.split()) | _FORM_WORDS | _DETERMINERS


def _anchors(t: Token, df: dict[str, int], common: int) -> bool:
    """``t`` can name what a value beside it is of: a word of three letters or more, not one
    that gives a statement its form, said in few statements."""
    return (
        t.shape == WORD
        and len(t.norm) >= 3
        and t.norm not in _FORM_WORDS
        and t.norm not in _DETERMINERS
        and df.get(t.norm, 0) <= common
    )


_MIN_FRAME = 4  # shorter statements ("ok thanks", "sounds good") are not templates
_MAX_FRAME = 60  # nor longer ones (a task, a paste): alike only when said again as they were


def _frame(toks: Sequence[Token]) -> tuple[str, ...]:
    """The statement with each value replaced by its shape: the template it fills."""
    return tuple(f"<{t.shape}>" if t.shape in _VALUE_SHAPES else t.norm for t in toks)


def _alike(toks: Sequence[list[Token]]) -> list[list[int]]:
    """Groups of statements with one frame, or frames that differ in one word only."""
    by_key: dict[tuple[str, ...], list[int]] = {}
    for i, ts in enumerate(toks):
        frame = _frame(ts)
        if len(frame) < _MIN_FRAME or len(frame) > _MAX_FRAME:
            by_key.setdefault(("=", *(t.norm for t in ts)), []).append(i)  # said again exactly
            continue
        by_key.setdefault(frame, []).append(i)
        for k, word in enumerate(frame):
            if not word.startswith("<"):
                by_key.setdefault((*frame[:k], "<*>", *frame[k + 1 :]), []).append(i)
    groups = []
    for key, group in by_key.items():
        if len(group) > 1 and "<*>" in key:
            # One word apart and other values too: two things ("my sister's flight lands at
            # 14:05", "my brother's flight lands at 16:30"), unless every value is the same.
            same: dict[tuple[str, ...], list[int]] = {}
            for i in group:
                same.setdefault(
                    tuple(t.norm for t in toks[i] if t.shape in _VALUE_SHAPES), []
                ).append(i)
            groups += [g for g in same.values() if len(g) > 1]
        elif len(group) > 1:
            groups.append(group)
    return groups


# Two statements are of one subject when they share at least half of the lighter one's subject
# weight, and at least as much as two words that only they say.
_SUBJECT_OVERLAP = 0.5
_MIN_SHARED = 1.0
_SHARE_OF_WORDS = 0.35  # of each statement's own words ("Small thing: ..." shares two of nine)
_UPDATE_CHARS = 300
_STEM = 5  # words sharing their first five letters (or one the start of the other) are one
_COMMON = 0.25  # a word in more than this share of statements names no subject
_MAX_STEM_GROUP = 40


def _same_subject(said: Sequence[Statement], toks: Sequence[list[Token]]) -> list[tuple[int, int]]:
    """Pairs of statements, the earlier first, that give one subject two values in other words:
    they share much of what they say (each word weighed by how rare it is among the
    statements, and at least ``_SHARE_OF_WORDS`` of each one's words) and each gives a value
    the other does not, of a shape the other gives too (a word found in no other statement is
    a value of its own shape). Only short statements state one value; a long message (a task,
    a paste) is no update of another."""
    stems = [
        {_stem_of(t.norm) for t in ts if len(t.norm) > 2 and t.norm not in _FORM_WORDS}
        if len(said[i].text) <= _UPDATE_CHARS
        else set()  # a long message states no one value: its words are not read
        for i, ts in enumerate(toks)
    ]
    stems_df: dict[str, int] = {}
    for own in stems:
        for stem in own:
            stems_df[stem] = stems_df.get(stem, 0) + 1
    common = max(2, int(len(said) * _COMMON))
    # What a statement is about: its words that other statements use too (the rest are its
    # values, and its own way of putting things), each weighed by how rare it is.
    weights = [
        {st: 1.0 / stems_df[st] for st in own if 1 < stems_df[st] <= common} for own in stems
    ]
    values = [_values(ts, stems_df) for ts in toks]
    which: dict[int, _Which] = {}  # read for the statements paired only
    words_of = [sum(stems_df[st] <= common for st in stems_of) for stems_of in stems]
    by_stem: dict[str, list[int]] = {}
    for i, weighed in enumerate(weights):
        short = len(said[i].text) <= _UPDATE_CHARS
        if short and values[i] and not said[i].question and not said[i].idle:
            for stem in weighed:
                by_stem.setdefault(stem, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for group in by_stem.values():
        if len(group) > _MAX_STEM_GROUP:
            continue  # a word this common is no subject
        for a, i in enumerate(group):
            for j in group[a + 1 :]:
                if (i, j) in pairs or not _updates(values, toks, which, i, j):
                    continue
                shared, lighter, words = _overlap(weights[i], weights[j])
                enough = words >= _SHARE_OF_WORDS * max(words_of[i], words_of[j])
                if shared >= _MIN_SHARED and shared >= _SUBJECT_OVERLAP * lighter and enough:
                    pairs.add((i, j))
    return sorted(pairs)


def _updates(
    values: Sequence[dict[str, int]],
    toks: Sequence[list[Token]],
    which: dict[int, _Which],
    i: int,
    j: int,
) -> bool:
    """Statement ``j`` may give another value for what ``i`` gave one for: they differ in a
    value, and no word of both is told apart by a word of its own ("my sister's flight",
    "my brother's flight": two subjects). ``which``: the statements' ``_qualifiers``, as
    read."""
    if not _values_differ(values[i], values[j]):
        return False
    for k in (i, j):
        if k not in which:
            which[k] = _qualifiers(toks[k])
    return not _told_apart(which[i], which[j])


class _Which(NamedTuple):
    named: dict[str, str]  # a word's stem: the stem of the word that tells which one it is
    words: frozenset[str]  # the stem of every word of the statement


def _qualifiers(toks: Sequence[Token]) -> _Which:
    """For a word of the statement (by its stem), the word that tells which one it is: the
    word before it ("the staging database", "my sister's flight"), or the word after a
    genitive's link ("la base de staging", "the flight of my sister")."""
    out: dict[str, str] = {}
    for k, t in enumerate(toks):
        if len(t.norm) <= 2 or t.norm in _FUNCTION_WORDS:
            continue
        before = toks[k - 1] if k else None
        if before is None or not _qualifies(before):
            n = k + 1
            if n < len(toks) and toks[n].norm in _GENITIVE_LINKS:
                n += 1 + (n + 1 < len(toks) and toks[n + 1].norm in _DETERMINERS)
                before = toks[n] if n < len(toks) else None
        if before is not None and _qualifies(before):
            out.setdefault(_stem_of(t.norm), _stem_of(before.norm))
    return _Which(out, frozenset(_stem_of(t.norm) for t in toks))


def _qualifies(t: Token) -> bool:
    return t.shape in (WORD, NAME) and len(t.norm) > 2 and t.norm not in _FUNCTION_WORDS


def _told_apart(mine: _Which, theirs: _Which) -> bool:
    """Two statements name one word each with a word in front that the other does not say at
    all: two things. ("Answer in Ugusi style" and "the preferred answer style is Krssd" are
    not told apart: "answer" is in both; a value stands before the word in the first.)"""
    return any(
        q != theirs.named[s] and q not in theirs.words and theirs.named[s] not in mine.words
        for s, q in mine.named.items()
        if s in theirs.named
    )


# The words that link a noun to the one that tells which it is (en; es; pt; fr; de; it).
_GENITIVE_LINKS = frozenset(
    ("of", "de", "del", "do", "da", "dos", "das", "du", "des", "von", "vom", "di", "della")
)


def _values(toks: Sequence[Token], stems_df: dict[str, int]) -> dict[str, int]:
    """What a statement gives as values, by shape: its shaped tokens, and its words found in no
    other statement."""
    out: dict[str, int] = {}
    for t in toks:
        if t.shape in _VALUE_SHAPES or (len(t.norm) > 2 and stems_df.get(_stem_of(t.norm)) == 1):
            out[t.norm] = t.shape
    return out


def _stem_of(word: str) -> str:
    return word[:_STEM]


def _values_differ(values_a: dict[str, int], values_b: dict[str, int]) -> bool:
    """Each gives a value of some shape that the other gives another value of."""
    for shape in set(values_a.values()) & set(values_b.values()):
        mine = {v for v, s in values_a.items() if s == shape}
        theirs = {v for v, s in values_b.items() if s == shape}
        if mine - theirs and theirs - mine:
            return True
    return False


def _overlap(wa: dict[str, float], wb: dict[str, float]) -> tuple[float, float, int]:
    """The subject weight two statements share (a stem of one that starts a stem of the other
    counts: "cap", "cappe"), the lighter one's, and how many words they share."""
    lighter = min(sum(wa.values()), sum(wb.values()))
    shared = 0.0
    words = 0
    for s, w in wa.items():
        v = wb.get(s)
        if v is None and len(s) >= 3:
            v = next(
                (x for t, x in wb.items() if t not in wa and (t.startswith(s) or s.startswith(t))),
                None,
            )
        if v is not None:
            shared += min(w, v)
            words += 1
    return shared, lighter, words


def _unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# ---------------------------------------------------------------------------------------------
# What the readers (the extractive summary, the ledger, the LLM prompt) call


def user_statements(asks: Sequence[prose.Said], carried_lines: Sequence[str] = ()) -> list[Ranked]:
    """The user's messages (``Prose.asks``) and the statements an earlier summary carried
    (its quoted lines, oldest first), ranked as one session."""
    said: list[Statement] = []
    for k, line in enumerate(carried_lines):
        at = k - len(carried_lines)
        said.append(carried(line, at) or Statement(at, line.strip().strip('"')))
    said += [statement(ask.at, ask.text) for ask in asks]
    return rank(said)


def statement(at: int, text: str) -> Statement:
    """The user's message ``text`` (at ``at``) as a statement to rank: whether it asks, whether
    it only acknowledges."""
    text = " ".join(text.split()) if len(text) <= _WHOLE_CHARS else text
    return Statement(
        at,
        text,
        question=prose.is_question(text[:_WHOLE_CHARS]),
        idle=idle(text) or prose.thanks(text),
    )


_WHOLE_CHARS = 600  # a message up to this long is one statement, quoted whole


# Where a summary of ours quotes what the user said: the extractive summary's two sections
# (``Ranked.render`` in bullets), and the ledger's entries of that kind.
RULES_SECTION = "Constraints & Preferences"
SAID_SECTION = "User Messages"
_LEDGER_SAID = "- user said: "


def said_in(summary: str) -> list[str]:
    """What the user said, as an earlier summary of ours quoted it, in order: the bullets of
    its sections of what was said, and its ledger's entries of it."""
    out: list[str] = []
    quoting = False
    for line in summary.splitlines():
        if line.startswith("## "):
            quoting = line[3:].strip() in (RULES_SECTION, SAID_SECTION)
        elif line.startswith(_LEDGER_SAID):
            out.append(line[len(_LEDGER_SAID) :])
        elif quoting and line.startswith('- "'):
            out.append(line[2:])
    return out


def carry_over(said: Sequence[Ranked], *, most_chars: float) -> str:
    """The user's statements (``user_statements``) an LLM summary must keep, one quote a line,
    in order: the most salient short ones first while they fit ``most_chars``; never one
    superseded, nor one that says next to nothing."""
    lines: list[tuple[int, str]] = []
    used = 0
    for r in sorted(said, key=lambda r: -r.score):
        if r.superseded or r.score < LOW:
            continue
        if len(r.text) > _CARRY_QUOTE_CHARS:
            continue  # a long message (a task, a paste) is in the turns, and Active Task's
        if used + len(r.text) > most_chars:
            continue
        line = f"- {r.render(_CARRY_QUOTE_CHARS)}"
        if used + len(line) + 1 <= most_chars:
            lines.append((r.at, line))
            used += len(line) + 1
    return "\n".join(line for _, line in sorted(lines))


_CARRY_QUOTE_CHARS = 300


def excerpt(text: str, limit: int) -> str:
    """An exact quote of a long ``text`` within about ``limit`` characters: its first sentence,
    its most salient ones, its last, in order, joined by " … "."""
    parts = sentences_of(text)
    if len(parts) <= 2:
        return quote(text, limit)
    chosen = salient_sentences(text, limit)
    return " … ".join(quote(parts[i], max(limit // 3, 120)) for i in chosen)


def sentences_of(text: str) -> tuple[str, ...]:
    """The sentences a long message is quoted from: those of its first ``_EXCERPT_FROM``
    characters, and its last one."""
    return tuple(sentence for _, sentence in _spans_of(text))


@lru_cache(maxsize=256)
def _spans_of(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, sentence) of ``sentences_of(text)``; the last one's offset is -1."""
    parts = list(cues.sentences(text[:_EXCERPT_FROM]))
    if len(text) > _EXCERPT_FROM:
        last = [s for _, s in cues.sentences(text[-_LAST_CHARS:])][-1:]
        parts += [(-1, s) for s in last if not parts or s != parts[-1][1]]
    return tuple(parts)


_EXCERPT_FROM = 3_000
_LAST_CHARS = 400


@lru_cache(maxsize=256)
def salient_sentences(text: str, limit: int) -> tuple[int, ...]:
    """Of a long message's sentences (``sentences_of``), in order: the first, the last, and
    the most salient others while they fit ``limit`` characters in all. A sentence is weighed
    by its signals alone (it is one of many in one message, read once): its shaped tokens and
    words of a name (``_HINT``), and the kinds of directive it holds, both found in one pass
    over the message."""
    spans = _spans_of(text)
    parts = [sentence for _, sentence in spans]
    chosen = {0, len(parts) - 1}
    used = len(parts[0]) + len(parts[-1])
    weights = _weights(text[:_EXCERPT_FROM], spans)
    for i in sorted((i for i, w in enumerate(weights) if w > 0), key=lambda i: -weights[i]):
        if i not in chosen and used + len(parts[i]) <= limit:
            chosen.add(i)
            used += len(parts[i])
    return tuple(sorted(chosen))


def _weights(head: str, spans: Sequence[tuple[int, str]]) -> list[float]:
    """Each sentence's weight: its hints (at most four) and its kinds of directive (at most
    two), counted from one scan of ``head`` each."""
    hints = [m.start() for m in _HINT.finditer(head)]
    found = _DIRECTIVE_CUES.scan(head.lower())
    out: list[float] = []
    for at, sentence in spans:
        if at < 0:
            out.append(0.0)
            continue
        end = at + len(sentence)
        hinted = bisect_left(hints, end) - bisect_left(hints, at)
        kinds = sum(1 for offsets in found.values() if _any_within(offsets, at, end))
        out.append(min(hinted, 4) + _DIRECTIVE_WEIGHT * min(kinds, 2))
    return out


def _any_within(offsets: Sequence[int], start: int, end: int) -> bool:
    i = bisect_left(offsets, start)
    return i < len(offsets) and offsets[i] < end


# What a shaped token shows: digits, a path's or an address's mark, a capital inside a sentence.
_HINT = re.compile(r"\d+|[/@]|(?<=\S\s)[^\W\d_a-z]")
