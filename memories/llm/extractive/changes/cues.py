"""Grammar that says a fact changed, ended, was added to or was an event: closed classes.

Adverbs and particles ("now", "no longer", "instead"), negation with a word of time,
prepositions of replacing ("instead of"), the English past tense, and the same closed
classes of German, Spanish, French and Portuguese. These are grammar, not phrasings of
facts: a new fact needs no new line here.
"""

from __future__ import annotations

import os
import re

from .... import textutil
from .. import grammar, language
from ..entities import verb_form
from .statements import similar_word, tokens_of, words_of

# Grammar: words that say a fact changed, in the closed classes of English adverbs and
# particles ("now", "no longer", "instead", "anymore"), and the adjective "new".
CHANGE = re.compile(
    r"\b(?:now|no longer|not anymore|any ?more|any longer|instead|from now on|these days|currently|"
    # (with their other forms: "as replacement", "switching", "changing").
    r"switch(?:ed|ing)|chang(?:ed|ing)|moved|replac(?:ed|ing|ement)|(?:took|taken|takes|taking)\s+(?:it\s+)?over|handover|hand(?:ed|ing)\s+(?:it\s+)?over|reset"
    # The same closed class in German, Spanish, French and Portuguese.
    r"|jetzt|nun|nicht mehr|stattdessen|inzwischen|ahora|ya no|en lugar de|en vez de|maintenant|désormais"
    r"|ne\s+\w+\s+plus|au lieu de|agora|já não|não\s+\w+\s+mais|em vez de"
    # ... and in Italian ("adesso è ...", "non ... più", "invece").
    r"|adesso|ora|ormai|non\s+\w+\s+più|invece|anziché"
    # ... and in Dutch, Swedish and Polish ("voortaan", "istället", "od teraz").
    r"|nu|niet meer|voortaan|vanaf nu|in plaats van|inmiddels|inte längre|istället|i stället|från och med nu|numera"
    r"|teraz|już nie|zamiast|od teraz"
    # A change said to last: "for good", "permanently", "going forward" (not "for good
    # food"), and their kind in the other grammars ("für immer", "pour de bon", "na stałe").
    r"|for good(?=\s*(?:[,.;:!?)—–-]|$))|permanently|going forward|from here on|from then on"
    r"|für immer|dauerhaft|ab sofort|para siempre|de ahora en adelante|pour de bon|définitivement|per sempre"
    r"|d'ora in poi|de vez|daqui em diante|voorgoed|för gott|na stałe|na dobre)\b",
    re.I,
)
# An amount said to go up or down changed ("put the rent up", "went down to 40"): the
# adverbial particles of direction, a closed class.
UP_OR_DOWN = re.compile(r"\b(?:up|down)\b", re.I)
# A value said to hold from a later time ("58k from next month", "starting June", "as of
# 1 May", "ab Juni", "a partir de marzo"): the grammar of a change taking effect, not of
# a fact already held (a stay has its end too: BOUNDED).
EFFECTIVE = re.compile(
    r"\b(?:from|starting|as of|effective|beginning)\s+(?:next|this|today|tomorrow|the\s+\d|\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    # A weekday as people shorten it ("from Tues", "starting Weds").
    r"|(?:mon|tues?|wed(?:nes)?|weds|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\b)"
    r"|\bab\s+(?:nächste\w*|\d|januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember)"
    r"|\b(?:a partir d[eu]|à partir d[eu]|dal|dalla|da)\s+(?:\d|el\s+\d|le\s+\d|(?:pr[oó]xim|prochain|prossim)\w*|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
    r"janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|"
    r"gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|novembre|dicembre)"
    # Dutch "vanaf", Swedish "från och med" / "fr.o.m.", Polish "od" before a date or "next".
    r"|\b(?:vanaf|från och med|fr\.o\.m\.|od)\s+(?:\d|volgende|nästa|przyszł\w*|następn\w*|"
    r"januari|februari|maart|april|mei|juni|juli|augusti?|september|oktober|november|december|"
    r"mars|maj|stycz\w+|lut\w+|mar\w+|kwie\w+|maj\w*|czerw\w+|lip\w+|sierp\w+|wrze\w+|paźdz\w+|listopad\w*|grud\w+)",
    re.I,
)
# The first span of a state at a named place ("First day at Brightwater Analytics",
# "Lena's first week at Greenfield Academy", "Erster Arbeitstag an der Charité", "Premier
# jour chez Dassault"): the state began there. An ordinal, a noun of a span and a
# preposition of place, then a name: closed classes of each grammar.
_AT_A_NAME = (
    r"\s+(?:at|in|with|an|am|im|in der|bei|beim|chez|à|en|no|na|em|da|al|alla|presso|nel|nella)\s+"
    r"(?:(?:the|der|die|dem|la|le|el|o|a|il)\s+)?(?-i:[A-ZÀ-Ý])"
)
BEGAN_AT = re.compile(
    r"\b(?:first|erste[rns]?|premi(?:er|ère)|primer[oa]?|primeir[oa]|prim[oa])\s+"
    r"(?:(?:full|proper|official|real)\s+)?"
    r"(?:day|week|shift|month|morning|term|Arbeitstag|Tag|Woche|Schicht|jour|journée|semaine|día|semana|turno|dia|giorno|settimana)"
    # (whose span it is may follow: "Primer día de Lucas en ...", "Premier jour d'Inès chez ...")
    r"(?:\s+(?:of|von|de|di|do|da|d['’])\s*(?P<whose>(?-i:[A-ZÀ-Ý])[\w'’-]*))?"
    # (the role it began in may come first: "First day as operations manager at ...")
    r"(?:\s+(?:as|als|comme|como|come)\s+(?:an?\s+)?[^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*){0,2}?)?" + _AT_A_NAME,
    re.I,
)
# A name after a preposition of place ("at Halvorsen Logistics", "im Klinikum Süd").
AT_A_NAME = re.compile(_AT_A_NAME, re.I)
# A state said to hold since a point ("I report to Sunita since the reorg", "seit April",
# "desde la mudanza", "depuis janvier"): it began then, a change of the state before.
# The prepositions of a starting point are a closed class of each grammar; read only in a
# statement in the present (see `since_then`).
SINCE = re.compile(r"\b(?:since|seit|desde|depuis)\b", re.I)


