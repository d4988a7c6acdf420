"""Entities (people, places, organisations, money, dates, emails) and topics, offline.

Names are found by their spelling, in any cased script: a run of capitalised words
("José Müller", "Zoë Ångström", "Łódź", "ÖBB", "Анна Каренина"), allowing small connectors
inside ("Bank of America", "Ludwig van Beethoven"). A word that only opens a sentence is a
name only when nothing says it is an ordinary word: the note's stopwords, its own lower-case
uses, or the local model's vocabulary writing it far more often lower-case ("Gestern",
"Mañana"). Where every noun is capitalised (German), grammar tells nouns from names: a
capitalised word after a determiner or a number, or with an abstract-noun suffix, is a noun. In scripts without capitals (Chinese,
Arabic, Hebrew, ...) a short word inside Latin text is taken as a name.

Linear by construction: the text is cut into tokens by one simple regex, and everything
else is a loop over tokens; the money, date and email patterns use bounded repetitions.
Input past MAX_CHARS is not read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from ... import textutil
from ...textutil import STOPWORDS, stem
from . import language

# How much likelier the local model's vocabulary writes a word lower-case, and whether
# that form is one whole piece (embeddings/vocabulary.py). apps.py hands it in, as it hands
# similarity its meaning: the model boundary does not import the vectors' layer. Without
# it (no local model), no opener is read as an ordinary word by the vocabulary.
_casing: Callable[[str], tuple[float, bool] | None] = lambda word: None
# How many pieces the vocabulary cuts a word into (None without the model).
_pieces: Callable[[str], int | None] = lambda word: None


def use_casing(source: Callable[[str], tuple[float, bool] | None], pieces: Callable[[str], int | None] | None = None) -> None:
    global _casing, _pieces
    _casing = source
    if pieces is not None:
        _pieces = pieces


def pieces_of(word: str) -> int | None:
    """How many pieces the local model's vocabulary cuts the word into: a word it holds
    only as four or more ("amlodipine") is one it barely knows."""
    return _pieces(word)


MAX_CHARS = 100_000
MAX_ENTITIES = 15

MONTH_NAMES = textutil.MONTH_NAMES
WEEKDAYS = textutil.WEEKDAYS
_MONTHS = "|".join(MONTH_NAMES)
_DAYS = "|".join(WEEKDAYS)

DATE_RE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}"
    rf"|\d{{1,2}}[./]\d{{1,2}}[./]\d{{4}}"
    rf"|(?:{_MONTHS})\.?[ \t]{{1,3}}\d{{1,2}}(?:st|nd|rd|th)?(?:,?[ \t]{{1,3}}\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?[ \t]{{1,3}}(?:{_MONTHS})(?:,?[ \t]{{1,3}}\d{{4}})?"
    rf"|(?:{_MONTHS})[ \t]{{1,3}}\d{{4}}"
    rf"|Q[1-4][ \t]{{1,3}}\d{{4}}|Q[1-4]"
    rf"|(?:{_DAYS}))\b"
)
_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f ]\d{3}){1,6}(?:[.,]\d{1,2})?|\d{1,15}(?:[.,]\d{1,3})?"
_SCALE = r"(?:[ \t]?(?:[kKmM]|bn|million|billion|thousand|Mio\.?|Mrd\.?)(?![\w]))?"
_CODES = (
    r"USD|EUR|GBP|CHF|PLN|JPY|CNY|SEK|NOK|DKK|CAD|AUD|INR|RUB|CZK|HUF|BRL|MXN|zł|Kč|dollars?|euros?|pounds?|francs?|yen|złoty"
)
# Money and percentages, whole: "$18k", "€1.2 million", "48,000 EUR", "1.500,00 €", "12%".
AMOUNT_RE = re.compile(
    rf"(?<![\w.,])(?:(?:US|A|C)?[$€£¥₹₽₩₪][ \t]?(?:{_NUMBER}){_SCALE}"
    rf"|(?:{_NUMBER}){_SCALE}[ \t]?(?:(?:{_CODES})(?!\w)|[$€£¥₹₽₩₪]|%|percent(?!\w)))"
)
EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,6}")

# One token: a letter or digit, then word characters and the punctuation names hold
# ("O'Brien", "Jean-Luc", "U.S.", "AT&T"). Greedy and unambiguous, so linear.
_TOKEN_RE = re.compile(r"[^\W_][\w'’&.\-]*")
_MAX_TOKEN = 60
JOINERS = {"of", "&", "y"}
CONNECTORS = {
    "of",
    "de",
    "del",
    "della",
    "la",
    "le",
    "van",
    "von",
    "der",
    "den",
    "du",
    "da",
    "di",
    "dos",
    "das",
    "y",
    "&",
    "al",
    "bin",
    "ibn",
    "zu",
    "ten",
    "ter",
}
# Abbreviations whose dot does not end a sentence.
ABBREVIATIONS = {
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "st",
    "mt",
    "jr",
    "sr",
    "vs",
    "inc",
    "ltd",
    "co",
    "corp",
    "gen",
    "col",
    "lt",
    "sgt",
    "capt",
    "rev",
    "hon",
    "no",
    "nr",
    "ca",
    "e.g",
    "i.e",
    "etc",
    "approx",
}
TITLES = {
    "Dr",
    "Mr",
    "Mrs",
    "Ms",
    "Prof",
    "Sir",
    "Dame",
    "Herr",
    "Frau",
    "Pan",
    "Pani",
    "Señor",
    "Señora",
    "Sr",
    "Sra",
    "Mme",
    "Mlle",
    "M",
}
SENTENCE_GAP = re.compile(r"[.!?:;\n•*#|>\"“”()\[\]]")

# The engine's own notes and file metadata: never a name or a theme.
ENGINE_WORDS = {
    "gemini",
    "gemini_api_key",
    "google_api_key",
    "openai",
    "api",
    "ocr",
    "tesseract",
    "tesseract-ocr",
    "debian",
    "ubuntu",
    "multimodal",
    "provider",
    "pdf",
    "png",
    "jpeg",
    "jpg",
    "gif",
    "webp",
    "bmp",
    "svg",
    "mp3",
    "mp4",
    "wav",
    "ogg",
    "flac",
    "m4a",
    "aac",
    "webm",
    "mov",
    "avi",
    "mkv",
    "docx",
    "doc",
    "csv",
    "json",
    "xml",
    "yaml",
    "yml",
    "html",
    "htm",
    "txt",
    "md",
    "hz",
    "khz",
    "kbps",
    "mbps",
    "kb",
    "mb",
    "gb",
    "exif",
    "gps",
    "utf-8",
    "python-docx",
    "pypdf",
    "ffprobe",
    "pcm",
    "h.264",
    "h.265",
    "vp8",
    "vp9",
    "av1",
    "opus",
    "vorbis",
    "rgb",
    "rgba",
    "dpi",
    "rapidocr",
    "onnx",
    "whisper",
    "word document",
    "web page",
    "stereo",
    "mono",
    "codec",
    "bitrate",
    "pixels",
    "matroska",
    "quicktime",
    "riff",
    "ebml",
}
CURRENCY_CODES = {c.lower() for c in _CODES.split("|")} | {"usd", "eur", "gbp", "dollar", "euro", "pound", "franc"}
# Capitalised only because they open a sentence or a line: ordinary words, not names.
COMMON_WORDS = set(
    """
