"""Held-out chats: a personal assistant over a messaging app, in Portuguese, French, German and
English, and what gets planted in them (constraints, facts, decisions).

A topic is one or more asks and answers with slots; a chat session strings topics together and
switches language now and then (``pt+fr``, ``de+en``).
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from bench.retention.chat_texts import fill_slots


@dataclass(frozen=True)
class Topic:
    asks: tuple[str, ...]
    answers: tuple[str, ...]


SLOTS: dict[str, dict[str, tuple[str, ...]]] = {
    "pt": {
        "prato": (
            "bacalhau à Brás",
            "arroz de pato",
            "caldo verde",
            "francesinha",
            "feijoada",
            "pastéis de nata",
        ),
        "cidade": ("Coimbra", "Évora", "Aveiro", "Guimarães", "Tavira", "Funchal", "Viseu"),
        "pessoa": (
            "o senhorio",
            "a professora do meu filho",
            "o meu chefe",
            "a seguradora",
            "o condomínio",
        ),
        "motivo": (
            "adiar a reunião",
            "pedir um orçamento",
            "reclamar de uma cobrança a dobrar",
            "avisar que chego atrasado",
        ),
        "planta": (
            "a monstera",
            "o manjericão",
            "a orquídea",
            "o limoeiro do vaso",
            "as suculentas",
        ),
        "materia": ("frações", "os verbos irregulares", "o ciclo da água", "as capitais da Europa"),
        "problema": (
            "a bateria dura pouco",
            "o wi-fi cai à noite",
            "o portátil aquece muito",
            "as notificações não chegam",
        ),
        "genero": ("policial", "ficção científica", "romance histórico", "documentário"),
        "documento": (
            "o cartão de cidadão",
            "a carta de condução",
            "o passaporte",
            "o NIF para um estrangeiro",
        ),
        "n": ("2", "3", "4", "5"),
    },
    "fr": {
        "plat": (
            "un gratin dauphinois",
            "une blanquette de veau",
            "une quiche aux poireaux",
            "un clafoutis",
            "une ratatouille",
        ),
        "ville": ("Annecy", "Colmar", "Nantes", "Arles", "Biarritz", "Lille", "Dijon"),
        "personne": (
            "mon propriétaire",
            "la maîtresse de ma fille",
            "ma responsable",
            "mon assurance",
            "le syndic",
        ),
        "motif": (
            "décaler un rendez-vous",
            "demander un devis",
            "contester un prélèvement en double",
            "prévenir d'un retard",
        ),
        "plante": ("mon ficus", "le basilic", "mon orchidée", "le citronnier en pot", "mes cactus"),
        "matiere": ("les fractions", "le passé composé", "le cycle de l'eau", "les départements"),
        "probleme": (
            "la batterie ne tient pas",
            "le wifi saute le soir",
            "l'ordinateur chauffe",
            "je ne reçois plus les notifications",
        ),
        "genre": ("polar", "science-fiction", "roman historique", "documentaire"),
        "document": (
            "la carte d'identité",
            "le permis de conduire",
            "le passeport",
            "une carte grise",
        ),
        "n": ("2", "3", "4", "5"),
    },
    "de": {
        "gericht": ("Käsespätzle", "Linsensuppe", "Kartoffelgratin", "Flammkuchen", "Apfelstrudel"),
        "stadt": ("Bamberg", "Lübeck", "Freiburg", "Regensburg", "Görlitz", "Salzburg", "Basel"),
        "person": (
            "meinem Vermieter",
            "der Lehrerin meines Sohnes",
            "meiner Chefin",
            "der Versicherung",
            "der Hausverwaltung",
        ),
        "anlass": (
            "einen Termin verschieben",
            "ein Angebot anfragen",
            "eine doppelte Abbuchung reklamieren",
            "mich verspätet melden",
        ),
        "pflanze": (
            "meine Monstera",
            "das Basilikum",
            "meine Orchidee",
            "der Zitronenbaum im Kübel",
            "die Sukkulenten",
        ),
        "fach": ("Bruchrechnen", "unregelmäßige Verben", "den Wasserkreislauf", "die Bundesländer"),
        "problem": (
            "der Akku hält nicht",
            "das WLAN bricht abends ab",
            "der Laptop wird heiß",
            "die Benachrichtigungen kommen nicht",
        ),
        "genre": ("Krimi", "Science-Fiction", "historischer Roman", "Doku"),
        "dokument": (
            "den Personalausweis",
            "den Führerschein",
            "den Reisepass",
            "eine Meldebescheinigung",
        ),
        "n": ("2", "3", "4", "5"),
    },
    "en": {
        "dish": ("a shakshuka", "mushroom risotto", "a lentil dal", "banana bread", "fish tacos"),
        "city": ("Edinburgh", "Bristol", "Galway", "York", "Bath", "Cork", "Liverpool"),
        "who": (
            "my landlord",
            "my son's teacher",
            "my manager",
            "the insurance company",
            "the building manager",
        ),
        "why": ("move a meeting", "ask for a quote", "dispute a double charge", "say I'll be late"),
        "plant": (
            "my monstera",
            "the basil",
            "my orchid",
            "the potted lemon tree",
            "the succulents",
        ),
        "subject": ("fractions", "irregular verbs", "the water cycle", "European capitals"),
        "issue": (
            "the battery drains fast",
            "the wifi drops at night",
            "the laptop runs hot",
            "notifications don't arrive",
        ),
        "genre": ("crime", "science fiction", "historical fiction", "documentary"),
        "doc": ("my ID card", "my driving licence", "my passport", "a residence certificate"),
        "n": ("2", "3", "4", "5"),
    },
}

TOPICS: dict[str, tuple[Topic, ...]] = {
    "pt": (
        Topic(
            ("Como faço {prato} para {n} pessoas?", "Dás-me uma receita simples de {prato}?"),
            (
                "Para {n} pessoas: prepara os ingredientes antes, cozinha em lume médio e prova o sal no fim. Se quiseres, passo-te as quantidades exatas.",
                "Versão rápida de {prato}: base de cebola e alho, o ingrediente principal, e deixa apurar uns 20 minutos.",
            ),
        ),
        Topic(
            (
                "Tenho um dia em {cidade}. O que não posso perder?",
                "Vou a {cidade} no sábado, sugestões?",
            ),
            (
                "Em {cidade}, começa pelo centro histórico de manhã, almoça fora das ruas mais turísticas e guarda o fim da tarde para um miradouro.",
                "Para um dia em {cidade}: centro a pé, um museu pequeno e jantar cedo, que ao sábado enche.",
            ),
        ),
        Topic(
            (
                "Ajuda-me a escrever uma mensagem para {pessoa} para {motivo}.",
                "Como escrevo a {pessoa} para {motivo} sem parecer mal-educado?",
            ),
            (
                "Proposta: «Bom dia, escrevo para {motivo}. Seria possível esta semana? Obrigado pela compreensão.» Curta e direta.",
                "Começa pelo pedido, explica numa frase e termina com uma alternativa concreta. Queres que ajuste o tom?",
            ),
        ),
        Topic(
            (
                "{planta} está com as folhas amarelas, o que faço?",
                "De quanto em quanto tempo rego {planta}?",
            ),
            (
                "Folhas amarelas costumam ser excesso de água. Deixa a terra secar entre regas e vê se o vaso drena bem.",
                "Rega quando os primeiros centímetros de terra estiverem secos; no inverno, bastante menos.",
            ),
        ),
        Topic(
            (
                "O meu filho não percebe {materia}. Como lhe explico?",
                "Tens um exercício fácil sobre {materia}?",
            ),
            (
                "Usa um exemplo do dia a dia e deixa-o explicar-te de volta. Dez minutos por dia funcionam melhor do que uma hora ao domingo.",
                "Experimenta com objetos em cima da mesa antes de passar para o caderno.",
            ),
        ),
        Topic(
            ("O meu telemóvel: {problema}. Alguma ideia?", "{problema}, já reiniciei e nada."),
            (
                "Vê primeiro se há atualização pendente, depois as definições de poupança de energia das apps que mais usas.",
                "Experimenta repor só as definições de rede; não apaga os teus dados.",
            ),
        ),
        Topic(
            (
                "Recomenda-me um filme {genero} para hoje.",
                "Procuro um livro {genero}, algo que prenda.",
            ),
            (
                "Se gostas de {genero}, procura algo recente com boas críticas e pouco mais de duas horas; queres que filtre por plataforma?",
                "Um {genero} com ritmo e capítulos curtos costuma prender logo. Digo-te três títulos se quiseres.",
            ),
        ),
        Topic(
            ("Como renovo {documento}?", "Que papéis preciso para tratar de {documento}?"),
            (
                "Normalmente marca-se online e leva-se o documento antigo e uma fotografia recente. Confirma no site oficial, os prazos mudam.",
                "Leva identificação, comprovativo de morada e o documento anterior, se o tiveres.",
            ),
        ),
        Topic(
            ("Obrigado!", "Perfeito, obrigada."),
            ("De nada! Diz se precisares de mais alguma coisa.", "Às ordens."),
        ),
    ),
    "fr": (
        Topic(
            (
                "Comment je fais {plat} pour {n} personnes ?",
                "Tu as une recette simple pour {plat} ?",
            ),
            (
                "Pour {n} personnes : prépare tout avant, cuisson à feu moyen, et goûte l'assaisonnement à la fin. Je peux te donner les quantités exactes.",
                "Version express de {plat} : une base d'oignon, l'ingrédient principal, et on laisse mijoter une vingtaine de minutes.",
            ),
        ),
        Topic(
            (
                "J'ai une journée à {ville}, qu'est-ce qu'il ne faut pas rater ?",
                "Je vais à {ville} samedi, des idées ?",
            ),
            (
                "À {ville}, vieille ville le matin, déjeuner hors des rues les plus touristiques, et garde la fin d'après-midi pour un point de vue.",
                "Pour une journée à {ville} : centre à pied, un petit musée et dîner tôt, le samedi c'est vite complet.",
            ),
        ),
        Topic(
            (
                "Aide-moi à écrire un message à {personne} pour {motif}.",
                "Comment j'écris à {personne} pour {motif} sans être sec ?",
            ),
            (
                "Proposition : « Bonjour, je vous écris pour {motif}. Serait-ce possible cette semaine ? Merci d'avance. » Court et clair.",
                "Commence par la demande, une phrase d'explication, puis une alternative concrète. Je peux ajuster le ton.",
            ),
        ),
        Topic(
            (
                "{plante} a les feuilles qui jaunissent, je fais quoi ?",
                "Je dois arroser {plante} tous les combien ?",
            ),
            (
                "Des feuilles jaunes, c'est souvent trop d'eau. Laisse sécher la terre entre deux arrosages et vérifie que le pot draine.",
                "Arrose quand les premiers centimètres de terre sont secs ; en hiver, beaucoup moins.",
            ),
        ),
        Topic(
            (
                "Ma fille ne comprend pas {matiere}, comment lui expliquer ?",
                "Tu as un exercice facile sur {matiere} ?",
            ),
            (
                "Pars d'un exemple du quotidien et demande-lui de te le réexpliquer. Dix minutes par jour valent mieux qu'une heure le dimanche.",
                "Essaie d'abord avec des objets sur la table, le cahier ensuite.",
            ),
        ),
        Topic(
            ("Mon téléphone : {probleme}. Une idée ?", "{probleme}, j'ai déjà redémarré."),
            (
                "Regarde d'abord s'il y a une mise à jour en attente, puis les réglages d'économie d'énergie des applis que tu utilises le plus.",
                "Tu peux réinitialiser uniquement les réglages réseau ; ça n'efface pas tes données.",
            ),
        ),
        Topic(
            (
                "Tu me conseilles un film {genre} pour ce soir ?",
                "Je cherche un livre {genre} qui accroche.",
            ),
            (
                "Pour un {genre}, vise quelque chose de récent et bien noté, un peu plus de deux heures. Je filtre par plateforme si tu veux.",
                "Un {genre} avec des chapitres courts accroche vite. Je te donne trois titres si tu veux.",
            ),
        ),
        Topic(
            ("Comment je renouvelle {document} ?", "Il faut quels papiers pour {document} ?"),
            (
                "En général, rendez-vous en ligne, avec l'ancien document et une photo récente. Vérifie sur le site officiel, les délais bougent.",
                "Pièce d'identité, justificatif de domicile et l'ancien document si tu l'as.",
            ),
        ),
        Topic(
            ("Merci !", "Parfait, merci."),
            ("Avec plaisir ! Dis-moi si tu as besoin d'autre chose.", "De rien."),
        ),
    ),
    "de": (
        Topic(
            (
                "Wie mache ich {gericht} für {n} Personen?",
                "Hast du ein einfaches Rezept für {gericht}?",
            ),
            (
                "Für {n} Personen: alles vorbereiten, bei mittlerer Hitze garen und erst am Ende abschmecken. Ich kann dir die genauen Mengen geben.",
                "Schnelle Variante von {gericht}: Zwiebelbasis, Hauptzutat, dann etwa zwanzig Minuten ziehen lassen.",
            ),
        ),
        Topic(
            (
                "Ich habe einen Tag in {stadt}. Was sollte ich nicht verpassen?",
                "Bin am Samstag in {stadt}, Tipps?",
            ),
            (
                "In {stadt} morgens die Altstadt, mittags abseits der Touristenstraßen essen und den späten Nachmittag für einen Aussichtspunkt lassen.",
                "Für einen Tag in {stadt}: Zentrum zu Fuß, ein kleines Museum und früh zu Abend essen, samstags wird es voll.",
            ),
        ),
        Topic(
            (
                "Hilf mir, {person} zu schreiben, ich will {anlass}.",
                "Wie schreibe ich {person}, um {anlass}, ohne unhöflich zu wirken?",
            ),
            (
                "Vorschlag: „Guten Tag, ich schreibe Ihnen, um {anlass}. Wäre das diese Woche möglich? Vielen Dank.“ Kurz und klar.",
                "Erst das Anliegen, dann ein Satz Begründung, zum Schluss eine konkrete Alternative. Soll ich den Ton anpassen?",
            ),
        ),
        Topic(
            ("{pflanze} bekommt gelbe Blätter, was tun?", "Wie oft gieße ich {pflanze}?"),
            (
                "Gelbe Blätter heißen oft zu viel Wasser. Lass die Erde zwischen dem Gießen antrocknen und prüf, ob der Topf abläuft.",
                "Gießen, wenn die obersten Zentimeter trocken sind; im Winter deutlich weniger.",
            ),
        ),
        Topic(
            (
                "Mein Sohn versteht {fach} nicht. Wie erkläre ich das?",
                "Hast du eine leichte Übung zu {fach}?",
            ),
            (
                "Nimm ein Beispiel aus dem Alltag und lass ihn es dir zurückerklären. Zehn Minuten täglich bringen mehr als eine Stunde am Sonntag.",
                "Erst mit Gegenständen auf dem Tisch, dann im Heft.",
            ),
        ),
        Topic(
            ("Mein Handy: {problem}. Eine Idee?", "{problem}, neu gestartet hab ich schon."),
            (
                "Schau zuerst nach einem ausstehenden Update, dann in die Energiespar-Einstellungen der Apps, die du am meisten nutzt.",
                "Setz nur die Netzwerkeinstellungen zurück; deine Daten bleiben erhalten.",
            ),
        ),
        Topic(
            (
                "Empfiehl mir einen {genre} für heute Abend.",
                "Ich suche ein Buch, {genre}, das fesselt.",
            ),
            (
                "Bei {genre} lohnt sich etwas Neueres mit guten Kritiken und gut zwei Stunden. Soll ich nach Streamingdienst filtern?",
                "Ein {genre} mit kurzen Kapiteln zieht schnell rein. Ich nenne dir drei Titel, wenn du magst.",
            ),
        ),
        Topic(
            ("Wie verlängere ich {dokument}?", "Welche Unterlagen brauche ich für {dokument}?"),
            (
                "Meist Termin online, altes Dokument und ein aktuelles biometrisches Foto mitbringen. Prüf die offizielle Seite, die Fristen ändern sich.",
                "Ausweis, Meldenachweis und das alte Dokument, falls vorhanden.",
            ),
        ),
        Topic(
            ("Danke!", "Super, danke dir."),
            ("Gern! Sag Bescheid, wenn du noch etwas brauchst.", "Immer gern."),
        ),
    ),
    "en": (
        Topic(
            ("How do I make {dish} for {n}?", "Got a simple recipe for {dish}?"),
            (
                "For {n}: prep everything first, cook over medium heat, and season at the end. I can give exact quantities if you want.",
                "Quick version of {dish}: an onion base, the main ingredient, then let it simmer about twenty minutes.",
            ),
        ),
        Topic(
            (
                "I've got one day in {city}. What shouldn't I miss?",
                "Going to {city} on Saturday, ideas?",
            ),
            (
                "In {city}, old town in the morning, lunch away from the busiest streets, and keep the late afternoon for a viewpoint.",
                "For a day in {city}: walk the centre, one small museum, and book dinner early, Saturdays fill up.",
            ),
        ),
        Topic(
            (
                "Help me write to {who} to {why}.",
                "How do I message {who} to {why} without sounding rude?",
            ),
            (
                "Draft: “Hi, I'm writing to {why}. Would this week work? Thanks for understanding.” Short and clear.",
                "Lead with the request, one sentence of reason, then a concrete alternative. Want a different tone?",
            ),
        ),
        Topic(
            ("{plant} has yellow leaves, what do I do?", "How often should I water {plant}?"),
            (
                "Yellow leaves usually mean too much water. Let the soil dry between waterings and check the pot drains.",
                "Water when the top few centimetres are dry; much less in winter.",
            ),
        ),
        Topic(
            (
                "My kid doesn't get {subject}. How do I explain it?",
                "Any easy exercise on {subject}?",
            ),
            (
                "Start from an everyday example and let them explain it back to you. Ten minutes a day beats an hour on Sunday.",
                "Try it with objects on the table first, then on paper.",
            ),
        ),
        Topic(
            ("My phone: {issue}. Any idea?", "{issue}, already restarted it."),
            (
                "Check for a pending update first, then the battery-saving settings of the apps you use most.",
                "You can reset only the network settings; it keeps your data.",
            ),
        ),
        Topic(
            (
                "Recommend me a {genre} film for tonight.",
                "Looking for a {genre} book that grabs you.",
            ),
            (
                "For {genre}, go for something recent and well reviewed, a bit over two hours. I can filter by streaming service.",
                "A {genre} with short chapters hooks quickly. I can name three if you like.",
            ),
        ),
        Topic(
            ("How do I renew {doc}?", "What paperwork do I need for {doc}?"),
            (
                "Usually an online appointment, your old document and a recent photo. Check the official site, processing times change.",
                "ID, proof of address and the old document if you have it.",
            ),
        ),
        Topic(
            ("Thanks!", "Perfect, thank you."),
            ("You're welcome! Shout if you need anything else.", "Anytime."),
        ),
    ),
}

FOLLOW_UPS: dict[str, tuple[tuple[str, str], ...]] = {
    "pt": (
        ("E se não tiver tempo?", "Então faz só a parte essencial e deixa o resto para outro dia."),
        ("Podes resumir?", "Em duas linhas: o mais importante primeiro, o resto é opcional."),
        ("Há alternativa mais barata?", "Há, com menos conforto; digo-te qual se quiseres."),
    ),
    "fr": (
        (
            "Et si je manque de temps ?",
            "Fais seulement l'essentiel et garde le reste pour un autre jour.",
        ),
        ("Tu peux résumer ?", "En deux lignes : l'essentiel d'abord, le reste est optionnel."),
        ("Il y a moins cher ?", "Oui, un peu moins confortable ; je te dis lequel si tu veux."),
    ),
    "de": (
        (
            "Und wenn ich wenig Zeit habe?",
            "Dann nur das Wesentliche, den Rest an einem anderen Tag.",
        ),
        (
            "Kannst du das zusammenfassen?",
            "In zwei Zeilen: das Wichtigste zuerst, der Rest ist optional.",
        ),
        (
            "Gibt es das günstiger?",
            "Ja, etwas weniger bequem; ich sag dir, welches, wenn du willst.",
        ),
    ),
    "en": (
        (
            "What if I'm short on time?",
            "Then do just the essential part and leave the rest for another day.",
        ),
        ("Can you sum that up?", "In two lines: the important bit first, the rest is optional."),
        ("Anything cheaper?", "Yes, a bit less comfortable; I'll tell you which if you want."),
    ),
}


def _fill(template: str, lang: str, rng: Random, values: dict[str, str]) -> str:
    return fill_slots(template, SLOTS[lang], rng, values)


def exchanges(lang: str, rng: Random) -> list[tuple[str, str]]:
    """One topic: its opening ask and answer, then up to two follow-ups."""
    topic = rng.choice(TOPICS[lang])
    values: dict[str, str] = {}
    ask = _fill(rng.choice(topic.asks), lang, rng, values)
    out = [(ask, _fill(rng.choice(topic.answers), lang, rng, values))]
    if len(ask) > 15:
        out.extend(rng.sample(FOLLOW_UPS[lang], rng.choice((0, 0, 1, 1, 2))))
    return out


# --- planted ---------------------------------------------------------------------------------------

CONSTRAINTS = {
    "pt": (
        "manda-me as coisas em forma de lista para eu ir riscando",
        "com os miúdos, só coisas grátis ou abaixo de 10 euros",
        "o meu marido trabalha de noite, por isso nada de planos antes das duas nos dias úteis",
        "se for preciso reservar, dá-me o número de telefone, não uso aplicações para isso",
        "a minha mãe anda de cadeira de rodas, só sítios sem degraus",
        "os domingos são para a família, não me marques recados ao domingo",
        "as receitas têm de dar na air fryer, o forno avariou",
        "as compras do mês não passam dos 400 euros",
        "medidas em gramas e mililitros, chávenas não me dizem nada",
    ),
    "fr": (
        "envoie-moi ça sous forme de liste à cocher",
        "avec les enfants, que des sorties gratuites ou à moins de 10 euros",
        "mon mari travaille de nuit, donc rien avant 14 h en semaine",
        "s'il faut réserver, donne-moi le numéro de téléphone, je ne passe pas par les applis",
        "ma mère est en fauteuil roulant, uniquement des lieux sans marches",
        "le dimanche c'est pour la famille, pas de courses ce jour-là",
        "les recettes doivent marcher au air fryer, le four est en panne",
        "les courses du mois restent sous 400 euros",
        "les mesures en grammes, je ne sais pas ce qu'est une cup",
    ),
    "de": (
        "schick mir das als Liste zum Abhaken",
        "mit den Kindern nur Sachen, die nichts oder unter 10 Euro kosten",
        "mein Mann arbeitet nachts, also unter der Woche nichts vor 14 Uhr",
        "wenn man reservieren muss, gib mir die Telefonnummer, Apps nutze ich dafür nicht",
        "meine Mutter sitzt im Rollstuhl, nur Orte ohne Stufen",
        "Sonntag gehört der Familie, da keine Erledigungen einplanen",
        "Rezepte müssen im Airfryer gehen, der Ofen ist kaputt",
        "der Wocheneinkauf bleibt unter 120 Euro",
    ),
    "en": (
        "send it as a checklist I can tick off",
        "with the kids, only things that are free or under 10 pounds",
        "my husband works nights, so no plans before 2pm on weekdays",
        "if it needs booking, give me the phone number, I don't book through apps",
        "my mum uses a wheelchair, step-free places only",
        "Sundays are family time, don't put errands on a Sunday",
        "recipes have to work in the air fryer, the oven is broken",
        "metric measurements, I never know what a cup is",
    ),
}

CONSTRAINT_FRAMES = {
    "pt": ("{clause}.", "Pequeno pormenor: {clause}.", "Ah, e para a próxima {clause}, ok?"),
    "fr": ("{clause}.", "Petite précision : {clause}.", "Et pour la suite, {clause}, ok ?"),
    "de": ("{clause}.", "Kleine Info noch: {clause}.", "Und ab jetzt bitte: {clause}."),
    "en": ("{clause}.", "Small thing: {clause}.", "From now on {clause}, ok?"),
}

ACKS = {
    "pt": ("Combinado!", "Registado.", "Está bem, tenho isso em conta."),
    "fr": ("C'est noté !", "Entendu.", "D'accord, j'en tiens compte."),
    "de": ("Notiert!", "Alles klar.", "Gut, behalte ich im Kopf."),
    "en": ("Okay, adjusting to that.", "Fine by me.", "Right, on it."),
}

_DOGS = ("Bolacha", "Pipoca", "Filou", "Caramel", "Bruno", "Lotte", "Biscuit", "Maple")
_LETTERS = "ABCDEFGH"


def chat_fact(lang: str, rng: Random) -> tuple[str, str, str]:
    """(message, needle, sort) for a fact stated in a chat."""
    day, hh = rng.randint(2, 28), rng.randint(11, 18)
    age = rng.randint(2, 14)
    dog = rng.choice(_DOGS)
    code = "".join(str(rng.randint(0, 9)) for _ in range(4))
    room = f"{rng.choice(_LETTERS)}{rng.randint(100, 399)}"
    long_id = "".join(str(rng.randint(0, 9)) for _ in range(10))
    options: tuple[tuple[str, str], ...]
    if lang == "pt":
        options = (
            (f"o código do portão é {code}#", "Se fores lá a casa, {f}."),
            (
                f"o casamento é no sábado, dia {day}, às {hh}:00, na Quinta da Aveleda",
                "Já agora, {f}.",
            ),
            (f"o meu NIF é {long_id[:9]}", "Para a fatura: {f}."),
            (f"o cão é um beagle de {age} anos chamado {dog}", "Para as ideias de passeio: {f}."),
            (
                f"a consulta da minha mãe é no Hospital de São João, gabinete {room}",
                "Para veres o caminho, {f}.",
            ),
        )
    elif lang == "fr":
        options = (
            (f"le code de la porte est {code}B", "Si tu passes, {f}."),
            (f"le mariage est le samedi {day} à {hh} h au domaine des Oliviers", "Au fait, {f}."),
            (f"mon numéro de contrat d'électricité est le {long_id}", "Pour le courrier : {f}."),
            (f"le chien est un beagle de {age} ans qui s'appelle {dog}", "Pour les balades : {f}."),
            (
                f"le rendez-vous de ma mère est à l'hôpital Édouard-Herriot, bureau {room}",
                "Pour l'itinéraire, {f}.",
            ),
        )
    elif lang == "de":
        options = (
            (
                f"meine Packstation ist die {rng.randint(100, 299)}, Postnummer {long_id[:8]}",
                "Für die Bestellung: {f}.",
            ),
            (
                f"die Hochzeit ist am Samstag, den {day}., um {hh} Uhr auf Gut Wulfsdorf",
                "Übrigens: {f}.",
            ),
            (f"der Hund ist ein {age} Jahre alter Beagle namens {dog}", "Für Ausflugsideen: {f}."),
            (
                f"der Termin meiner Mutter ist in der Charité, Raum {room}",
                "Für den Weg dorthin: {f}.",
            ),
            (f"der Türcode ist {code}", "Falls du vorbeikommst, {f}."),
        )
    else:
        options = (
            (f"the gate code is {code} then the key symbol", "If you come round, {f}."),
            (
                f"the wedding is on Saturday the {day}th at {hh}:00 at Hartwell House",
                "By the way, {f}.",
            ),
            (f"the dog is a {age}-year-old beagle called {dog}", "For walk ideas: {f}."),
            (f"my mum's appointment is at St Thomas', room {room}", "For directions, {f}."),
            (f"the council tax reference is {long_id}", "For the letter: {f}."),
        )
    i = rng.randrange(len(options))
    fact, frame = options[i]
    return frame.format(f=fact), fact, f"chat-fact/{lang}/{i}"


DECISION_ASKS = {
    "pt": (
        "O que farias no meu lugar?",
        "Qual escolho, então?",
        "Estou indecisa entre as duas, qual?",
    ),
    "fr": (
        "Tu ferais quoi à ma place ?",
        "Alors, je prends lequel ?",
        "J'hésite entre les deux, tu choisirais quoi ?",
    ),
    "de": (
        "Was würdest du an meiner Stelle machen?",
        "Welches nehme ich also?",
        "Ich schwanke zwischen beiden, was meinst du?",
    ),
    "en": ("Your call?", "So which one?", "Torn between the two, help me pick."),
}

DECISIONS = {
    "pt": (
        "Pintava primeiro o quarto dos miúdos e só depois o corredor: o quarto leva duas demãos e tem de secar antes de domingo à noite.",
        "Ficava com o contrato de 12 meses — o de 24 só poupa 3 euros por mês e queres mudar de telemóvel para o ano.",
        "Começa o fermento na sexta à noite, não no sábado de manhã, já que precisa de 14 horas e queres pão ao almoço de sábado.",
        "A melhor opção é pagar a fatura já e reclamar depois, dado que o prazo acaba sexta e a multa é maior do que a diferença.",
        "Deixava a festa para sábado à tarde em vez de domingo, porque segunda há escola e os miúdos ficam cansados.",
        "Marcava o dentista para de manhã: à tarde a clínica atrasa quase sempre.",
        "Comprava os pneus de inverno agora e não em novembro — depois da primeira vaga de frio esgotam e as marcações enchem.",
        "Devolvia o casaco na loja e não pelo correio, visto que na loja reembolsam logo e o envio custa 6 euros.",
    ),
    "fr": (
        "Je peindrais d'abord la chambre des enfants, puis le couloir : la chambre demande deux couches et doit sécher avant dimanche soir.",
        "Je garderais le forfait 12 mois — celui de 24 ne fait gagner que 3 euros par mois et tu veux changer de téléphone l'an prochain.",
        "Lance le levain vendredi soir plutôt que samedi matin, vu qu'il lui faut 14 heures et que tu veux du pain pour samedi midi.",
        "Le mieux est de payer la facture maintenant et de contester ensuite, puisque le délai tombe vendredi et que la pénalité dépasse l'écart.",
        "Je ferais l'anniversaire samedi après-midi plutôt que dimanche, il y a école lundi.",
        "Je prendrais le dentiste le matin : l'après-midi, le cabinet a presque toujours du retard.",
        "J'achèterais les pneus hiver maintenant et pas en novembre — après le premier coup de froid ils sont en rupture et les rendez-vous de montage sont pris.",
        "Je rapporterais la veste en magasin plutôt que par la poste, car le magasin rembourse tout de suite et l'envoi coûte 6 euros.",
    ),
    "de": (
        "Ich würde zuerst das Kinderzimmer streichen und dann den Flur: das Zimmer braucht zwei Anstriche und muss bis Sonntagabend trocken sein.",
        "Ich würde den 12-Monats-Vertrag nehmen — der über 24 Monate spart nur 3 Euro im Monat, und du willst nächstes Jahr ein neues Handy.",
        "Setz den Sauerteig am Freitagabend an statt am Samstagmorgen, da er 14 Stunden braucht und du Brot zum Samstagsmittag willst.",
        "Am besten zahlst du die Rechnung jetzt und widersprichst danach, da die Frist am Freitag endet und die Mahngebühr höher ist als die Differenz.",
        "Den Geburtstag würde ich auf Samstagnachmittag legen statt auf Sonntag, weil am Montag Schule ist.",
        "Den Zahnarzttermin würde ich vormittags machen: nachmittags hängt die Praxis fast immer hinterher.",
        "Die Winterreifen würde ich jetzt kaufen und nicht im November — nach dem ersten Kälteeinbruch sind sie weg und die Termine zum Aufziehen voll.",
        "Die Jacke würde ich im Laden zurückgeben statt per Post, denn dort gibt es das Geld sofort und der Versand kostet 6 Euro.",
    ),
    "en": (
        "I'd paint the kids' room first and the hallway after: the room needs two coats and has to be dry by Sunday night.",
        "Stick with the 12-month contract — the 24-month one only saves 3 pounds a month and you want a new phone next year.",
        "Start the sourdough on Friday evening rather than Saturday morning, since it needs 14 hours and you want bread for Saturday lunch.",
        "Best to pay the bill now and dispute it afterwards, given the deadline is Friday and the late fee is bigger than the difference.",
        "I'd hold the party on Saturday afternoon rather than Sunday, since there's school on Monday.",
        "Book the dentist for the morning: afternoons there almost always run late.",
        "Buy the winter tyres now, not in November — they sell out after the first cold snap and the fitting slots fill up.",
    ),
}