def since_then(statement: str) -> bool:
    """A state in the present said to hold since a point ("..., since the move")."""
    return bool(SINCE.search(statement)) and not past_event(statement, any_language=True) and not PAST_FRAME.search(statement)


# "new" says a thing was replaced when the thing is the other note's ("new dentist" after
# "my dentist"), not when it is another thing ("a new course").
NEW_THING = re.compile(r"\bnew\s+(\w+)", re.I)
ADDITION = re.compile(
    # An ordinal or "one more" before a thing counts a second one of its kind ("a second
    # savings account", "one more cat"): the first is kept.
    # "too" before a word is a degree ("Dana was too slow"), not an addition ("tea too.").
    # "second-hand" is how a thing was bought, not a second one of it.
    r"\b(?!second-hand)(?:also|too(?!\s+[^\W\d_])|as well|another|in addition|additionally|besides|second|third|one more|an extra"
    r"|zweite[nmrs]?|weitere[nmrs]?|segund[oa]s?|deuxième|seconde?|second[oa]"
    # The same closed class in German, Spanish, French and Portuguese.
    r"|auch|ebenfalls|zusätzlich|también|además|aussi|également|en plus|também|além disso)\b",
    re.I,
)
# A frame of a time gone: what the sentence says held then, not now ("when I was a
# student", "years ago"). Adverbials of the past are a closed class of each grammar.
PAST_FRAME = re.compile(
    r"\b(?:used to|when i was|when we were|while i was|as a (?:kid|child|teen|teenager|student)|growing up|years ago"
    r"|back in|back then|in my (?:teens|twenties|childhood)|once upon"
    r"|quand j'étais|quand nous étions|il y a \w+ ans|autrefois|à l'époque"
    r"|cuando era|cuando éramos|cuando vivía|hace \w+ años|de niñ[oa]|de pequeñ[oa]|en aquella época"
    r"|als ich|als wir|vor \w+ jahren|früher|damals"
    r"|quando ero|quando eravamo|anni fa|da bambin[oa]|da piccol[oa]|una volta"
    r"|quando eu era|quando éramos|há \w+ anos|antigamente|naquela época)\b",
    re.I,
)
# A change only thought of, planned or supposed ("might get an iPhone", "thinking about
# moving", "if the Leaf dies"): modal verbs, verbs of intending and conditional
# conjunctions are closed classes of each grammar. A value said only so is not yet held.
HEDGED = re.compile(
    # "I'd" before a past participle is "I had" ("I'd been twice"), no conditional.
    r"\b(?:might|(?-i:may)|could|would|(?:i|we)'d(?!\s+(?:been|gone|had|done|seen|got|\w+ed)\b)|maybe|perhaps|probably|possibly|if|unless|whether"
    r"|think(?:ing)? (?:about|of)|consider(?:ing|ed)?|plan(?:ning)? to|hop(?:e|ing) to|want(?:ing)? to|tempted"
    # Considering told in the past, the verbs of each grammar ("considered", "se planteó",
    # "a envisagé", "überlegte", "pensou em", "ha valutato").
    r"|(?:me|te|se|nos) plante\w+|consider[óé]|envisag\w*|überlegt\w*|pensou em|considerou|cogitou|valutat[oi]|considerat[oi]"
    # An intention told in the past, which may not have come about ("was going to move",
    # "iba a mudarse", "allait déménager", "stava per", "wollte umziehen", "ia mudar").
    r"|(?:was|were) going to|iba(?:mos|n)? a|allai(?:s|t|ent)|stava(?:no)? per|wollte(?:n)?|ia(?:m)? (?=\w+(?:ar|er|ir)\b)"
    r"|quizás?|tal vez|a lo mejor|pensé en|pienso en|pensando en|podría|me gustaría"
    r"|peut-être|je pense à|pourrais|pourrait|j'aimerais"
    r"|vielleicht|überlege|falls|wenn|würde|könnte|möchte"
    r"|forse|penso di|sto pensando|potrei|vorrei|magari"
    r"|talvez|penso em|pensando em|poderia|gostaria)\b",
    re.I,
)
# A plain negation denies what its clause says ("we're not moving to Braga", "didn't take
# the job"); "no longer", "no more" and their kind say an old fact ended (ENDED) instead.
NEGATED = re.compile(
    # (Dutch: "niet", "geen", "nooit".)
    r"\b(?:not|never|won't|didn't|don't|doesn't|isn't|aren't|wasn't|can't|cannot|nicht|kein\w*|nie|ne|n'|non|não|nunca|jamais"
    r"|niet|geen|nooit)\b"
    r"|n't\b",
    re.I,
)
# "No" denies in English and Spanish; in Portuguese it is "in the" ("no Porto").
NO = re.compile(r"\bno\b", re.I)


