"""Sentences, and the words that mark one as a rule, a decision or a blocker, in many languages.

These cues only *rank*: what the user wrote is kept whole whenever the budget allows, whatever
language it is in; a cue decides what goes first when it does not. The lists cover the
languages our users write in most (English, Spanish, Portuguese, French, German, Italian,
Chinese, Japanese, Russian); a sentence in another language is still kept, only ranked lower.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from worker.compressor.needle_screen import Needles

# A sentence ends after . ! ? followed by white space, after their CJK forms, or at a line
# break. Abbreviations split early sometimes; a split only makes two shorter exact quotes.
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[\u3002\uff01\uff1f\uff1b]|\n")  # CJK full stop, ! ? ;
_BULLET = re.compile(r"(?:[-*•]|\d{1,3}[.)])\s+")


def sentences(text: str) -> Iterator[tuple[int, str]]:
    """(offset, sentence) for each sentence of ``text``, stripped, bullets taken off."""
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end() if m.group() != "\n" else m.start()
        yield from _one(text, pos, end)
        pos = m.end()
    yield from _one(text, pos, len(text))


_ASCII_ENDS_BEFORE = (". ", "! ", "? ", ".\t")
_ENDS_BEFORE = (*_ASCII_ENDS_BEFORE, "\u3002", "\uff01", "\uff1f", "\uff1b")


def sentence_start(text: str, offset: int) -> int:
    """Where the sentence of ``text`` that holds ``offset`` starts: at its line's start, or
    after the mark that ended the sentence before it (". ", not the "." of "3.5")."""
    line_start = text.rfind("\n", 0, offset) + 1
    start = line_start
    # An ASCII text holds no CJK mark: looking for one would read back to the line's start.
    for mark in _ASCII_ENDS_BEFORE if text.isascii() else _ENDS_BEFORE:
        at = text.rfind(mark, line_start, offset)
        if at >= 0:
            start = max(start, at + len(mark))
    return start


def sentence_at(text: str, offset: int) -> tuple[int, str] | None:
    """(start, sentence) of the sentence of ``text`` that holds ``offset``, as ``sentences``
    would give it, found by looking around the offset (not by splitting the whole text)."""
    start = sentence_start(text, offset)
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    m = _SENTENCE_END.search(text, offset, line_end)
    end = m.end() if m is not None and m.group() != "\n" else line_end
    for piece_start, piece in _one(text, start, end):
        return piece_start, piece
    return None


def _one(text: str, start: int, end: int) -> Iterator[tuple[int, str]]:
    raw = text[start:end]
    sentence = raw.strip()
    if len(sentence) < 2:
        return
    start += len(raw) - len(raw.lstrip())
    bullet = _BULLET.match(sentence)
    if bullet:
        start, sentence = start + bullet.end(), sentence[bullet.end() :]
    if len(sentence) >= 2:
        yield start, sentence


class Cue:
    """Words and phrases that mark a sentence, found in one pass over a lower-cased text.

    A latin cue must stand as a word (its neighbours are not letters or digits), checked only
    where it is found; a CJK cue (no spaces around words) may sit anywhere.
    """

    def __init__(self, *groups: str) -> None:
        cues = [w.lower().replace("_", " ") for group in groups for w in group.split()]
        self._cues = tuple(dict.fromkeys(cues))
        self._cjk = tuple(is_cjk(c) for c in self._cues)
        self._needles = Needles(self._cues)

    def search(self, text: str) -> bool:
        """Some cue stands in ``text``."""
        return bool(self.offsets(text.lower(), first=True))

    def offsets(self, lowered: str, *, first: bool = False) -> list[int]:
        """Where the cues stand in ``lowered`` (a lower-cased text), in no order; ``first``:
        stop at the first one."""
        found: list[int] = []
        for i, start, end in self._needles.matches(lowered):
            if self._cjk[i] or _stands_alone(lowered, start, end):
                found.append(start)
                if first:
                    break
        return found


class CueSet:
    """Several cues found in one pass: ``scan`` answers where each one stands."""

    def __init__(self, cues: dict[str, Cue]) -> None:
        owners: dict[str, set[str]] = {}
        for name, cue in cues.items():
            for word in cue._cues:
                owners.setdefault(word, set()).add(name)
        words = list(owners)
        self._owners = tuple(tuple(sorted(owners[w])) for w in words)
        self._cjk = tuple(is_cjk(w) for w in words)
        self._needles = Needles(words)
        self.names = tuple(cues)

    def any_in(self, text: str) -> bool:
        """Some word of some cue stands in ``text`` (any case)."""
        lowered = text.lower()
        return any(
            self._cjk[i] or _stands_alone(lowered, start, end)
            for i, start, end in self._needles.matches(lowered)
        )

    def scan(self, lowered: str) -> dict[str, list[int]]:
        """For each cue name, where its words stand in ``lowered`` (sorted)."""
        found: dict[str, list[int]] = {name: [] for name in self.names}
        for i, start, end in self._needles.matches(lowered):
            if self._cjk[i] or _stands_alone(lowered, start, end):
                for name in self._owners[i]:
                    found[name].append(start)
        for offsets in found.values():
            if len(offsets) > 1:
                offsets.sort()
        return found


def _stands_alone(text: str, start: int, end: int) -> bool:
    """A cue found at [start, end) is a word of its own: no letter, digit or "_" glued to it (a
    cue that begins or ends with punctuation, such as ", so", brings its own boundary there;
    "_" joins a name in code: ``_convert`` holds no "convert")."""
    if start and text[start].isalnum():
        before = text[start - 1]
        if before.isalnum() or before == "_":
            return False
    if end < len(text) and text[end - 1].isalnum():
        after = text[end]
        if after.isalnum() or after == "_":
            return False
    return True


def is_cjk(word: str) -> bool:
    return bool(word) and max(word) > _CJK_FROM


_CJK_FROM = "\u2e80"  # CJK radicals and all scripts after them


# What marks a decision: a reason or a purpose given for it, or options weighed. "Strong"
# connectives make a sentence a decision on their own; a "weak" one only together with a
# choice ("I'll", "keep", "te recomiendo"); exploring ("let me check") counts against it. A
# clause joined by a colon, a semicolon or a dash ("Sticking with X; Y drifted twice") is the
# weak reason people write most: the choice comes first, its reason after the mark.
REASON = Cue(
    "because since so_that given_that given to_avoid in_order_to decided decision i_chose "
    "we_chose chose_to chose_a chose_an chose_the choose opted going_with switch_to trade-off "
    "tradeoff",  # not "chose" alone: French "chose" is a thing
    "porque ya_que para_que para_evitar para_no de_modo_que dado_que puesto_que decidí elegí "
    "opté "
    "pois já_que visto_que para_evitar decidi optei "
    "parce_que parce_qu' puisque puisqu' vu_que étant_donné afin_de pour_que pour_éviter ,_car "
    "j'ai_choisi "
    "weil denn damit entschieden ,_da sodass "
    "perché poiché siccome visto_che dato_che affinché per_evitare ho_deciso ho_scelto "
    "abbiamo_deciso "
    "потому_что решил решили поскольку так_как чтобы",
    "因为 由于 以免 为了 决定 以便 从而 改用 采用 なので ので 決めた 決めました ことにしました",
)
# A contrast ("X rather than Y", "en vez de", "而不是") weighs two options and names the one
# taken: a choice, not a reason for it. Alone it is a pick without its why.
CONTRAST = Cue(
    "instead rather_than",
    "en_lugar_de en_lugar_del en_vez_de en_vez_del "
    "em_vez_de em_vez_do em_vez_da em_lugar_de "
    "plutôt_que plutôt_qu' au_lieu_de au_lieu_du au_lieu_des "
    "statt anstatt stattdessen anstelle invece_di вместо",
    "而不是 而不用 而非 代わりに",
)
WEAK_REASON = Cue(
    "so therefore hence that_way which_means which_lets :_ ;_ \u2014 _\u2013_",  # em, en dash
    ",_así ,_assim donc deshalb quindi ,_così поэтому",
    "所以 让 于是 因此 这样 だから \uff1a \uff1b",  # fullwidth colon, semicolon
)
# Words that judge an option ("X is better"): choice words even after a word of state.
_JUDGEMENT_WORDS = "better simpler simplest cleaner safer appropriate"
CHOICE = Cue(
    "i'll i_will i'm i_am we'll we_will i'd i_would we'd my_plan the_plan plan decision "
    "recommend suggest propose prefer keep keeping use using switch split splitting convert put "
    "move moving add adding drop dropping go_with going_with stick_with sticking_with settled_on "
    "settle_on pick picked wins win we_should i_should we_need_to i_need_to the_fix_is "
    "the_approach_is the_solution_is the_simplest_fix the_best_fix the_right_fix "
    + _JUDGEMENT_WORDS,
    "pongo dejo mantengo uso usaré haré voy_a prefiero elijo escojo opto me_quedo_con quito "
    "separo divido convierto recomiendo propongo sugiero empezaría dejaría mejor decisión gana "
    "escolho escolhi optei opto fico_com mantenho uso vou prefiro passo_para recomendo melhor "
    "decisão ganha "
    "je_vais je_garde on_garde je_pars_sur on_part_sur je_prends je_choisis j'ai_choisi je_préfère "
    "je_passe je_découpe retenu décision l'emporte mieux "
    "ich_werde ich_nehme ich_wähle ich_bleibe_bei wir_nehmen ich_verwende ich_teile ich_würde "
    "ich_setze entscheidung gewinnt besser "
    # "we should", "I'll use", "keep", "drop" where the lists above have them
    "deberíamos devemos deveríamos on_devrait nous_devrions wir_sollten "
    "scelgo userò uso preferisco consiglio propongo mantengo tolgo passo_a dovremmo divido "
    "meglio decisione resto_su "
    "оставлю использую выбираю предлагаю рекомендую убираю стоит лучше "
    "перейду_на",
    "我 我们 把 改成 换成 打算 建议 推荐 保持 放进 拆成 先 用 选 にします 使います べき",
)
EXPLORE = Cue(
    "let_me let's check look see inspect examine explore understand verify investigate find "
    "search read",
    "vamos_a_ver revisemos veamos miremos revisar reviso verificar verifico comprobar compruebo "
    "mirar miro "
    "olhar olho checar conferir "
    "regarder regarde vérifier vérifie examiner inspecter "
    "schaue prüfe prüfen überprüfe nachsehen ansehen "
    "controllo controllare verificare "
    "посмотрю посмотрим проверю проверим",
    "看看 检查 查看 确认 調べ 確認",
)
# A reason that explains how things are, not why something was chosen: "that's because",
# "it fails because" reads the code; "that's fine because", "should work since" judge it.
EXPLAIN = Cue(
    "'s_because \u2019s_because is_because was_because are_because were_because be_because "
    "just_because only_because fails_because failed_because happens_because works_because "
    "that's_fine that's_ok that's_okay that's_correct that's_actually that's_not that's_right "
    "is_correct is_the_correct should_work should_still_work should_be_fine should_be_correct "
    "is_what_we_want",
    "es_porque fue_porque era_porque é_porque foi_porque est_parce c'est_parce c'était_parce "
    "liegt_daran",
    "是因为 是由于",
)
# What a clause says about how things are (a copula, an auxiliary, a verb of behaving): said
# before a reason with no choice named ("`x` is on the next line because ...", "it doesn't
# trigger an import because ..."), the reason explains the state; it decides nothing.
STATE = Cue(
    "is are was were 's \u2019s isn't aren't wasn't weren't be been being does doesn't do don't "
    "did didn't has hasn't have haven't had seems appears happens returns raises works fails "
    "gets",
    "es está son están era fue é são foi est sont était ist sind war è sono "
    # the verbs of behaving English lists ("fails", "works", "returns", "raises", "seems")
    "falla fallan funciona funcionan devuelve devuelven lanza lanzan ocurre parece "
    "falha falham funcionam retorna retornam devolve lança lançam acontece "
    "échoue échouent fonctionne fonctionnent marche renvoie renvoient retourne lève lèvent "
    "semble "
    "scheitert schlägt funktioniert klappt gibt liefert wirft passiert scheint fehlt "
    "fallisce falliscono funziona funzionano restituisce ritorna solleva succede sembra "
    "падает работает возвращает выбрасывает кажется происходит",
    "失败 出错 报错 返回 抛出 失敗 返します 返す 投げ 動きます 動く",
)
_ABLE_WORDS = (
    "puedo puede podemos pueden posso pode podemos podem consigo consegue conseguimos "
    "peux peut pouvons peuvent kann können possiamo può possono riesco riusciamo "
    "могу может можем могут"
)
_ABLE = frozenset(_ABLE_WORDS.split())
# A modal before a reason ("it would be absolute since ...") says what follows from how things
# are; before a contrast ("it should return X instead of Y") it may prescribe the fix.
MODAL = Cue(
    "would wouldn't should shouldn't will won't can can't cannot could couldn't",
    "sería seria serait wäre "
    # "can": what one is able to do, in the other languages the lists cover
    + _ABLE_WORDS,
)
# What opens advice on what to do ("What matters is X rather than Y", "La idea es ..."): its
# copula weighs the options, it does not tell how things are.
ADVICE = Cue(
    "what_matters the_idea the_point the_key the_goal the_trick",
    "lo_importante la_idea la_clave el_truco o_importante a_ideia l'idée l'important "
    "das_wichtige die_idee",
)
# A guess is a hypothesis, not a choice: "it might be because", "probably", "quizás".
HEDGE = Cue(
    "might maybe perhaps probably possibly i_guess i_suspect",
    "quizás quizá tal_vez probablemente puede_que talvez provavelmente peut-être probablement "
    "vielleicht wahrscheinlich forse возможно наверное",
    "可能 也许 或许 大概 たぶん かもしれ",
)


# What marks something still in the way.
BLOCKER = Cue(
    "blocked blocker i_can't i_cannot we_can't we_cannot unable_to waiting_for stuck "
    "still_failing still_fails",
    "bloqueado bloqueada no_puedo no_podemos sigue_fallando esperando_a esperando_al "
    "esperando_que atascado atascada "
    "não_consigo não_conseguimos não_posso não_podemos aguardando esperando_por travado travada "
    "continua_falhando "
    "bloqué bloquée je_ne_peux_pas nous_ne_pouvons_pas on_ne_peut_pas je_n'arrive_pas "
    "on_n'arrive_pas en_attente coincé coincée no_consigo "
    "impossible_de échoue_toujours "
    "blockiert ich_kann_nicht wir_können_nicht warte_auf warten_auf nicht_weiter "
    "bloccato bloccata non_posso non_possiamo non_riesco non_riusciamo in_attesa "
    "continua_a_fallire "
    "заблокирован не_могу не_можем жду ждём ждем застрял застряли не_получается",
    "阻塞 卡住 无法 等待 等着 还是失败 仍然失败 ブロック できない 待ち 進めません 進められない",
)


# German puts the object between "can" and "not" ("Ich kann die Tests nicht starten", "Wir
# können noch nicht mergen"), where the cue words above are phrases without gaps.
_UNABLE_SPLIT = re.compile(
    r"\b(?:ich|wir)\s+(?:kann|können|konnte|konnten)\s+(?:[^\s.!?;:]+\s+){0,6}?nicht\b"
)


def unable_at(lowered: str) -> list[int]:
    """Where the agent says it cannot do something in a phrase the cue words cannot hold: a
    German "ich/wir kann/können … nicht" with up to six words between."""
    if "nicht" not in lowered:
        return []
    return [m.start() for m in _UNABLE_SPLIT.finditer(lowered)]


# Assistant prose is read in two passes: the rarer reason, contrast and blocker words over the
# whole text, then choice and exploring words (common ones: "use", "check") over the sentences
# a reason or a contrast was found in.
ASSISTANT = CueSet(
    {
        "reason": REASON,
        "weak": WEAK_REASON,
        "contrast": CONTRAST,
        "blocker": BLOCKER,
        "cjk_comma": Cue("\uff0c"),
    }
)
_CHOICE_OR_EXPLORE = CueSet(
    {
        "choice": CHOICE,
        "explore": EXPLORE,
        "explain": EXPLAIN,
        "hedge": HEDGE,
        "advice": ADVICE,
    }
)
# Words of state are common ("is", "do"): looked for only in a sentence that names no choice.
_STATE_OR_MODAL = CueSet({"state": STATE, "modal": MODAL})
# What ends a CJK clause. A one-character verb of choosing ("用", "选") takes an object: one
# right before such a mark is a noun ("有什么用", "what use it has") or part of another word.
_CJK_CLAUSE_END = frozenset("\uff0c\u3001\u3002\uff1a\uff1b\uff01\uff1f,.:;!?")


def decision_weight(
    sentence: str,
    *,
    reason: bool,
    weak: bool,
    reason_at: int = -1,
    contrast: bool = False,
    contrast_at: int = -1,
    explained: bool = False,
    answer: bool = False,
    concludes: bool = False,
) -> int:
    """How surely ``sentence`` states a decision, given whether a strong reason, a weak one or
    a contrast ("X rather than Y") stands in it.

    4: a strong reason beside a choice ("I'd keep X because Y"), a contrast before it being
    one ("X rather than Y, since Z"; ``explained``: the reason came first, "it fails because
    it gets X instead of Y", and explains); 3: a strong reason alone (unless it only explains
    where to look), or a choice word that weighs two (a contrast) or gives a weak reason to
    one of them; 2: a weak reason beside a choice, or a contrast alone (two weighed, no one
    named, no reason); below 2 it is none. Exploring ("let me check") counts one against.
    ``answer``: the sentence opens a reply to a short question, which makes it a choice in
    whatever words it is put (3 with a weak reason: asked to pick, it picked and said why).
    ``reason_at``: where the first strong reason stands in ``sentence``; a choice word after
    it is part of the reason ("it's empty because we're using X"), unless the reason opens the
    sentence and the choice follows its clause ("Since X, I'll ...").
    ``contrast_at``: where the first contrast stands; a contrast alone after a word of state
    ("it's indented 9 spaces instead of 8", "it returns X instead of Y") tells what the code
    does, not what was chosen.
    ``concludes``: the weak reason is the sentence's first word ("So ..."), a conclusion drawn
    from what came before; it counts only when the agent or a choice comes right after it ("So
    we'll ...", "So using X ..."), not the code ("So that part works", "So L036 adds ...").

    A question decides nothing; nor does an explanation ("that's because", "it fails because",
    "that's fine since") or a guess ("it might be", "probably") that names no choice.
    """
    if not (reason or weak or contrast) or sentence.endswith(_QUESTION_ENDS):
        return 0
    lowered = sentence.lower()
    found = _CHOICE_OR_EXPLORE.scan(lowered)
    explore = bool(found["explore"])
    choices = [at for at in found["choice"] if _chooses(lowered, at)]
    named = answer or bool(choices) or _declines(lowered)
    if reason and reason_at >= 0 and lowered.startswith(_DECIDING, reason_at):
        named = True  # "Decided against X since ...": the reason word names the choice
    elif reason and named and not answer and reason_at >= 0 and not _declines(lowered):
        named = _chosen_for_reason(lowered, choices, reason_at)
    guess = not named and (
        bool(found["explain"] or found["hedge"])
        or (reason and reason_at >= 0 and _explains(lowered, reason_at))
        or (reason and reason_at > 0 and lowered[reason_at - 1] == "(")  # an aside
        or (not (reason or weak or found["advice"]) and _states_before(lowered, contrast_at))
    )
    if weak and concludes and not answer and not _agent_after_opening(lowered, found["choice"]):
        weak = False
        if not (reason or contrast):
            return 0
    if explore and choices and all(lowered.startswith(_GOING_TO, at) for at in choices):
        named = answer  # "I'll check x because ...": going to look is no choice
    if reason:  # "Let me look at x since ...": a reason to look, nothing decided
        if named or (contrast and not explained):
            return 4
        return 1 if explore or guess else 3
    if answer and weak:  # asked to pick, it picked and said why
        return 3
    weight = 1 + named + contrast if weak else 1 + contrast + (named and contrast)
    return min(weight, 3) - (explore or guess)


def _chosen_for_reason(lowered: str, choices: list[int], reason_at: int) -> bool:
    """A choice word in ``lowered`` is the one its reason (at ``reason_at``) is given for."""
    start, end = _reasoned_clause(lowered, reason_at)
    return any(at < reason_at or start <= at < end for at in choices)


def _reasoned_clause(lowered: str, reason_at: int) -> tuple[int, int]:
    """(start, end) of the clause of ``lowered`` its reason (at ``reason_at``) is given for:
    the words before it, or after the comma that ends it when it opens the sentence ("Since
    X, I'll ...")."""
    if is_cjk(lowered[:1]):
        opening = _OPENING_CJK_CHARS
    else:  # the first word, or the second after a conjunction ("But since ...")
        opening = _opening_chars(lowered, _REASON_OPENING_WORDS)
    if reason_at >= opening:
        return 0, reason_at
    comma = lowered.find(",", reason_at)
    cjk_comma = lowered.find("\uff0c", reason_at)
    if comma < 0 or 0 <= cjk_comma < comma:
        comma = cjk_comma
    return (comma, len(lowered)) if comma >= 0 else (reason_at, reason_at)


def _explains(lowered: str, reason_at: int) -> bool:
    """A word of state or a modal stands in the clause the reason is given for ("`x` is on
    the next line because ...", "Since X, the import never gets added"), or there is none
    ("Because the directory has no `__init__.py`.": the reason for what was said before)."""
    start, end = _reasoned_clause(lowered, reason_at)
    if start == end:
        return True
    found = _STATE_OR_MODAL.scan(lowered[start:end])
    return bool(found["state"] or found["modal"])


def _states_before(lowered: str, at: int) -> bool:
    """A word of state stands in ``lowered`` before ``at``."""
    return bool(_STATE_OR_MODAL.scan(lowered[:at])["state"])


# The reason words that name a choice themselves ("decided", "chose", "opté", "决定").
_DECIDING_WORDS = (
    "decid decis chose choose i_chose we_chose opted going_with switch_to trade elegí opté optei "
    "entschied "
    "ho_scelto ho_deciso abbiamo_deciso j'ai_choisi решил 决定 改用 采用 決めた 決めました "
    "ことにしました"
)
_DECIDING = tuple(w.replace("_", " ") for w in _DECIDING_WORDS.split())
# The choice words that only say the agent is about to act ("I'll", "je vais"): before a word
# of exploring ("I'll check", "vou verificar") they announce a look, not a choice.
_GOING_TO_WORDS = "i'll i_will we'll we_will je_vais voy_a vou ich_werde 我 我们"
_GOING_TO = tuple(w.replace("_", " ") for w in _GOING_TO_WORDS.split())
_QUESTION_ENDS = ("?", "\uff1f")
# Who may come right after a concluding "So": the agent, in the languages of the cue lists.
_AGENT_WORDS = (
    "i we i'll we'll i'd we'd i'm let's let je on nous j'ai ich wir yo voy vamos eu vou io "
    "я мы nehme werde würde bleibe verwende"
)
_AGENTS = frozenset(_AGENT_WORDS.split())


def _agent_after_opening(lowered: str, choices: list[int]) -> bool:
    """The agent, or a choice word, comes right after the first word of ``lowered`` (in CJK,
    within its first few characters)."""
    if is_cjk(lowered[:1]):
        return "\u6211" in lowered[:_OPENING_CJK_CHARS] or any(
            at < _OPENING_CJK_CHARS for at in choices
        )
    space = lowered.find(" ")
    if space < 0:
        return False
    rest = space + 1
    while lowered.startswith((" ", ","), rest):
        rest += 1
    word_end = lowered.find(" ", rest)
    word = lowered[rest : word_end if word_end > 0 else len(lowered)].rstrip(",")
    return word in _AGENTS or rest in choices


def _chooses(lowered: str, at: int) -> bool:
    """The choice word at ``at`` is one: not a one-character CJK word (a multi-character one
    goes on with CJK) at the end of its clause."""
    if lowered[at] <= _CJK_FROM:
        return not _acted_on(lowered, at)
    after = lowered[at + 1 : at + 2]
    return bool(after) and after not in _CJK_CLAUSE_END


# Words of state or negation that, right before a choice verb ("doesn't add", "it might be
# keeping", "is using"), make it tell what the code does; "is better" still judges an option.
_ACTED_ON_WORDS = (
    "is are was were be been being 's \u2019s does doesn't do don't did didn't isn't aren't "
    "wasn't not"
)
_ACTED_ON = frozenset(_ACTED_ON_WORDS.split())
_JUDGEMENTS = frozenset(_JUDGEMENT_WORDS.split())


def _acted_on(lowered: str, at: int) -> bool:
    """The choice word at ``at`` of ``lowered`` follows a word of state or a negation."""
    before = lowered[max(0, at - 10) : at].rstrip()
    word = before[before.rfind(" ") + 1 :]
    if word not in _ACTED_ON and not word.endswith(("'s", "\u2019s")):
        return False
    end = lowered.find(" ", at)
    return lowered[at : end if end > 0 else len(lowered)].rstrip(".,;:") not in _JUDGEMENTS


# A sentence that opens by declining ("Not upgrading X", "No actualizo X", "Pas de cache") has
# made a choice: not to do it. ("No, ..." answers; it declines nothing.)
_DECLINE_WORDS = "not no não pas kein keine nicht non не"
_DECLINE = frozenset(_DECLINE_WORDS.split())


def _declines(lowered: str) -> bool:
    if lowered[:1] > _CJK_FROM:
        return _declines_cjk(lowered)
    space = lowered.find(" ", 0, 8)  # the words are short
    if space <= 0 or lowered[:space] not in _DECLINE:
        return False
    # "No puedo ...", "Não consigo ...": unable to, as "I can't", not declining
    return lowered[space + 1 :].split(" ", 1)[0] not in _ABLE


# In Chinese "不" or "别" before a verb near the opening declines ("不缓存X了", "这次不升级X");
# before these it is a word of its own ("不是" is not, "不过" but, "不用" no need, ...).
_NOT_DECLINING = frozenset("是过能会用太同少错到仅然管知一对好行")


def _declines_cjk(lowered: str) -> bool:
    for at in range(min(3, len(lowered) - 1)):
        if lowered[at] in "不别" and lowered[at + 1] not in _NOT_DECLINING:
            return is_cjk(lowered[at + 1])
    return False


def reason_after_comma(sentence: str) -> bool:
    """A CJK ``sentence`` whose opening clause names a choice ("固件先推给一成的柜子") goes on,
    after a comma, with its reason: Chinese joins the two with a comma where English writes a
    colon or "because". A pronoun alone ("我") names no choice; exploring makes none."""
    lowered = sentence.lower()
    comma = lowered.find("\uff0c")
    if not is_cjk(lowered[:1]) or comma < 0:
        return False
    opening = lowered[:comma]
    if _declines_cjk(opening):
        return True
    found = _CHOICE_OR_EXPLORE.scan(opening)
    return not found["explore"] and any(
        opening[at] != "\u6211" and _chooses(opening, at) for at in found["choice"]
    )


def opens_with_choice(sentence: str) -> bool:
    """``sentence`` opens by naming a choice ("Keeping X.", "I'll go with X.", "Not
    upgrading X."), within its first few words, and explores nothing ("I'll look at X to
    understand Y" is a step)."""
    lowered = sentence.lower()
    if _declines(lowered):
        return True
    found = _CHOICE_OR_EXPLORE.scan(lowered)
    if found["explore"] or not found["choice"]:
        return False
    opening = _OPENING_CJK_CHARS if is_cjk(lowered[:4]) else _opening_chars(lowered)
    return any(at < opening and _chooses(lowered, at) for at in found["choice"])


_OPENING_WORDS = 3
_REASON_OPENING_WORDS = 2
_OPENING_CJK_CHARS = 6


def _opening_chars(lowered: str, words: int = _OPENING_WORDS) -> int:
    """Where the word after the first few of ``lowered`` starts."""
    at = -1
    for _ in range(words):
        at = lowered.find(" ", at + 1)
        if at < 0:
            return len(lowered)
    return at