about above across after afterwards again agenda ago ahead all almost also although always am among an and another any
anyway apparently april are as ask asked at attended august back bad be because been before being besides best better
big both bought brought budget but by call called can cannot caught check checked checking chose come coming could
daily dear decided decision decisions definitely did do does done draft during each early either else email emailed
especially even eventually ever every everyone everything except excited fact feel felt few final finally first followed
following for found friday from fun further gave get getting give glad go going good got great guess had happy has have
having he hello her here hey hi him his honestly hope hopefully how however i idea ideas if important in indeed instead
is it its just kind last later lately learned let like likely looking lunch made maybe me meanwhile meeting meetings met
might more moreover most mostly much must my need needs never new next nice no nobody none nor not note notes nothing now
of off often oh ok okay on once one only or other others otherwise our out over overall perhaps planning plans please
plus possibly probably quick quite rather read really recently remember reminder risk risks said saw see seems sent she
should since so some someone something sometimes soon sorry spoke started still such summary sure talked tell thank
thanks that the their them then there therefore these they this those though thus to today todo together told tomorrow
tonight too took totally two under unfortunately until up update updates us usually very visited was we well went were
what whatever when where whether which while who why will with within without wow would yeah yes yesterday yet you your
action actions item items next steps step status goal goals question questions answer issue issues problem problems
plan week weekend month year morning evening afternoon night meet talk lots love loved wish wonderful awesome cool amazing
add ask book buy call cancel change check choose contact create email find finish fix follow invite keep leave let look
move order pay pick ping print put read remind renew review run schedule send set share sign start stop take try turn use
visit wait watch write spent paid sent kept left lost won wrote ran bought sold made held
long short high low old young small large little full open close free hard easy real true false main whole own sure
team teams people person family friend friends work job home house office school class course book books money price
cost costs revenue sales profit budget cloud data time times day days life world group company project projects product
products customer customers user users client clients market service services system systems model models tool tools
process result results report reports research study studies work works change changes point part place case fact
number level area power water food health care music art game games story stories news information business education
privacy security retrieval observability sprint release releases launch feature features bug bugs test tests review
named called appreciate bye goodbye cheers congrats reviews design support growth performance quality strategy policy value values risk idea first second third last final
""".split()
)
# How chat replies open: "Yep, I went", "Haha, Melanie loved it", "Sounds fun!". Stretched
# forms ("Awww", "Hmmm", "Yesss") are matched with their repeated letters folded to one.
CHAT_OPENERS = set(
    """