def negated(sentence: str, lang: str = "", old_words: frozenset[str] = frozenset()) -> bool:
    """A plain negation in the sentence that denies what it says, not one of an ending ("no
    longer", "no more") nor one that names the older note's words ("May 3, not May 5": the
    old value is what is denied, a correction)."""
    if ENDED.search(sentence):
        return False
    found = [m for m in (*NEGATED.finditer(sentence), *(NO.finditer(sentence) if lang != "pt" else ())) if m]
    if not found:
        return False
    # Within the negation's own clause: "Não vamos nos mudar para Braga, decidimos ficar no
    # Porto" denies Braga, though its next clause names the older note's Porto.
    return not any(
        w.lower() in old_words or similar_word(w.lower(), old_words) and w.lower() in textutil.WEEKDAY_SHORT
        for m in found
        for w in tokens_of(re.split(r"[,;!?—]|[:.](?:\s|$)", sentence[m.end() :])[0])
        if len(w) > 2 or w[:1].isdigit()
    )


# A conjunction of contrast (or "still") opens a clause that holds against what came before ("..., but
# I'm keeping the Golf", "pero me quedo en Zaragoza").
CONTRAST = re.compile(r"\b(?:but|yet|still|aber|doch|pero|mais|mas|però|tuttavia)\b", re.I)
# Italian "ma" ("but") is French "ma" ("my"): read only in an Italian note.
CONTRAST_IT = re.compile(r"\bma\b", re.I)
# The adversative conjunctions alone (a closed class): what follows one answers what came
# before it ("Haben eine Wohnung in Bonn besichtigt, aber wir bleiben").
BUT = re.compile(r"\b(?:but|aber|doch|pero|mais|mas|però)\b", re.I)
# A value said to be the usual one ("the wide ones as always", "alla fine tutto come al
# solito"): the habit holds, nothing changed. The adverbials of habit of each grammar.
AS_USUAL = re.compile(
    r"\b(?:as (?:usual|always|ever|normal)|same as (?:always|ever|usual|before)|like always"
    r"|wie immer|wie gewohnt|como siempre|como de costumbre|comme d'habitude|comme toujours"
    r"|come al solito|come sempre|como sempre|como de costume|zoals gewoonlijk|zoals altijd"
    r"|som vanligt|som alltid|jak zwykle|jak zawsze)\b",
    re.I,
)
# "for now", "for the time being": how long, not a change ("keep the Jazz for now").
FOR_NOW = re.compile(r"\b(?:for now|for the time being|por ahora|de momento|pour l'instant|per ora|por enquanto|vorerst)\b", re.I)

