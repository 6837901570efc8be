"""Decisions, rules and blockers read from what people wrote, in the ways people write them.

The sentences are written here (not taken from the retention corpora).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.compressor.cues import sentence_start
from worker.compressor.messages import ToolCall, assistant, user
from worker.compressor.prose import (
    Said,
    decision_tier,
    distinct,
    is_question,
    quoted,
    read_prose,
)


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))


DECISIONS = [
    ("a causal connective", "Keeping the cache in memory because the data set is 2 MB."),
    (
        "a choice, then a colon",
        "Using a partial index for this: the table is mostly archived rows.",
    ),
    ("a choice, then a semicolon", "Sticking with the old parser; the new one drops comments."),
    ("a choice, then a dash", "Splitting the migration in two \u2014 the backfill takes an hour."),
    ("given", "Redis over memcached here, given that we need sorted sets."),
    ("Portuguese", "Escolhi o Postgres em vez do MySQL, já que precisamos de JSONB."),
    ("Spanish", "Despliego primero en staging, dado que producción no tiene rollback."),
    ("French", "On garde le format actuel, car les clients le lisent déjà."),
    ("German", "Ich nehme die Queue-Tabelle: die Datenbank läuft ohnehin."),
    ("Chinese", "这里用乐观锁\uff1a冲突很少\uff0c重试也便宜。"),
    (
        "the reason in a labelled sentence of its own",
        "Plan: nightly snapshots for the archive. Why: the restore window is a day.",
    ),
]


@pytest.mark.parametrize("text", [d[1] for d in DECISIONS], ids=[d[0] for d in DECISIONS])
def test_a_decision_and_its_reason_are_read_whole(text: str) -> None:
    msgs = [user("go"), assistant(f"{text} Running the tests now.", [bash("c1", "make test")])]
    decisions = [d.text for d in read_prose(msgs).decisions]
    assert decisions == [text]


NOT_DECISIONS = [
    (
        "a reason to look somewhere",
        "Let me look at the serializer since the import comes from there.",
    ),
    ("a status line with a dash", "Getting there \u2014 one more check after this edit."),
    ("a finding, no choice", "Cause found: the import dropped the sign convention."),
    ("a plain step", "Running the suite to get a baseline."),
]


@pytest.mark.parametrize("text", [d[1] for d in NOT_DECISIONS], ids=[d[0] for d in NOT_DECISIONS])
def test_steps_and_findings_are_not_decisions(text: str) -> None:
    msgs = [user("go"), assistant(text, [bash("c1", "make test")])]
    assert read_prose(msgs).decisions == ()


# In a chat, a pick is often worded without a reason word: it answers "which one?", and the
# reason follows a colon or a dash.
ANSWERS = [
    ("So which one?", "Book the dentist for the morning: afternoons there always run late."),
    ("¿Tú qué harías?", "Ficaria com o contrato de 12 meses \u2014 o de 24 poupa pouco."),
    ("Alors, je prends lequel ?", "Le vol du matin : l'après-midi il y a souvent du retard."),
    ("选哪个\uff1f", "选靠窗的座位\uff1a过道那边总有人经过。"),
]


@pytest.mark.parametrize(("question", "answer"), ANSWERS, ids=[a[0] for a in ANSWERS])
def test_the_opening_of_an_answer_to_a_short_question_is_a_decision(
    question: str, answer: str
) -> None:
    msgs = [user(question), assistant(f"{answer} Tell me if you want more.")]
    assert [d.text for d in read_prose(msgs).decisions] == [answer]


def test_a_reply_to_a_statement_or_a_long_question_is_not_made_a_decision() -> None:
    reply = "Quick version: an onion base, the main ingredient, then let it simmer."
    for asked in ("My phone is slow since the update.", "How do I make a lentil dal for three?"):
        assert read_prose([user(asked), assistant(reply)]).decisions == ()


@pytest.mark.parametrize(
    "text",
    [
        "Dis-moi si tu as besoin d'autre chose.",  # French "chose" is a thing, not "chose"
        "我建议这么安排\uff1a",  # a colon that ends the sentence leads into a list
    ],
)
def test_false_friends_and_lead_ins_are_not_decisions(text: str) -> None:
    assert read_prose([user("go"), assistant(text, [bash("c1", "ls")])]).decisions == ()


def test_a_choice_with_a_strong_reason_outweighs_a_strong_reason_alone() -> None:
    chosen = "I'll keep the retry loop because the API drops one call in fifty."
    explained = "The cache misses because the key includes the timestamp."
    weights = {
        d.text: d.weight
        for d in read_prose([user("go"), assistant(f"{chosen} {explained}")]).decisions
    }
    assert weights[chosen] > weights[explained] >= 3


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Il faut quels papiers pour le passeport ?", True),
        ("Estou indecisa entre as duas, qual?", True),
        ("对了\uff0c我的航班是 1 月 28 日 11:50 起飞\uff0c来得及吗\uff1f", True),
        ("Le dimanche c'est pour la famille, pas de courses ce jour-là, ok ?", False),
        ("No gluten for me, right?", False),
        ("The build is green.", False),
        # Without a question mark, where the words show it.
        ("no consigo dormir antes de las 2, qué hago", True),
        ("晚上总是睡不着\uff0c怎么办", True),
        ("手机是新买的吗", True),
        ("vale, que lo pruebo luego", False),
        ("what I did was restart it", False),
    ],
)
def test_a_question_is_told_from_a_statement_with_a_tag(text: str, asks: bool) -> None:
    assert is_question(text) is asks


def _weights(text: str) -> dict[str, int]:
    msgs = [user("go"), assistant(text, [bash("c1", "ls")])]
    return {d.text: d.weight for d in read_prose(msgs).decisions}


@pytest.mark.parametrize(
    "text",
    [
        "What matters is what it does rather than what it is called.",
        "La idea es entender para qué sirve en vez de memorizar la definición.",
        "关键是它有什么用\uff0c而不是它叫什么。",  # "用" here is a noun ("what use it has")
    ],
)
def test_a_contrast_alone_is_a_pick_without_a_reason(text: str) -> None:
    """A contrast weighs two options: a choice, not the reason for one."""
    assert _weights(f"{text} Done.") == {text: 2}


def test_a_contrast_with_a_reason_is_a_choice_with_its_reason() -> None:
    text = "Take the train rather than the bus, because the bus stops twice on the way."
    assert _weights(text) == {text: 4}


def test_a_one_character_cjk_choice_word_that_ends_a_clause_is_no_choice() -> None:
    # "够用" (enough) ends its clause: nothing is chosen, the colon only explains.
    assert _weights("三天时间够用\uff1a每天一个重点就好。") == {}
    assert _weights("这里用乐观锁\uff1a冲突很少。") == {"这里用乐观锁\uff1a冲突很少。": 2}


def test_the_same_advice_with_other_names_is_one_stock_phrase() -> None:
    replies = [
        "For a day in Porto: walk the old town, one museum, and book dinner early.",
        "Take the 8 o'clock train: the later ones are always full.",
        "For a day in Lyon: walk the old town, one museum, and book dinner early.",
        "For a day in San Sebastián: walk the old town, one museum, and book dinner early.",
    ]
    msgs = []
    for reply in replies:
        msgs += [user("So which one?"), assistant(reply)]
    decisions = read_prose(msgs).decisions
    found = {
        s.text: (times, decision_tier(s, times)) for s, times in distinct(decisions, template=True)
    }
    assert found == {replies[1]: (1, 1), replies[3]: (3, 3)}
    assert len(distinct(decisions)) == 4  # word for word, they differ


@pytest.mark.parametrize(
    "text",
    [
        "Me quedo con SQLite por ahora, ya que los datos caben en una máquina.",
        "Deberíamos fijar la versión, así la compilación es reproducible.",
        "Devemos fixar a versão, assim o build fica reproduzível.",
        "On devrait figer la version, pour que le build reste reproductible.",
        "Je retire la couche de cache, parce qu'elle a masqué des données périmées deux fois.",
        "Per ora scelgo SQLite, visto che i dati stanno su una macchina.",
        "Dovremmo fissare la versione, così la build resta riproducibile.",
        "Ho deciso di dividere il modulo per tenere ogni file sotto le 300 righe.",
        "Стоит зафиксировать версию, чтобы сборка оставалась воспроизводимой.",
        "各ファイルを300行以下に保つため、モジュールを分割することに決めました。",
        "I chose to split the module to keep each file under 300 lines.",
    ],
)
def test_a_decision_and_its_reason_are_read_in_every_language_the_cues_list(text: str) -> None:
    # Each says what its English counterpart says in words the English lists hold ("we
    # should", "since", "so that", "because", "I decided"); written for this test, in the
    # ways agents write, not taken from the labeled or the blind set.
    assert list(_weights(text).values()) >= [2], _weights(text)


@pytest.mark.parametrize(
    "text",
    [
        "The build fails because the lockfile is stale.",
        "El build falla porque el lockfile está desactualizado.",
        "Devuelve None ya que falta la clave.",
        "O build falha porque o lockfile está desatualizado.",
        "Le build échoue parce que le lockfile est périmé.",
        "Elle renvoie None puisque la clé manque.",
        "Der Build schlägt fehl, weil die Lockfile veraltet ist.",
        "Der Test wirft einen KeyError, weil die Fixture leer ist.",
        "L'import funziona perché il percorso è in conftest.",
        "Il test solleva un KeyError perché la fixture è vuota.",
        "Сборка падает, потому что lockfile устарел.",
        "它返回None\uff0c因为缺少这个键。",
    ],
)
def test_what_code_does_and_why_is_no_decision_in_any_language_the_cues_list(text: str) -> None:
    # The verbs of behaving the English list holds ("fails", "returns", "raises", "works"),
    # in the other languages: the reason explains the behaviour, nothing was chosen.
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "I'll check the config file because the port may be wrong.",
        "Voy a revisar el parser, ya que el error viene de ahí.",
        "Vou verificar o parser, já que o erro vem de lá.",
        "Je vais vérifier le fichier de config parce que le port est peut-être faux.",
        "Ich prüfe die Konfigurationsdatei, weil der Port falsch sein könnte.",
        "Controllo il parser, perché l'errore viene da lì.",
        "Проверю файл конфигурации, потому что порт может быть неверным.",
        "我检查一下配置文件\uff0c因为端口可能不对。",
        "ポートが間違っているかもしれないので\u3001設定ファイルを調べます。",
    ],
)
def test_going_to_look_and_why_is_no_decision_in_any_language_the_cues_list(text: str) -> None:
    assert _weights(text) == {}


def test_going_to_use_something_and_why_is_still_a_decision() -> None:
    text = "I'll use a retry loop because the calls are cheap, and check the logs after."
    assert _weights(text) == {text: 4}


@pytest.mark.parametrize(
    "text",
    [
        "I can't run the tests: the database is down.",
        "No puedo ejecutar los tests: la base de datos está caída.",
        "No podemos fusionar todavía porque el CI está en rojo.",
        "Não consigo rodar os testes: o banco está fora do ar.",
        "Je ne peux pas lancer les tests : la base est en panne.",
        "On ne peut pas fusionner tout de suite parce que la CI est rouge.",
        "Non riesco a lanciare i test: il database è giù.",
        "Non possiamo ancora fare il merge perché la CI è rossa.",
        "Ich kann die Tests nicht starten: die Datenbank ist down.",
        "Wir können noch nicht mergen, weil die CI rot ist.",
        "Je n'arrive pas à lancer les tests sans la base.",
        "No consigo que los tests pasen en local.",
        "Не могу запустить тесты: база данных лежит.",  # noqa: RUF001 (Cyrillic)
    ],
)
def test_being_unable_is_a_blocker_not_a_decline_in_any_language_the_cues_list(text: str) -> None:
    # "No puedo ..." opens with a "no" as "Not upgrading X: ..." does, but says what cannot be
    # done, as "I can't" does: something is in the way, nothing was chosen.
    prose = read_prose([user("go"), assistant(text, [bash("c1", "ls")])])
    assert (prose.decisions, [b.text for b in prose.blockers]) == ((), [text])


def test_a_name_in_any_latin_script_is_a_slot_of_a_stock_phrase() -> None:
    said = [
        Said(1, "A day in Łódź: walk the old town."),
        Said(3, "A day in Lyon: walk the old town."),
    ]
    assert distinct(said, template=True) == [(said[1], 2)]


@pytest.mark.parametrize(
    "text",
    [
        "Not rewriting the parser here: the old one is covered by three hundred tests.",
        "No migro la base ahora: el cliente está de vacaciones.",
        "Pas de retry sur cet appel : il n'est pas idempotent.",
    ],
)
def test_declining_with_a_reason_is_a_decision(text: str) -> None:
    assert _weights(text) == {text: 2}


def test_a_no_that_answers_declines_nothing() -> None:
    assert _weights("No, the tests pass: the flake was the network.") == {}


def test_a_terse_choice_and_its_reason_in_the_next_sentence_are_one_decision() -> None:
    decided = (
        "Not bumping the SDK in this PR. It changes the auth flow, so it needs its own review."
    )
    assert _weights(f"Done. {decided}") == {decided: 2}


def test_a_reason_after_a_sentence_that_chose_nothing_stays_no_decision() -> None:
    assert _weights("The loader reads the whole file. It is slow, so the test times out.") == {}


@pytest.mark.parametrize(
    "text",
    [
        "不重试这个接口了\uff0c它不是幂等的\uff0c重复调用会扣两次钱。",  # declining
        "这次先发到测试环境\uff0c生产那边没有回滚脚本。",  # "先": first, a choice
    ],
)
def test_a_chinese_choice_then_a_comma_gives_its_reason(text: str) -> None:
    assert _weights(text) == {text: 2}


@pytest.mark.parametrize(
    "text",
    [
        "明白\uff0c我会注意的。",  # the choice comes after the comma: an acknowledgement
        "文件已经找到了\uff0c里面有三个函数。",  # nothing chosen
        "不是这个原因\uff0c测试本身就不稳定。",  # "不是": is not, declines nothing
    ],
)
def test_a_chinese_comma_without_an_opening_choice_gives_no_reason(text: str) -> None:
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "我建议按这个顺序\uff1a重启\uff1b清缓存\uff1b再更新系统。",  # a list after the colon
        "We'll pass the flag: `--fast`.",  # a colon before a word or two gives no reason
    ],
)
def test_a_colon_before_a_list_item_gives_no_reason(text: str) -> None:
    assert _weights(text) == {}


def test_a_choice_word_that_weighs_two_outranks_a_contrast_alone() -> None:
    chosen = "I'll take the limits from the config instead of hard-coding them."
    picked = "A list rather than a tuple for the rows here."
    assert _weights(f"{chosen} {picked}") == {chosen: 3, picked: 2}


def test_a_contrast_inside_the_reason_explains_rather_than_chooses() -> None:
    explains = "The test fails because the loader gets a list instead of a tuple."
    chooses = "Take a list rather than a tuple, because the caller appends to it."
    assert _weights(f"{explains} {chooses}") == {chooses: 4}


@pytest.mark.parametrize(
    "text",
    [
        "That's because `src` is in sys.path when the tests run from the root.",
        "This is because of the TODO comment in the code about overriding.",
        "Then the target is on the next line because there's a newline before it.",
        "The directories are empty because we're using global settings.",
        "My fix didn't work because `_convert` is called for each element.",
        "And the mixin doesn't trigger a `models` import because it's not `models.Model`.",
        "The path would be absolute since `BASE_DIR` is absolute.",
        "C'est parce que le chemin est relatif au dossier courant.",
        "Es porque el cargador recibe una lista y no una tupla.",
    ],
)
def test_an_explanation_of_how_the_code_behaves_is_no_decision(text: str) -> None:
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "So that's not the issue.",
        "So that part should work, since the loader sorts them.",
        "The `decode` method catches all exceptions, so that's fine.",
        "So L036 is creating a `NewlineSegment()` but not adding any whitespace after it.",
        "So it's not keeping its original column position.",
    ],
)
def test_a_so_that_verdict_is_no_decision(text: str) -> None:
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "It might be because the test is reusing the same signal.",
        "The issue might be that the paths are not comparable because one is relative.",
        "Quizás el fallo viene de la caché, porque solo pasa la segunda vez.",
    ],
)
def test_a_guess_at_a_cause_is_no_decision(text: str) -> None:
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "Why 9 spaces instead of 8?",
        "But what if someone uses `str(BASE_DIR)` instead?",
        "¿Y si usamos SQLite en lugar de Postgres, ya que es un solo nodo?",
    ],
)
def test_a_question_is_no_decision(text: str) -> None:
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "The `my_id` field has an extra space (it's indented 9 spaces instead of 8).",
        "The `deconstruct()` method returns the path string instead of the callable.",
        "Now it raises `AstroidIndexError` instead of `NameInferenceError`.",
    ],
)
def test_a_contrast_that_tells_what_the_code_does_is_no_decision(text: str) -> None:
    assert _weights(text) == {}


@pytest.mark.parametrize(
    "text",
    [
        "I'll add it after `_check_choices` since it's related.",
        "So we need to move the `b64decode` call inside the try block.",
        "So using little-endian is probably correct, since the writer ignores byte order.",
        "Since the worker can't see the status, I'll keep the retry in the client.",
        "It should return `None` instead of `True`.",
        "Rolling the firmware out to 10% of lockers first, because a bad image can't be undone.",
        "Helm em vez de manifestos soltos, dado que o mesmo chart corre em três regiões.",
        "Maybe we should edit `select_target` itself instead of adding whitespace.",
    ],
)
def test_a_choice_stays_a_decision_beside_the_explanation_rules(text: str) -> None:
    assert _weights(text).get(text, 0) >= 2


def test_a_choice_word_inside_the_reason_is_not_the_choice() -> None:
    """ "because we're using X" gives a reason for how things go; it names no choice."""
    text = "Tests pass here because we're using a fresh process each time."
    assert _weights(text) == {text: 3}


def test_a_choice_word_inside_a_name_in_code_is_no_choice() -> None:
    assert _weights("The loop stops early, so `_convert_all` sees a list.") == {}


def test_a_reason_that_opens_the_sentence_joins_the_choice_after_its_clause() -> None:
    text = "Since the report has to be stable, I'll use a sorted dict here."
    assert _weights(text) == {text: 4}


def test_given_after_is_names_a_value_not_a_reason() -> None:
    assert _weights("The error shows only when the VR is given as 'OL' here.") == {}


def test_a_sentence_that_opens_with_so_concludes_and_joins_nothing() -> None:
    assert _weights("Keeping the cache warm. So the first request is fast again.") == {}


@pytest.mark.parametrize(
    "text",
    [
        "It might be keeping its column position, since it's on a new line.",
        "The serializer doesn't add an import for `models` because it's a special case.",
    ],
)
def test_a_choice_verb_after_a_word_of_state_tells_what_the_code_does(text: str) -> None:
    assert _weights(text) == {}


def test_a_judgement_after_a_word_of_state_still_weighs_an_option() -> None:
    text = "Option 1 is better because it's more user-friendly."
    assert _weights(text) == {text: 4}


def test_a_reason_that_opens_the_sentence_explains_the_state_after_its_clause() -> None:
    text = "Since `models.Model` doesn't add the import, the import never gets added."
    assert _weights(text) == {}


def test_a_reason_word_that_names_the_choice_is_a_choice_with_its_reason() -> None:
    text = "Decided against caching the tariffs, since they change mid-month and it is risky."
    assert _weights(text) == {text: 4}


@pytest.mark.parametrize(
    "text",
    [
        "Because the `project` directory doesn't have an `__init__.py` file.",
        "Oh, that's because earlier we were using absolute paths, but now we're using relative ones.",
    ],
)
def test_a_reason_with_no_clause_of_its_own_to_explain_is_no_decision(text: str) -> None:
    assert _weights(text) == {}


def test_a_reason_in_parentheses_is_an_aside_that_explains() -> None:
    assert _weights("`get_source_file` succeeds here (because `file.py` is a file).") == {}


@pytest.mark.parametrize(
    ("text", "word", "inside"),
    [
        ('The error is "Unable to load file x".', "Unable", True),
        ("The log says `unable to connect` again.", "unable", True),
        ("报错是\u201c无法加载文件\u201d。", "无法", True),
        ("Il dit \u00abimpossible de lire\u00bb.", "impossible", True),
        ("```\nUnable to load file x\n```\nI am unable to reproduce it.", "Unable", True),
        ("```\nUnable to load file x\n```\nI am unable to reproduce it.", "unable", False),
        ('He said "ok". I am unable to go on.', "unable", False),
        ("我无法复现这个问题。", "无法", False),
    ],
)
def test_a_word_between_quote_marks_or_in_a_code_block_is_quoted(
    text: str, word: str, inside: bool
) -> None:
    assert quoted(text, text.index(word)) is inside


@pytest.mark.parametrize(
    "text",
    [
        "I am stuck on the failing migration, waiting for the DB admin.",
        "Estoy atascado con la migración, esperando al administrador.",
        "Não consigo rodar os testes sem o banco de dados.",
        "Estou aguardando o acesso ao servidor de produção.",
        "Je suis bloqué par la migration qui échoue toujours.",
        "Je ne peux pas lancer les tests sans la base.",
        "En attente de la clé d'API du client pour continuer.",
        "Ich warte auf die Freigabe vom Admin, vorher geht es nicht weiter.",
        "Non riesco a eseguire i test senza il database.",
        "Sono in attesa delle credenziali del cliente.",
        "Я жду доступа к серверу, без него не продолжить.",
        "Застрял на миграции, она всё ещё падает.",
        "我在等待数据库管理员开通权限。",
        "データベースの権限待ちで先に進めません。",
    ],
)
def test_a_blocker_is_read_in_every_language_the_cues_list(text: str) -> None:
    prose = read_prose([user("go"), assistant(text, [bash("c1", "ls")])])
    assert [b.text for b in prose.blockers] == [text]


def test_a_can_and_a_not_that_are_not_the_speakers_block_nothing() -> None:
    prose = read_prose(
        [user("go"), assistant("Das kann nicht stimmen, die Zahl ist zu hoch.", [bash("c1", "ls")])]
    )
    assert prose.blockers == ()


def test_a_blocker_word_in_a_quoted_message_is_not_the_speaker_blocked() -> None:
    prose = read_prose(
        [
            user("Fix it."),
            assistant('So the error is "Unable to load file src/__init__.py" every time.'),
            assistant("我无法复现这个问题\uff0c需要更多信息。"),
        ]
    )
    assert [b.text for b in prose.blockers] == ["我无法复现这个问题\uff0c需要更多信息。"]


def _start_by_every_mark(text: str, offset: int) -> int:
    """Where a sentence starts, asked of every mark that may end the one before it."""
    line_start = text.rfind("\n", 0, offset) + 1
    marks = (". ", "! ", "? ", ".\t", "\u3002", "\uff01", "\uff1f", "\uff1b")
    found = [at + len(m) for m in marks if (at := text.rfind(m, line_start, offset)) >= 0]
    return max([line_start, *found])


@given(st.text(alphabet="ab .!?\t\n\u3002\uff01\uff1f\uff1b", max_size=40), st.data())
def test_sentence_start_is_the_last_mark_before_the_offset(text: str, data: st.DataObject) -> None:
    offset = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert sentence_start(text, offset) == _start_by_every_mark(text, offset)