yep yup nope nah ha haha hehe hihi lol lmao rofl omg ok oh ah aw hm ugh um uh er yay ops whoa woah gosh huh phew yikes
welp meh ew eh yes sounds looks
""".split()
)
REPEATED_LETTER_RE = re.compile(r"(.)\1+")
LAUGHTER_RE = re.compile(r"(?:[aeh]*h[aei])+h?")


def _chat_opener(low: str) -> bool:
    folded = REPEATED_LETTER_RE.sub(r"\1", low)
    return low in CHAT_OPENERS or folded in CHAT_OPENERS or bool(LAUGHTER_RE.fullmatch(folded))


# Ordinary nouns: at the start of a sentence they are words, not names (so they are in
# COMMON_WORDS), but they say what a text is about ("support group", "lost my job"), so
# they can be its topics.
SUBJECT_WORDS = set(
    """
family friend friends work job home house office school class course book books music art game games story stories
news food water health education money price cost costs budget revenue sales profit business company market team teams
group support project projects product products customer customers client clients user users service services system
systems model models tool tools data cloud research study studies process design growth performance quality strategy
policy privacy security retrieval observability sprint release releases launch feature features bug bugs test tests
review reviews meeting meetings lunch agenda email draft decision decisions plan plans goal goals risk risks report reports
""".split()
)
# Words of conversation, not of a subject: never a topic or a theme.
CHATTER = set(
    """