# English past tense: a regular ending, or one of the irregular past forms (a closed class).
IRREGULAR_PAST = frozenset(
    "went saw had did got made took came gave met ran ate drank bought sold left found lost won wrote read "
    "spent paid told thought brought caught taught fought flew drove rode swam sang began kept slept felt heard "
    "held built sent sat stood understood broke chose froze spoke stole woke wore tore threw grew knew drew "
    "lent led fed meant bent dealt hung rang shook forgot hid dug fled swore sank wept blew fell sought stuck "
    "struck swept spun slid sprang swung bled dreamt learnt burnt spilt knelt leapt crept".split()
)
# Past forms spelt as the present: a past only where a note opens with its verb ("Quit
# smoking", "Cut out sugar"), never inside a sentence ("Get my hair cut at X" is a habit).
SAME_FORM_PAST = frozenset("quit cut put set let hit shut split spread".split())
PRESENT = re.compile(
    r"\b(?:is|are|am|i'm|we're|it's|'re|has|have|now|currently|these days|will|going to)\b"
    # "'s" is "is" after a pronoun or the sentence's subject ("Tom's at Oakwood now"); after
    # a name past the subject it is a possessive ("Watched the rugby at Callum's"), no present.
    r"|(?:^\W*[\w-]+|\b(?:he|she|it|that|there|here|what|who|where|this|everyone|everything))['’]s\b",
    re.I,
)


# Up to six words and a colon opening a sentence (not a clock time's colon).
_LABEL_COLON = re.compile(r"^\W*(?:[^\s:]+\s+){0,5}[^\s:]+\s*:(?!\d)")


def past_event(sentence: str, *, any_language: bool = False) -> bool:
    """A report of something done, in the past tense, with no present in it: the English
    past, or, with `any_language`, a note that opens with a past form of its language's
    verb, its subject dropped ("Jantei com a Rita no Porto": entities.verb_form). Asked of
    the older note: a dinner out is no home left. Not of the newer, whose past is often
    how a change is told ("Dejé el bar; ahora trabajo en una librería")."""
    if PRESENT.search(sentence):
        return False
    # A label's words name what the value after its colon is ("Preferred email for
    # bookings: ..."): a participle there is an adjective, no event.
    label = _LABEL_COLON.match(sentence)
    if label:
        sentence = sentence[label.end() :]
    words = tokens_of(sentence)
    # A capitalised word inside the sentence is a name ("Dr. Ahmed"), not a verb.
    tokens = [t.lower() for i, t in enumerate(words[:5]) if i == 0 or not t[:1].isupper()]
    if any(t in IRREGULAR_PAST or (t.endswith("ed") and len(t) > 4) for t in tokens):
        return True
    if not any_language:
        return False
    lang = language.language_of(sentence) if words else "en"
    # A change word ("ahora", "ya no", "adesso") says a state holds now, not an event.
    if lang == "en" or CHANGE.search(sentence):
        return False
    # The first person plural of the present and the past are one form in Spanish and
    # Portuguese ("vivimos", "moramos"): no past can be read from it.
    if re.search(r"(?:amos|emos|imos)$", words[0].lower()):
        return False
    # Too short to tell its language ("Vendí la moto."): any grammar that reads the opener so.
    # Not a word of the language's closed classes: "Estou a aprender alemão" opens with
    # "to be" in the present, whose ending looks like a past's.
    # A strong preterite follows no ending ("Fui al Prado", "Fiz um bolo"): grammar's closed class.
    if any(
        words[0].lower() in grammar.IRREGULAR_FIRST_PERSON_PAST.get(each, ())
        for each in ([lang] if lang else PAST_OPENER_LANGUAGES)
    ):
        return True
    return any(
        verb_form(words[0], each) and words[0].lower() not in language.stopwords_of(each)
        for each in ([lang] if lang else PAST_OPENER_LANGUAGES)
    )


