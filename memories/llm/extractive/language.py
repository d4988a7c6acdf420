"""Which language a note is written in, and that language's stopwords.

Pronouns, articles and auxiliaries of every language a user may write in are never topics
or entities ("habe", "mit", "Ich", "mi", "avons", "minha"). Both come from well-kept
libraries rather than lists written here: py3langid (langid.py's model, shipped in the
package) names the language, stopwords-iso gives its stopwords. English keeps the
engine's own list (textutil.STOPWORDS), which the rest of the engine is tuned with.
"""

from __future__ import annotations

import functools
import threading

import stopwordsiso

from ... import textutil

# Fewer letters than this say too little to name a language ("Moro em Curitiba." does).
MIN_LETTERS = 12
# langid's normalised probability below which the language is left unnamed.
MIN_CONFIDENCE = 0.5
SAMPLE_CHARS = 2000

_lock = threading.Lock()


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    # Only languages with stopwords to give: naming another helps nothing here.
    identifier.set_languages(sorted(set(identifier.labels) & set(stopwordsiso.langs())))
    return identifier


def language_of(text: str) -> str:
    """The ISO 639-1 code of the text's language, or "" when it is too short or unclear."""
    return _classify((text or "")[:SAMPLE_CHARS])


# A note is named several times (its entities, its topics, its insight's phrases and bars).
@functools.lru_cache(maxsize=2048)
def _classify(sample: str) -> str:
    if sum(c.isalpha() for c in sample) < MIN_LETTERS:
        return ""
    with _lock:  # one identifier per process, built once
        identifier = _identifier()
    language, probability = identifier.classify(sample)
    return language if probability >= MIN_CONFIDENCE else ""


@functools.cache
def _stopwords(language: str) -> frozenset[str]:
    return frozenset(w.lower() for w in stopwordsiso.stopwords(language))


def library_stopwords(language: str) -> frozenset[str]:
    """stopwords-iso's list for the language alone (English too)."""
    return _stopwords(language) if language else frozenset()


def stopwords_for(text: str) -> frozenset[str]:
    """The engine's stopwords, and those of the text's language when it is not English."""
    return stopwords_of(language_of(text))


@functools.cache  # one union per language, not one per note
def stopwords_of(language: str) -> frozenset[str]:
    if language in ("", "en"):
        return textutil.STOPWORDS
    return textutil.STOPWORDS | _stopwords(language)


# The suffix that makes an adverb of an adjective (grammar, a closed class of one): a
# sentence opening with "Desafortunadamente", "Infelizmente", "Malheureusement" opens with
# a word, not a name. Longer than the suffix by this many letters ("Clément" is a name).
ADVERB_SUFFIXES = {"es": "mente", "pt": "mente", "it": "mente", "ro": "mente", "fr": "ement", "ca": "ment"}
ADVERB_STEM_LETTERS = 4
# Where nouns end the same way ("appartement", "événement"), only a sentence's opening
# word is read as an adverb by it (a noun opens a sentence with its article).
NOUNS_SHARE_THE_SUFFIX = {"fr", "ca"}


def is_adverb(word: str, language: str, *, opens: bool = False) -> bool:
    suffix = ADVERB_SUFFIXES.get(language)
    if not suffix or (language in NOUNS_SHARE_THE_SUFFIX and not opens):
        return False
    return word.lower().endswith(suffix) and len(word) >= len(suffix) + ADVERB_STEM_LETTERS


# Languages that capitalise every noun: there a capital mid-sentence says "noun or name",
# and the article in front of it tells them apart ("die Wohnung", "mit Anna").
# Luxembourgish is not named by the identifier.
CAPITALISED_NOUNS = {"de"}
# A closed class, as grammar gives it: determiner stems and their inflections, kept where
# stopwords-iso lists the form ("der", "einem", "meine", "keinen", "diese"), and the fused
# preposition + article forms ("im" = in dem, "zum" = zu dem).
_DETERMINER_PARADIGMS = {
    "de": (
        (
            "d",
            "ein",
            "kein",
            "mein",
            "dein",
            "sein",
            "ihr",
            "unser",
            "eur",
            "euer",
            "dies",
            "jen",
            "jed",
            "manch",
            "welch",
            "solch",
        ),
        ("e", "en", "em", "er", "es", "ie", "as"),
        ("ein", "kein", "mein", "dein", "sein", "unser", "euer"),
        ("im", "am", "zum", "zur", "beim", "vom", "ins", "ans", "aufs", "fürs", "übers", "ums"),
    ),
}
# The endings of an inflected adjective between an article and its noun ("die neue
# Wohnung", "einen großen Garten").
_ADJECTIVE_ENDINGS = {"de": ("e", "en", "em", "er", "es")}
# Grammar's suffixes of abstract nouns ("Versicherung", "Freiheit", "Möglichkeit",
# "Freundschaft", "Qualität", "Ergebnis"): a single capitalised word ending so is a noun.
_NOUN_SUFFIXES = {"de": ("ung", "heit", "keit", "schaft", "tät", "nis")}
NOUN_SUFFIX_STEM_LETTERS = 3


def capitalises_nouns(language: str) -> bool:
    return language in CAPITALISED_NOUNS