feel feeling felt glad happy love loved awesome totally definitely share sharing shared talk talking
hear heard hope hoping proud cool fun nice lovely amazing wonderful super glad sounds sound looks look
thanks thank appreciate care caring excited exciting hard tough wish wishes keep kept yeah yep wow
truly plenty starting started means meant mean gives giving give words word loving posted chill spot local
takes taking guts bye goodbye cheers stay staying positive inspiring inspired incredible rewarding stoked
image images photo photos photography picture pictures pic pics shares video videos check checking
""".split()
)
# Never a topic: the words of any text (COMMON_WORDS but the subjects among them) and chatter.
NOT_TOPICS = (COMMON_WORDS - SUBJECT_WORDS) | CHATTER


# "Thanks, Mel!", "Hey Maria", "That's lovely Sam!": the person spoken to. In a chat the
# name is said to them, not about them: a line that greets Caroline is not about her.
_VOCATIVE = re.compile(
    r"\b(?:hey|hi|hello|thanks|thank you|bye|congrats|congratulations|wow|yeah|yes|sure|oh|sorry|cool|great|awesome|nice|"
    r"good|glad|right|haha|hmm|yep|aw+|lovely|amazing|wonderful)[,!.]?[ \t]{1,3}([^\W\d_][\w'’\-]{0,30})\b"
    r"|,[ \t]{0,3}([^\W\d_][\w'’\-]{0,30})[ \t]{0,2}[!?.]",
    re.I,
)


def addressed(text: str) -> set[str]:
    """The capitalised names a text says to someone rather than about them."""
    return {n for m in _VOCATIVE.finditer(text[:20_000]) for n in m.groups() if n and n[:1].isupper()}


def extract_entities(text: str, limit: int = MAX_ENTITIES) -> list[str]:
    """Named things in the order they first appear, most specific form: when a text says
    "Priya Raman" and later "Priya", it is one entity."""
    text = (text or "")[:MAX_CHARS]
    found: dict[str, int] = {}
    taken: list[tuple[int, int]] = []
    for regex in (EMAIL_RE, AMOUNT_RE, DATE_RE):
        for match in regex.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            value = match.group(0).strip(" ,.")
            if value:
                found.setdefault(value, match.start())
                taken.append((match.start(), match.end()))
    taken.sort()
    lang = language.language_of(text)
    for position, name in _names(text, taken, language.stopwords_of(lang), lang):
        found.setdefault(name, position)
    ordered = sorted(found, key=found.get)
    return _merge_parts(ordered)[:limit]


def _names(text: str, taken: list[tuple[int, int]], stops: frozenset[str] = STOPWORDS, lang: str = "") -> list[tuple[int, str]]:
    tokens = []
    span_index = 0
    for match in _TOKEN_RE.finditer(text):
        start, end = match.span()
        while span_index < len(taken) and taken[span_index][1] <= start:
            span_index += 1
        inside = span_index < len(taken) and taken[span_index][0] < end
        tokens.append((start, end, match.group(0), inside))
    lowered = {raw.lower() for _, _, raw, _ in tokens if raw[:1].islower()}
    capitalised_mid: set[str] = set()
    cased_letters = uncased_letters = 0
    for _, _, raw, _ in tokens:
        if raw[0].isalpha():
            if raw[0].isupper() or raw[0].islower():
                cased_letters += 1
            else:
                uncased_letters += 1
    mostly_cased = cased_letters > 2 * uncased_letters

    # (start, words, opens a sentence, follows a determiner: "die neue Wohnung", "im Team")
    runs: list[tuple[int, list[str], bool, bool, int]] = []
    current: list[str] = []
    current_start, current_opens, current_determined, current_end = 0, False, False, 0
    pending_connectors: list[str] = []
    previous_end, previous_raw = 0, ""

    def close():
        nonlocal current, pending_connectors
        if current:
            runs.append((current_start, current, current_opens, current_determined, current_end))
        current, pending_connectors = [], []

    determiners = language.determiners_of(lang)
    flags = []  # (opens, breaks) of each token
    for index, (start, end, raw, inside) in enumerate(tokens):
        gap = text[previous_end:start]
        opens = previous_end == 0 or bool(SENTENCE_GAP.search(gap)) or _ends_sentence(previous_raw)
        breaks = opens or "," in gap or "\n" in gap or len(gap) > 3
        flags.append((opens, breaks))
        previous_end, previous_raw = end, raw
        word = raw.rstrip(".'’-&") if not _is_initials(raw) else raw
        if inside or not word or len(word) > _MAX_TOKEN:
            close()
            continue
        if breaks:
            close()
        if _is_name_word(word, mostly_cased):
            if not current:
                current_start, current_opens = start, opens
                current_determined = bool(determiners) and _determined(tokens, flags, index, determiners, lang)
            elif pending_connectors:
                current.extend(pending_connectors)
            pending_connectors = []
            current.append(word)
            current_end = start + len(word)
            if not opens:
                capitalised_mid.add(word)
        elif (
            current
            and word.lower() in CONNECTORS
            and len(pending_connectors) < 2
            # Where nouns are capitalised, an article between two of them is grammar
            # ("die Verspätung der Bahn"), a connector only after one ("von der Leyen").
            and (word.lower() not in determiners or pending_connectors)
        ):
            if word.lower() in JOINERS and len(current) > 1:
                # "Anna Kowalska of Bank of America" is two names; "Bank of America" is one.
                close()
                continue
            pending_connectors.append(word)
        else:
            close()
    close()

    out = []
    # A speaker's label ("Ann: ...") is a name whatever the model's text does with the word.
    labels = set(_LABEL.findall(text))
    headings = list_headings(text, stops)
    for start, words, opens, determined, end in runs:
        follows = _NEXT_WORD.match(text, end)
        verb_follows = bool(follows) and follows.group(1)[:1].islower()
        if opens and len(words) == 1 and words[0] in headings:
            continue
        words = _trim(words, opens, lowered, capitalised_mid, stops, lang, determined, labels - headings, verb_follows)
        if not words:
            continue
        name = " ".join(words)
        if name.lower() in ENGINE_WORDS or all(w.lower() in ENGINE_WORDS for w in words):
            continue
        out.append((start, name))
    return out


# "Spesa: pasta, pomodori, basilico", "Einkaufen: Milch, Brot, Käse": a line that opens
# with one word and a colon and goes on as a list. The word names the list's kind, not
# someone speaking ("Dana: I booked the hotel." is a sentence, not a list).
_HEADED_LINE = re.compile(r"^[ \t]{0,3}([^\W\d_][\w'’\-]{0,40}):[ \t]*([^\n]{1,2000})$", re.M)
LIST_ITEMS = 3
LIST_ITEM_WORDS = 3


def list_headings(text: str, stops: frozenset[str] = STOPWORDS) -> set[str]:
    """The words that head a list on their own line: at least three items cut by commas,
    each a few words, at least one of them not a stopword or a word of any sentence
    ("Thanks, Mel, see you" is said, not listed)."""
    out = set()
    for word, rest in _HEADED_LINE.findall(text[:20_000]):
        if re.search(r"[!?]", rest):
            continue
        items = [item.strip(" .;") for item in re.split(r",", rest)]
        if len(items) < LIST_ITEMS:
            continue
        if all(
            item
            and len(words := _WORD_RE.findall(item)) <= LIST_ITEM_WORDS
            and any(w.lower() not in stops and w.lower() not in COMMON_WORDS for w in words)
            for item in items
        ):
            out.add(word)
    return out


# The word right after a run, with nothing but spaces between.
_NEXT_WORD = re.compile(r"[ \t]+([^\W\d_])")
_LABEL = re.compile(r"^[ \t]{0,3}([^\W\d_][\w'’\-]{0,40}):", re.M)


def _trim(
    words: list[str],
    opens: bool,
    lowered: set[str],
    capitalised_mid: set[str],
    stops: frozenset[str] = STOPWORDS,
    lang: str = "",
    determined: bool = False,
    labels: set[str] = frozenset(),
    verb_follows: bool = False,
) -> list[str]:
    words = list(words)
    calendar = language.calendar_names(lang)
    if len(words) > 1 and lang not in ("", "en") and words[-1].lower() in calendar:
        # A date phrase: "Ende Juli", "Letzten Sonntag", "Anfang März".
        return []
    if (
        opens
        and verb_follows
        and len(words) > 1
        and language.capitalises_nouns(lang)
        and words[0].lower() not in stops  # "Mit Felix war ich": a preposition's object may be a name
        and written_lower_case(words[0])
    ):
        # German puts the finite verb second: after an opening adverb ("Gestern Abend habe
        # ich", "Nächste Woche fahre ich") the capitalised words before the verb are the
        # adverbial's own nouns, never the subject ("Gestern hat Anna", not "Gestern Anna hat").
        return []
    while words and words[0] in TITLES and len(words) > 1:
        words = words[1:]
    determiners = language.determiners_of(lang)
    # Ordinary words capitalised at the front: "Met José", "The Q1 meeting", "Decisions".
    while words and _ordinary(
        words[0], opens, lowered, capitalised_mid, stops, lang, alone=len(words) == 1 and words[0] not in labels
    ):
        determined = determined or words[0].lower() in determiners  # "Meine Schwester Katrin"
        words = words[1:]
        opens = False
    if determined and words and language.capitalises_nouns(lang):
        # Where every noun is capitalised, one after an article is a noun ("die Wohnung",
        # "im Team", "Meine Schwester Katrin"): dropped alone, or at the head of a run when
        # it has no adjective's ending, as the adjectives of names have ("der Deutschen Bahn").
        if len(words) == 1 or _noun_head(words[0], lang):
            words = words[1:]
    while words and words[0] in CONNECTORS:  # "(das Konzert) von Herbert Grönemeyer"
        words = words[1:]
    while words and words[-1] in CONNECTORS:
        words = words[:-1]
    if words and words[-1].endswith(("'s", "’s")):
        words[-1] = words[-1][:-2]
    words = [w for w in words if w.lower() not in ENGINE_WORDS] if len(words) > 1 else words
    if len(words) == 1:
        only = words[0]
        low = only.lower()
        if low in stops or low in COMMON_WORDS or only in MONTH_NAMES or only in WEEKDAYS or _chat_opener(low):
            return []
        if low in language.calendar_names(lang):  # "Dienstag", "Sabato", "Segunda-feira"
            return []
        if elision_of_stopwords(only, stops):  # "J'ai commencé"
            return []
        if only.isdigit() or len(only) < 2:
            return []
        if language.is_noun_by_suffix(only, lang):
            return []
    return words


def _noun_head(word: str, lang: str) -> bool:
    """The head of a capitalised run after an article is a noun ("meine Schwester Katrin"
    is also said "meine Tante Ingrid", "unser Hund Bello") unless it carries an adjective's
    ending, as the adjectives of names do ("der Deutschen Bahn", "das Schwarze Meer")."""
    return not language.inflected(word.lower(), lang)


# An opening word whose lower-case form is a whole word of the model's vocabulary and
# this much likelier (natural log-odds) than the capitalised form is an ordinary word
# ("Gestern" +9.2, "Mañana" +14.8, "Domani" +6.7, "Immer" +2.7); most names sit below
# ("Anna" -1.9, "Pierre" -0.9, "Sophie" -12). Short first names that are a word in some
# language sit between 0.6 and 1.5 ("Clara" +0.8, "Sam" +0.9, "Mia" +1.4), with adverbs
# ("Hier" +1.0, "Leider" +0.9): a name lost costs more than an adverb kept, so the bar is
# above them (it still takes "Will" +2.4 and "Faith" +7.8 for words).
WORD_LOWER_CASE_PREFERENCE = 1.5


def _determined(tokens: list, flags: list, index: int, determiners: frozenset[str], lang: str) -> bool:
    """Whether the token at `index` follows a determiner of its clause, at most two
    inflected lower-case words (adjectives) between ("die neue Wohnung"), or a number
    ("20 Minuten")."""
    skipped = 0
    j = index - 1
    while j >= 0 and not flags[j + 1][1]:
        raw = tokens[j][2]
        low = raw.lower()
        if low in determiners or (raw[:1].isdigit() and j == index - 1):
            return True
        if raw[:1].islower() and skipped < 2 and language.inflected(low, lang):
            skipped += 1
            j -= 1
            continue
        return False
    return False


def _ordinary(
    word: str,
    opens: bool,
    lowered: set[str],
    capitalised_mid: set[str],
    stops: frozenset[str] = STOPWORDS,
    lang: str = "",
    *,
    alone: bool = False,
) -> bool:
    low = word.lower()
    if not opens:
        # Mid-sentence, a capital is deliberate ("New York", "The Hague"), except "I".
        return low in STOPWORDS and (len(word) == 1 or "'" in word or "’" in word)
    if low in stops or low in COMMON_WORDS or word in MONTH_NAMES or word in WEEKDAYS or _chat_opener(low):
        return True
    if low in language.calendar_names(lang):
        return True
    if language.is_adverb(word, lang, opens=True) and word not in capitalised_mid:
        return True
    if word.isupper() or word in capitalised_mid:
        return False
    if verb_form(word, lang):
        return True
    # A sentence opener that the text also writes in lower case, or that looks like a
    # verb or adverb, is a word.
    if low in lowered:
        return True
    if alone and written_lower_case(word):
        return True
    return ends_as_a_word(word)


def ends_as_a_word(word: str) -> bool:
    """An English word by its ending: a verb's, an adverb's or an abstract noun's
    ("Cancelled", "Moving", "Finally", "Promotion"), not a name's."""
    low = word.lower()
    # Short "-ly" words are as often names (Emily, Molly, Lily) as adverbs.
    return word.isascii() and len(word) > 4 and low.endswith(SUFFIXES_OF_WORDS) and not (low.endswith("ly") and len(low) < 7)