# The languages whose notes open with a past form and no subject (entities.verb_form).
PAST_OPENER_LANGUAGES = ("es", "pt", "it", "fr", "de", "nl")


# Endings of a past that describes, not reports: the English "-ed", and the imperfect of
# French, Spanish, Italian and Portuguese and the German simple past (closed classes).
_PAST_ENDING = re.compile(
    r"(?:ed|ais|ait|aient|ions|aba|abas|ábamos|aban|ía|ías|íamos|ían|avo|avi|ava|avamo|avano|evo|eva|ivo|iva"
    r"|avas|ávamos|avam|ia|ias|iam|te|ten|test)$"
)


# The present of "be" before a participle makes a passive of now (a closed class).
_PRESENT_BE = re.compile(r"is|are|am|ist|sind|es|son|est|sont|è|sono|é|são|get|gets")
# A bound in time: what is said holds for a while, then the older state resumes ("Rosa is
# off next Tuesday", "on leave until May", "for two weeks"); closed classes of each grammar.
# A return said with its day ("back on Monday", "back home Sunday"): away for a while.
# ("Back on" a day, not "Keys handed back on Larch Close": there "back" is the verb's.)
_RETURNING = (
    rf"back (?:home )?(?:on (?=(?:the\s+)?\d|tomorrow|{textutil.WEEKDAY_PATTERN})|in|after|next|from|tomorrow"
    rf"|{textutil.WEEKDAY_PATTERN})"
)
RETURNING = re.compile(rf"\b{_RETURNING}\b", re.I)
_MONTHS_OF = {
    "en": "january|february|march|april|may|june|july|august|september|october|november|december",
    "es": "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre",
    "pt": "janeiro|fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro",
    "fr": "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre",
    "de": "januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember",
    "it": "gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|ottobre|novembre|dicembre",
}
# A whole span spent ("all of August", "todo agosto", "tout l'été", "den ganzen Sommer",
# "tutta l'estate"): a determiner of wholeness and a month or a season, closed classes.
_WHOLE_SPAN = (
    rf"(?:all|the whole|the entire) (?:of )?(?:the )?(?:summer|winter|spring|autumn|month|{_MONTHS_OF['en']})"
    rf"|tod[oa] (?:el |la |o |a )?(?:verano|invierno|verão|inverno|mes|mês|semana|{_MONTHS_OF['es']}|{_MONTHS_OF['pt']})"
    rf"|(?:tout|toute) (?:l['’]été|l['’]hiver|le mois|la semaine|{_MONTHS_OF['fr']})"
    rf"|(?:den|die|das) ganzen? (?:sommer|winter|monat|woche|{_MONTHS_OF['de']})"
    rf"|tutt[oa] (?:l['’]estate|l['’]inverno|il mese|la settimana|{_MONTHS_OF['it']})"
)
# "Until" bounds a stay ("at Mum's till Friday", "from Monday until Friday"), not a range
# of hours ("every Sunday 9 till 2", "open until 5pm", "8 bis 17 Uhr") nor the noun ("live
# on the till"): not after a number or a time, nor a determiner, nor before a time of day.
_AFTER_NO_RANGE = r"(?<!\d\s)(?<![ap]m\s)(?<!\bthe\s)(?<!\ba\s)(?<!\bmy\s)(?<!\bour\s)"
_UNTIL = (
    rf"{_AFTER_NO_RANGE}(?:until|till|til|bis|hasta|jusqu'(?:à|au)|fino a|até)"
    r"(?!\s+(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|uhr|h)\b|\d{1,2}[:.]\d{2}\b|late\b|midnight\b|noon\b|close\b))"
)
BOUNDED = re.compile(
    rf"\b(?:{_UNTIL}|{_WHOLE_SPAN}|for (?:a|one|two|three|four|a few|\d+) (?:days?|weeks?|fortnights?|months?|nights?)"
    # A span spent somewhere ("Spending the week in Edinburgh", "a fortnight at Mum's").
    r"|(?:the|a|one) (?:week|weekend|fortnight|night|summer|holidays) (?:in|at)"
    # Away on a journey ("on the work trip", "on holiday"): a closed class of its nouns.
    r"|on (?:(?:a|the|my|our) )?(?:\w+ )?(?:trip|holidays?|vacation)"
    r"|im urlaub|auf reisen|en vacances|en voyage|de vacaciones|de viaje|in vacanza|in ferie|in viaggio|de férias|em viagem"
    rf"|{_RETURNING}"
    r"|pour (?:un|une|deux|trois|quatre|\d+) (?:jours?|semaines?|mois)|por (?:un|una|dos|tres|uma|duas|\d+) (?:días?|dias?|semanas?)"
    r"|für (?:einen|eine|ein paar|zwei|drei|vier|\d+) (?:Tage?|Wochen?|Monate?|Nächte)"
    r"|per (?:un|una|due|tre|qualche|\d+) (?:giorni|settimane?|mesi|notti))\b",
    re.I,
)