@functools.cache
def determiners_of(language: str) -> frozenset[str]:
    paradigm = _DETERMINER_PARADIGMS.get(language)
    if not paradigm:
        return frozenset()
    stems, endings, bare, fused = paradigm
    stops = _stopwords(language)
    forms = {stem + ending for stem in stems for ending in endings} | set(bare)
    return frozenset(f for f in forms if f in stops) | frozenset(fused)


def inflected(word: str, language: str) -> bool:
    """A lower-case word that may be an adjective agreeing with a noun after it."""
    endings = _ADJECTIVE_ENDINGS.get(language)
    return bool(endings) and word.endswith(endings) and word not in determiners_of(language) and len(word) > 3


def is_noun_by_suffix(word: str, language: str) -> bool:
    suffixes = _NOUN_SUFFIXES.get(language)
    if not suffixes or not word[:1].isupper() or word.isupper():
        return False
    low = word.lower()
    return any(low.endswith(s) and len(low) >= len(s) + NOUN_SUFFIX_STEM_LETTERS for s in suffixes)


@functools.cache
def calendar_names(language: str) -> frozenset[str]:
    """The weekday and month names of `language`, lower-cased ("dienstag", "sabato",
    "segunda-feira", "marzo"): a closed class that Django's own translation catalogs
    hold for every language it ships, in the standalone and the genitive forms."""
    if not language:
        return frozenset()
    try:
        from django.conf import settings
        from django.utils import dates, translation

        if not settings.configured:
            return frozenset()
        with translation.override(language):
            names = [*dates.WEEKDAYS.values(), *dates.MONTHS.values(), *dates.MONTHS_ALT.values()]
            return frozenset(str(name).lower() for name in names)
    except Exception:  # noqa: BLE001 - no catalogs, no names: the entity rules stand without them
        return frozenset()


# The endings of the verb forms a terse note opens with, where the subject is dropped
# ("Compré un coche", "Marquei consulta", "Andato dal dentista", "Réservé deux nuits",
# "Gebeld met Pieter"): grammar's inflections, a closed class per language (the past of
# the first person and the past participle; never the present's "-o", which most first
# names end with: "Marco", "Tiago"), with the forms a lemma of the same verb takes.
_VERB_ENDINGS = {
    "es": ("é", "í", "ó", "aste", "amos", "imos", "aron", "ieron", "ado", "ada", "ido", "ida"),
    "pt": ("ei", "i", "ou", "amos", "imos", "aram", "eram", "iram", "ado", "ada", "ido", "ida"),
    "it": ("ato", "ata", "ati", "ito", "ita", "iti", "uto", "uta", "uti", "ai", "ii"),
    "fr": ("é", "és", "i", "u", "us"),
}
# Where the past participle takes a prefix: ge-kauf-t, ge-bel-d, ver-huis-d, be-taal-d.
_PARTICIPLE_PREFIXES = {"de": ("ge",), "nl": ("ge", "be", "ver", "ont", "her")}
_PARTICIPLE_ENDINGS = {"de": ("t", "en"), "nl": ("d", "t", "en")}
# The infinitive (the lemma), and for Italian, whose infinitives the vocabulary splits,
# the present's first and third persons ("compro", "compra").
_LEMMA_ENDINGS = {
    "es": ("ar", "er", "ir"),
    "pt": ("ar", "er", "ir"),
    "it": ("are", "ere", "ire", "o", "a"),
    "fr": ("er", "ir", "re"),
    "de": ("en",),
    "nl": ("en",),
}
# Spelling that changes before an ending, as orthography requires ("marqué" of "marcar",
# "pagué" of "pagar", "empecé" of "empezar", "comecei" of "começar").
_SPELLING = {"es": (("qu", "c"), ("gu", "g"), ("c", "z")), "pt": (("qu", "c"), ("gu", "g"), ("c", "ç"))}
# Letters of the stem left once the ending is taken ("Rui" is no "-i" form, "Vendi" is).
VERB_STEM_LETTERS = 3
_VOWELS = set("aeiouy")


def verb_lemmas(word: str, language: str) -> set[str]:
    """The lemmas `word` would have if grammar read it as an inflected verb of `language`
    by its ending ("compré" -> "comprar", "gebeld" -> "bellen"); empty when no ending fits.
    Names share some endings ("José", "Donato"): the caller asks whether a lemma is a word."""
    low = word.lower()
    stems = [
        low[: -len(e)] for e in _VERB_ENDINGS.get(language, ()) if low.endswith(e) and len(low) - len(e) >= VERB_STEM_LETTERS
    ]
    for prefix in _PARTICIPLE_PREFIXES.get(language, ()):
        for ending in _PARTICIPLE_ENDINGS.get(language, ()):
            if low.startswith(prefix) and low.endswith(ending) and len(low) - len(prefix) - len(ending) >= VERB_STEM_LETTERS:
                stem = low[len(prefix) : -len(ending)]
                stems.append(stem)
                stems.append(stem + stem[-1])  # "bel" -> "bellen"
                if stem[-2] == stem[-3] and stem[-2] in _VOWELS:
                    stems.append(stem[:-3] + stem[-2:])  # "haal" -> "halen"
    for stem in list(stems):
        stems += [stem[: -len(a)] + b for a, b in _SPELLING.get(language, ()) if stem.endswith(a)]
    return {stem + ending for stem in stems for ending in _LEMMA_ENDINGS.get(language, ())}