def written_lower_case(word: str) -> bool:
    """An opening word that the model's text mostly writes lower-case: an adverb, a verb
    ("Gestern", "Mañana", "Preciso", "Domani"), not a name."""
    preference = _casing(word)
    return preference is not None and preference[1] and preference[0] >= WORD_LOWER_CASE_PREFERENCE


# How much likelier (natural log-odds) the vocabulary may write an opening word
# capitalised and still have it read as a verb: names it knows capitalised sit far below
# ("José" -7.4, "Granada" -6.0, "René" -4.0); verbs with a dropped subject sit near or
# above zero ("Jantei" -0.2, "Compré" +0.7, "Llamé" +2.7).
VERB_CAPITALISED_PREFERENCE = -1.0


def verb_form(word: str, lang: str) -> bool:
    """An opening word that grammar reads as an inflected verb of the note's language and
    whose lemma the vocabulary holds as a whole word ("Compré" of "comprar", "Marquei" of
    "marcar", "Gebeld" of "bellen"): a note with its subject dropped, not a name."""
    own = _casing(word)
    if own is None or own[0] < VERB_CAPITALISED_PREFERENCE:
        return False
    for lemma in language.verb_lemmas(word, lang):
        found = _casing(lemma)
        if found is not None and found[1]:
            return True
    return False