def bound_to_a_span(text: str) -> bool:
    """A statement of the note is bound to a span ("on the work trip", "until Friday"),
    and no other statement says from when a state holds with no bound of its own: "6:30
    was a flop, 4 people before 7 all month. Going to a 7:15 opening from Tues" tells a
    span gone, then a change."""
    statements = textutil.sentences(text) or [text]
    return any(BOUNDED.search(s) for s in statements) and not starts_unbound(statements)


def starts_unbound(statements: list[str]) -> bool:
    """A statement says from when a state holds ("from Tues"), with no span bounding it."""
    return any(EFFECTIVE.search(s) and not BOUNDED.search(s) and not THIS_SPAN.search(s) for s in statements)


# A span and "only" ("Christmas week only", "just for this week", "nur diese Woche"): the
# writer says the change holds for that span and no longer, whatever words of change the
# note uses. A closed class of each grammar: the restrictive adverb and the span's nouns.
_SPAN_NOUN = r"(?:week|weekend|day|night|month|fortnight)"
ONE_SPAN_ONLY = re.compile(
    rf"\b(?:(?:just|only)\s+(?:for\s+)?(?:(?:this|that|the|one|next)\s+{_SPAN_NOUN}|today|tonight|tomorrow|once)"
    rf"|\w+\s+{_SPAN_NOUN}\s+only|(?:today|tonight|tomorrow|this time)\s+only|this once"
    r"|nur (?:diese|für diese|heute|morgen|einmal)|(?:seulement|uniquement) (?:cette|ce|pour cette|pour ce|aujourd'hui)"
    r"|solo (?:esta|este|por esta|por este|hoy|questa|questo|per questa|oggi)|alleen (?:deze|vandaag|morgen)"
    r"|só (?:esta|este|hoje)|(?:tylko|jedynie) (?:w tym|dziś|dzisiaj|jutro))\b",
    re.I,
)
# An end said of a day to come ("Rosa is off next Tuesday") is no end now.
TEMPORARY = re.compile(rf"{BOUNDED.pattern}|\bnext\b", re.I)
# The span of time the writer is in ("this week", "diese Woche", "por ahora"): a closed
# class of deictic adverbials of each grammar. A present state said of it is a stay, not
# the new value of a slot ("Working out of the Birmingham office this week").
THIS_SPAN = re.compile(
    r"\b(?:this (?:week|weekend|month|fortnight)|for now|for the time being|for the (?:week|month)"
    r"|(?:all|the whole) (?:week|weekend|month)"
    r"|diese(?:s|n)? (?:woche|wochenende|monat)|vorerst|vorübergehend"
    r"|cette semaine|ce week-end|ce mois-ci|pour l'instant|pour le moment"
    r"|esta semana|este fin de semana|este mes|por ahora|por el momento|por enquanto|por agora|este fim de semana|este mês"
    r"|questa settimana|questo (?:weekend|mese)|per ora|per il momento)\b",
    re.I,
)