# English endings of verbs, adverbs and abstract nouns: at a sentence start, a word.
SUFFIXES_OF_WORDS = (
    "ed",
    "ing",
    "ly",
    "tion",
    "sion",
    "ment",
    "ness",
    "ity",
    "acy",
    "ance",
    "ence",
    "ism",
    "ous",
    "ive",
    "ful",
    "less",
    "able",
    "ible",
    "ize",
    "ise",
)


def _is_name_word(word: str, mostly_cased: bool) -> bool:
    first = word[0]
    if first.isupper():
        return True
    if first.isalpha() and not first.islower():
        # A script without capitals: a short word inside Latin-script text is likely a name.
        return mostly_cased and len(word) <= 8
    return False


def _is_initials(raw: str) -> bool:
    # "J.", "U.S.", "J.R.R."
    return (
        bool(raw)
        and raw.endswith(".")
        and all(part.isalpha() and len(part) == 1 and part.isupper() for part in raw[:-1].split("."))
    )


def _ends_sentence(raw: str) -> bool:
    if not raw.endswith("."):
        return False
    if _is_initials(raw):
        return False
    return raw.rstrip(".").lower() not in ABBREVIATIONS


def _merge_parts(names: list[str]) -> list[str]:
    """Drop a name that is a whole-word part of a longer one in the same text ("Priya"
    beside "Priya Raman")."""
    multi = [n for n in names if " " in n]
    out = []
    for name in names:
        if " " not in name and any(name in m.split() for m in multi):
            continue
        out.append(name)
    return out


_OPENER_RE = re.compile(r"(?:^|[.!?;:\n][ \t\n]{0,5})([^\W\d_][\w'’\-]{0,40})")
_URL_RE = re.compile(r"\b(?:https?://|www\.)\S{1,2000}")
_WORD_RE = re.compile(r"[^\W\d_][\w'’\-]*")


def elision_of_stopwords(word: str, stops: frozenset[str]) -> bool:
    """ "j'ai", "m'a", "l'on", "c'est": an elided pronoun or article with a stopword."""
    low = word.lower()
    return ("'" in low or "’" in low) and all(part in stops or len(part) < 3 for part in re.split(r"['’]", low))


def topics_of(text: str, entities: list[str], limit: int = 6) -> list[str]:
    """The most frequent content words, never a name already among the entities, chatter,
    a currency, a month, a file-type or engine word, or a number. Recall reads them too
    (the key-word match, and the words of the best matches searched for again), so a
    slot given to "sounds" or "giving" is one a subject ("job", "pottery") does not get."""
    text = EMAIL_RE.sub(" ", _URL_RE.sub(" ", (text or "")[:MAX_CHARS]))
    excluded = {w.lower() for e in entities for w in e.split()}
    lang = language.language_of(text)
    stops = language.stopwords_of(lang)
    # A note that opens with its verb ("Compré un coche", "Marquei consulta") is about the
    # car and the appointment: the verb says what happened, not what it is about.
    excluded |= {w.lower() for w in _OPENER_RE.findall(text[:20_000]) if w[:1].isupper() and verb_form(w, lang)}
    counts: Counter[str] = Counter()
    display: dict[str, str] = {}
    order: dict[str, int] = {}
    for i, match in enumerate(_WORD_RE.finditer(text)):
        raw = match.group(0).strip("-'’")
        word = raw.lower()
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if len(word) < 3 or len(word) > 40 or word in stops or word in NOT_TOPICS or word in ENGINE_WORDS:
            continue
        if word in CURRENCY_CODES or raw in MONTH_NAMES or raw in WEEKDAYS or word in excluded or language.is_adverb(word, lang):
            continue
        if elision_of_stopwords(word, stops):
            continue
        key = stem(word)
        counts[key] += 1
        display.setdefault(key, word)
        order.setdefault(key, i)
    ranked = sorted(counts, key=lambda k: (-counts[k], order[k]))
    return [display[k] for k in ranked[:limit]]