# An amount with its currency, before or after it ("£29/month", "97 €"): a price.
PRICED = re.compile(r"[$€£¥]\s?\d|\d\s?(?:[$€£¥]|usd|eur|gbp|dollars|euros|pounds|bucks)(?!\w)", re.I)


def for_now(statement: str) -> bool:
    """A state in the present said of the span the writer is in ("Diese Woche bin ich auf
    Dienstreise in München"), with no change word: a stay for a while. An event of the
    span ("Started at Veloxa this week") is a change told when it happened."""
    return bool(THIS_SPAN.search(statement)) and not CHANGE.search(statement) and not past_event(statement, any_language=True)


def said_as_past(old_c: str, new_c: str) -> bool:
    """The newer statement says the older one's verb in a past tense ("J'habite à Nantes" /
    "j'habitais à Rennes", "I live in Paris" / "I lived in Rennes"): what held then, a
    history beside the current fact, not a change of it."""

    def bare(token: str) -> str:
        return re.split(r"['’]", token.lower())[-1]  # "j'habitais": "habitais"

    old_words = [w for w in map(bare, tokens_of(old_c)) if len(w) > 2]
    tokens = [bare(t) for t in tokens_of(new_c)]
    for i, word in enumerate(tokens):
        if i and _PRESENT_BE.fullmatch(tokens[i - 1]):
            continue  # "the U12s are coached by Marta": a passive, in the present
        m = _PAST_ENDING.search(word)
        root = word[: m.start()] if m else ""
        if len(root) < 3:
            continue
        for other in old_words:
            common = len(os.path.commonprefix([root, other]))
            # The whole root, or all of it but an "i" that was a "y" ("studied" / "study"):
            # "showed" is not a tense of "shop".
            whole = common == len(root) or (common == len(root) - 1 and root[-1] == "i" and other[common:][:1] == "y")
            if other != word and common >= 3 and whole:
                return True
    return False


# Grammar of an ending: negation with a word of time, a closed class of each language
# ("no more", "no longer", "ya no", "nicht mehr", "non più", "plus de", "não mais").
ENDED = re.compile(
    # ("got rid of": the one English idiom of disposal, whose verb is "get": read by
    # meaning, "Got rid of Spotify" leaned to keeping by a hair on one machine's floats.)
    r"\b(?:no more|no longer|not any ?more|never again|gone|(?:got|get|getting|gotten) rid of|ya no|nunca más|nicht mehr|kein\w* mehr|non più|"
    r"plus de|ne\s+\w+\s+plus|não mais|já não)\b",
    re.I,
)

# What a newer clause says it replaces, in the grammar of each language ("instead of",
# "en lugar de", "au lieu de", "statt", "em vez de"): a closed class of prepositions.
REPLACES = re.compile(
    r"\b(?:instead of|rather than|en lugar de|en vez de|au lieu de|plutôt que|statt|anstatt|anstelle von|em vez de|ao invés de)"
    r"\s+(?:the\s+|a\s+|my\s+|our\s+)?([^,.;!?]{1,40})",
    re.I,
)


def replaces_another(new_c: str, old_text: str) -> bool:
    m = REPLACES.search(new_c)
    if not m:
        return False
    old_words = words_of(old_text)
    return not any(similar_word(w, old_words) for w in words_of(m.group(1)) if len(w) > 2)


# Words of time and of change (closed classes): they say when or that, not of what.
NOT_A_THING = {
    textutil.stem(w)
    for w in (
        "day days week weeks month months year years next last every each this today tomorrow tonight morning evening "
        "weekend now switched changed moved moves replaced reset"
        # When a thing is, not what it is ("due Thursday"). ("booked" would stem to "book".)
        " due scheduled"
    ).split()
}
