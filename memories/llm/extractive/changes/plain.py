"""A new value stated plainly: the same subject and slot, another value of its type.

"Spotify raised the price again - £12.99" after "Spotify costs me £10.99 a month", "Mobile
team lead: Farid Haddad" after "Lena is the team lead for mobile", "dentist is dr okoro at
the harbour clinic" after "my dentist is dr patel": no word says it changed; the newer
note simply gives the slot another value. A fact is read as (subject, attribute, value):

- the value: the clause's names, numbers, codes and addresses (values.py), or, in a note
  written all in lower case, the words one clause has that the other note does not; each
  of a type (an amount, a time, a number, a code, a name);
- the attribute: the clause's other content words, without words of time or of change;
  two clauses are of one attribute when they share such a word, or when the attributes
  are close by meaning and the subjects are one;
- the subject: whose the fact is (subjects.py): the writer, someone the note names, or
  someone's ("my brother's store" is not the writer's store).

An update needs all three: the same subject, the same attribute, a value of the same type
that differs; and nothing that says the new value is held beside the old (an addition,
a narrower kind of the thing: "the guest wifi password"), only thought of or denied, a
visit, or of a time gone. The closed classes come from cues.py; the meaning from the
local embedding model; nothing here names a fact.
"""

from __future__ import annotations

import re

import numpy as np

from .... import textutil
from .. import entities, grammar, language, similarity
from .anchors import BEGINNING_ANCHORS, BEGINNING_MARGIN, ONE_OFF_ANCHORS, leans
from .cues import (
    ADDITION,
    BUT,
    CHANGE,
    HEDGED,
    IRREGULAR_PAST,
    NEGATED,
    NOT_A_THING,
    PAST_FRAME,
    RETURNING,
    past_event,
    replaces_another,
    said_as_past,
)
from .slots import SAME_THING, compounded, other_kind, other_thing, two_holders
from .statements import consonants_of, content_words, mentions, similar_word, tokens_of, units_of, words_of
from .subjects import CONTRACTED, FIRST_PERSON, first_person, other_owner, other_subject, someone_else
from .values import is_quantity, mask_values, names_in, parallel_openers, values_in

# Cosine of two clauses with their values masked (multilingual-e5-small) from which they
# may be one slot, when a word of the attribute or the subject is shared as well: below the
# bar a closeness alone needs (anchors.SAME_SLOT), since the shared word is the evidence.
PLAIN_SLOT = 0.85

_CURRENCY = re.compile(r"[$€£¥]\s?\d|\d\s?(?:usd|eur|gbp|dollars|euros|pounds|bucks)\b", re.I)
# An hour of the day and its minutes ("11.99" is no time: a price written without its currency).
_CLOCK = re.compile(r"^(?:[01]?\d|2[0-3])[:.][0-5]\d$|^\d{1,2}\s?(?:am|pm)$", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# Months, weekdays and seasons say when a value holds, not what it is of.
TIME_WORDS = frozenset(w.lower() for w in (*textutil.MONTH_NAMES, *textutil.WEEKDAYS)) | {
    "spring",
    "summer",
    "autumn",
    "fall",
    "winter",
    "season",
}
# A modifier stands between one of these and its noun ("the guest wifi password").
DETERMINERS = frozenset("the a an my our your his her their this that".split())
# "'s" after a name is "is" or "has" when a verb's participle or an adverb follows it
# ("Priya's moved"); a possessive when a noun does ("Patel's receptionist").
_POSSESSOR = re.compile(r"\b([\w-]+)['’]s\s+(\w+)")


def value_type(value: str, clause: str) -> str:
    """What a value is: an amount (with a currency), a time or date, a number, a code
    (letters with digits: a password, a plate) or a word (a name, a place, a thing)."""
    low = value.lower()
    at = clause.lower().find(low)
    around = clause[max(0, at - 2) : at + len(low) + 6] if at >= 0 else ""
    if any(c.isdigit() for c in low) and _CURRENCY.search(around):
        return "amount"
    if low in TIME_WORDS or low.rstrip("s") in TIME_WORDS or _CLOCK.match(low) or _YEAR.match(low):
        return "time"
    if any(c.isdigit() for c in low):
        if any(c.isalpha() for c in low.rstrip("stndrh")) and not re.fullmatch(r"\d+(?:st|nd|rd|th)", low):
            return "code"
        return "number"
    return "quantity" if is_quantity(low) else "word"


def attribute_words(clause: str, stops: frozenset[str], values: set[str]) -> list[str]:
    """The clause's words of its attribute: content words that are not values, not words
    of time ("month", "this week") and not words of change ("now", "changed")."""
    words = [re.sub(r"['’]s$", "", w) for w in content_words(clause, stops)]
    return [
        w
        for w in words
        if w not in values and textutil.stem(w) not in NOT_A_THING and not CHANGE.fullmatch(w) and w not in TIME_WORDS
    ]


def _lower_case(text: str) -> bool:
    """A note written with no capital inside its sentences: its names cannot be read by case."""
    return not any(t[:1].isupper() for s in (textutil.sentences(text) or [text]) for t in tokens_of(s)[1:])


def _values(clause: str, stops: frozenset[str], names: frozenset[str]) -> list[str]:
    # "Mum's care home": the name is "mum", whoever's thing follows.
    found = list(dict.fromkeys(re.sub(r"['’]s$", "", v) for v in values_in(clause, stops, names)))
    tokens = tokens_of(clause)
    first = re.sub(r"['’]s$", "", (tokens or [""])[0])
    # An opener an adversative conjunction follows is a predicate with its subject dropped
    # ("Slow but really lovely.", "Tiny but the light is great."): a comment, not a name.
    predicate = len(tokens) > 1 and bool(BUT.fullmatch(tokens[1]))
    if first[:1].isupper() and first.lower() not in found and not predicate and reads_as_name(first, stops):
        found.insert(0, first.lower())  # "Aisha coaches the under-12s", "Lena is the team lead"
    return found


def reads_as_name(word: str, stops: frozenset[str]) -> bool:
    """An opening capitalised word the local model's vocabulary does not write mostly in
    lower case ("Aisha", "Spotify"; not "Rent", "Standup", "Mum")."""
    return word.lower() not in stops and not CHANGE.fullmatch(word) and not entities.written_lower_case(word)


# What comes after these in a clause is its value; before, its attribute ("my favorite
# color | is | blue", "dentist | is | dr okoro at the harbour clinic").
_VALUE_OPENS = re.compile(r"\b(?:is|are|was|were|at|in|to|with|from|by)\b|:", re.I)


def lower_case_values(clause: str, other_text: str, stops: frozenset[str]) -> list[str]:
    """In notes with no values by case or digits ("dr okoro at the harbour clinic"): the
    words after the clause's copula or first preposition that the other note does not say."""
    other = words_of(other_text)
    opens = _VALUE_OPENS.search(clause)
    return [
        w
        for w in content_words(clause[opens.end() :] if opens else clause, stops)
        if not similar_word(w, other) and textutil.stem(w) not in NOT_A_THING and not CHANGE.fullmatch(w) and w not in TIME_WORDS
    ]


def _only_as_possessor(value: str, old_text: str, new_text: str) -> bool:
    """The newer note names the old value only as someone's, and what of theirs the older
    note does not name ("Dr Patel's receptionist" after "My dentist is Dr Patel"): it is
    about the value's own thing, not the slot the value filled ("Ella's school pickup"
    after "Pick up Ella from school" is the slot)."""
    if any(m.group(1).lower() == value for m in _POSSESSOR.finditer(old_text)):
        return False  # "Anna's birthday" in both: the subject, not a value
    said = list(re.finditer(rf"\b{re.escape(value)}\b", new_text, re.I))
    owned = [
        m
        for m in _POSSESSOR.finditer(new_text)
        if m.group(1).lower() == value and not _is_or_has(m.group(2)) and not _a_time_of(new_text[m.start(2) :])
    ]
    old_words = words_of(old_text)
    return bool(said) and len(owned) == len(said) and not any(similar_word(m.group(2).lower(), old_words) for m in owned)


def _a_time_of(phrase: str) -> bool:
    """The possessed phrase is a span of the possessor's time ("Lena's first week at
    Greenfield", "Tom's last day at Acme"): what happened to them, not a thing of theirs.
    A word of time before another noun only says which of their things ("Morag's evening
    carer", "Ella's Saturday job")."""
    words = textutil.words(phrase)[:3]
    for i, word in enumerate(words[:2]):
        after = words[i + 1] if i + 1 < len(words) else ""
        if _of_time(word) and (not after or after in textutil.STOPWORDS or _of_time(after)):
            return True
    return False


# Irregular past participles (a closed class) that "'s" ("has") comes before: "Kofi's gone".
PARTICIPLES = frozenset("gone been done seen taken given known shown begun broken chosen driven fallen forgotten gotten".split())


def _is_or_has(word: str) -> bool:
    """The word after "'s" makes it "is" or "has", not a possessive: a participle ("Kofi's
    gone", "Priya's moved") or a word of a closed class ("Tom's at Globex", "Ana's now
    ..."); a possessive is followed by its noun ("Harbor's app", "Anna's wedding")."""
    low = word.lower()
    return low in textutil.STOPWORDS or low in PARTICIPLES or low in IRREGULAR_PAST or (len(low) > 4 and low.endswith("ed"))


def _modifiers(tokens: list[str], head: int, stops: frozenset[str]) -> list[str]:
    """The words before a noun back to a determiner or the clause's start ("the guest
    network password": guest, network)."""
    out = []
    for k in range(head - 1, -1, -1):
        if tokens[k] in DETERMINERS or tokens[k] in stops:
            break
        out.append(tokens[k])
    return out


def narrower_kind(old_c: str, new_c: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """The newer clause names another kind of the older clause's thing: the noun its
    statement is about (before "is" or a label's colon) is the older clause's, with a word
    in front of it that the older note does not have or say in other words ("the guest
    network password" after "the Wi-Fi password"); "new" and words of change do not count."""
    old_tokens = [t.lower() for t in tokens_of(old_c)]
    for piece in re.split(r"[,;.!?]\s+|\s[-–—]\s", new_c):
        # A label before a colon ("Correction: Anna's birthday is ...") is not a modifier.
        body = piece.split(":", 1)[1] if re.match(r"^\W*\w+\s*:", piece) else piece
        if _narrower_in(old_tokens, piece.lower(), [t.lower() for t in tokens_of(body)], stops, names, old_c):
            return True
    return False


def _narrower_in(
    old_tokens: list[str],
    raw_new: str,
    new_tokens: list[str],
    stops: frozenset[str],
    names: frozenset[str],
    old_text: str = "",
) -> bool:
    for j, word in enumerate(new_tokens):
        if word in stops:
            continue
        # The older note's noun, or the word it shortens ("Office wifi pw is ..." after
        # "Wifi password for home: ...").
        said = word if word in old_tokens else next((t for t in old_tokens if consonants_of(word, t)), None)
        if said is None:
            continue
        # The noun of the statement: a copula or a label's colon follows it.
        if not re.search(rf"\b{re.escape(word)}\s*(?::|\b(?:is|are|was|were)\b)", raw_new):
            continue
        # And the older note's thing: its statement's noun too, or among its first words
        # ("the sample sacks were lovely" is no kind of "Flour order in w/ Hartley Mills -
        # 10 sacks strong white": the sacks are not what the older note is about).
        if old_text and not _topic_of(said, old_text):
            continue
        extra = [
            w
            for w in _modifiers(new_tokens, j, stops)
            if w not in old_tokens
            and w not in names
            and not is_quantity(w)
            and not CHANGE.fullmatch(w)
            and not _NEW.fullmatch(w)
            and not _CHANGED.fullmatch(w)
            # A word of time says when, not which kind ("From next week standup is at 9:45").
            and w not in TIME_WORDS
            and textutil.stem(w) not in NOT_A_THING
        ]
        if not extra:
            continue
        own = _modifiers(old_tokens, old_tokens.index(said), stops)
        if not own or not _close(extra, own):
            return True
    return False


def _topic_of(word: str, text: str) -> bool:
    """The word is a statement's noun in the text (a copula or a label's colon after it) or
    among the first four words of one of its sentences."""
    if re.search(rf"\b{re.escape(word)}\w*\s*(?::|\b(?:is|are|was|were)\b)", text, re.I):
        return True
    return any(word in [t.lower() for t in tokens_of(s)[:4]] for s in textutil.sentences(text) or [text])


# "New", "neuer", "nueva", "nouveau" (grammar.NEW, every language) and their kind: the
# same thing replaced, not another kind of it.
_NEW = re.compile("|".join([*grammar.NEW.values(), "old", "current", "latest"]), re.I)
# The verb "changed" in the languages the notes are written in: before the noun it is the
# statement's verb ("Ho cambiato numero: ..."), not a kind of the noun.
_CHANGED = re.compile(r"cambiat[oa]|cambiad[oa]|chang(?:é|ée)|gewechselt|mudad[oa]|trocad[oa]|changed|switched", re.I)


def _subject_differs(old_s: str, new_s: str, old_text: str, new_text: str, names: frozenset[str], lang: str) -> bool:
    if someone_else(new_s, old_text, lang) or someone_else(old_s, new_text, lang):
        return True
    if other_subject(old_s, new_s, names, old_text, new_text) or other_owner(old_s, new_s):
        return True
    # "my store" / "my brother's store": the writer's, and someone's the writer names.
    for a, b in ((old_s, new_s), (new_s, old_s)):
        owners = {m.group(1).lower() for m in _POSSESSOR.finditer(b)} - CONTRACTED
        if FIRST_PERSON.search(a) and any(o not in words_of(a) for o in owners):
            return True
    return False


def plain_state(old_text: str, new_text: str):
    """The values the new text gives the older one's slot plainly, as (old, new, closeness),
    or None."""
    old_units, new_units = units_of(old_text), units_of(new_text)
    stops = language.stopwords_for(f"{old_text} {new_text}")
    lang = language.language_of(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text) | parallel_openers(old_text, new_text)
    lower = _lower_case(old_text) or _lower_case(new_text)
    masked = [mask_values(c, stops, names) for c, _ in old_units] + [mask_values(c, stops, names) for c, _ in new_units]
    vectors = similarity.meaning_vectors(masked)
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    n_old = len(old_units)
    close = vectors[n_old:] @ vectors[:n_old].T
    order = np.dstack(np.unravel_index(np.argsort(-close, axis=None), close.shape))[0]
    for new_index, old_index in order[:6]:
        closeness = float(close[new_index, old_index])
        if closeness < PLAIN_SLOT:
            break
        (old_c, old_s), (new_c, new_s) = old_units[old_index], new_units[new_index]
        found = _plain_pair(old_c, old_s, new_c, new_s, old_text, new_text, stops, names, lang, lower)
        if found:
            return (*found, closeness)
    return None


def _plain_pair(old_c, old_s, new_c, new_s, old_text, new_text, stops, names, lang, lower):
    if two_holders(old_s, new_s, stops, names):
        return None  # "My sister Eva lives in Vienna" / "My sister Marta lives in Graz"
    if ADDITION.search(new_s) or HEDGED.search(new_s) or PAST_FRAME.search(new_s) or PAST_FRAME.search(old_s):
        return None
    if NEGATED.search(new_s) or said_as_past(old_c, new_c) or replaces_another(new_c, old_text):
        return None
    if RETURNING.search(new_s) and not CHANGE.search(new_s):
        return None  # a stay ("In Edinburgh for the Fringe ... Back home Sunday")
    if past_event(old_s, any_language=True):
        return None  # an event is not a state: "Went to Lisbon" is not undone by "Went to Porto"
    old_values, new_values = _values(old_c, stops, names), _values(new_c, stops, names)
    if lower and not old_values and not new_values:
        old_values, new_values = lower_case_values(old_c, new_text, stops), lower_case_values(new_c, old_text, stops)
    old_words, new_words = words_of(old_text), words_of(new_text)
    if any(_only_as_possessor(v, old_text, new_text) for v in old_values):
        return None
    shared_values = [v for v in old_values if mentions(v, new_words) and not is_quantity(v)]
    # A word of a name whose other word both notes say is part of that name, not a value of
    # its own: "Christmas Eve, wrapping till 1am" / "Christmas tree up already, Ellie
    # insisted" swaps no "Eve" for "Ellie".
    old_only = [v for v in old_values if not mentions(v, new_words) and not _named_with(v, shared_values, old_c, new_text)]
    new_only = [v for v in new_values if not mentions(v, old_words) and not _named_with(v, shared_values, new_c, old_text)]
    if not old_only or not new_only:
        return None
    # Where and when both replaced, with no word of change: another one of a kind that
    # comes many times ("Flight to Berlin on 9 October" / "Flight to Madrid on 2
    # November"), not the one moved.
    if not CHANGE.search(new_s) and _where_and_when(old_only, old_c) and _where_and_when(new_only, new_c):
        return None
    # ... the when said after a label's colon, in the rest of the sentence ("Callum Higher
    # Maths exam: 6 May, 9am" / "Callum's Higher Physics exam 14 May, 1pm").
    if (
        not CHANGE.search(new_s)
        and _where_and_when(old_only + _when_only(old_s, new_words, stops, names), old_s)
        and _where_and_when(new_only + _when_only(new_s, old_words, stops, names), new_s)
    ):
        return None
    # One type on both sides: the slot's value ("10.99" / "12.99"), not when it holds.
    types = {value_type(v, old_c) for v in old_only} & {value_type(v, new_c) for v in new_only}
    if not types:
        return None
    if types != {"time"}:
        types.discard("time")
    old_only = [v for v in old_only if value_type(v, old_c) in types]
    new_only = [v for v in new_only if value_type(v, new_c) in types]
    # A slot holds one value: a clause that replaces its subject (the name it opens with)
    # and another of its values at once, with no word of change, tells of another holder
    # of another thing ("Barnes coaches the under-10s" / "Ferreira coaches the under-12s").
    opener = (tokens_of(old_c) or [""])[0].lower()
    if len(old_only) >= 2 and opener in old_only and not CHANGE.search(new_s):
        return None
    # The attribute: a word of it in both clauses, or the subject (a name both say) and an
    # attribute close by meaning.
    old_attr = attribute_words(old_c, stops, set(old_values))
    new_attr = attribute_words(new_c, stops, set(new_values))
    shared_attr = [w for w in old_attr if similar_word(w, set(new_attr))]
    # A name both clauses say, not the value that changes: the subject ("Spotify", "Mum").
    subject_named = [v for v in shared_values if mentions(v, words_of(new_c)) and not _of_time(v)]
    same_subject = _first_person_both(old_s, new_s, lang) or bool(subject_named)
    if not shared_attr and not subject_named and not (same_subject and _close(old_attr, new_attr)):
        return None
    # Each attribute has a word the other lacks, none of them one thing said in other
    # words: two attributes ("favorite color" / "favorite food", "costs" / "fundraiser
    # raised", "Wi-Fi password" / "guest network password").
    # The newer note's verb in the past tense says what happened to the thing, not what
    # the value is of ("Season ticket renewed at £3,390" after "My season ticket costs
    # £3,200"); the older note's is how it states the slot ("is listed at").
    old_rest = [w for w in old_attr if not similar_word(w, set(new_attr))]
    new_rest = [w for w in new_attr if not similar_word(w, set(old_attr)) and not _past_form(w)]
    if old_rest and new_rest and not _close(old_rest, new_rest):
        return None
    # The subject replaced (the name the older clause opens with) and a word of what is
    # said of it as well, with no word of change: another person's own fact ("Dad takes
    # 20mg simvastatin" / "Grandad takes 20mg atorvastatin"), not a role handed over
    # ("Yusuf runs the demo" / "Marta runs the demo").
    new_opener = (tokens_of(new_c) or [""])[0].lower()
    if opener in old_only and new_opener in new_only and old_rest and not CHANGE.search(new_s):
        return None
    if types & {"amount", "number", "time"} and other_thing(old_c, new_c, old_text, new_text, stops):
        return None  # "The Falcon launch is March 15" / "The team offsite is March 20"
    if _subject_differs(old_s, new_s, old_text, new_text, names, lang):
        return None
    if other_kind(old_s, new_s, stops, names) or narrower_kind(old_c, new_c, stops, names):
        return None
    # A past event gives the slot a new value when it is a price ("raised the price again,
    # £12.99") or when it begins a state ("started at"), not when it is a visit or a
    # one-off ("flew to Lisbon for a conference", "ran 10k on Sunday").
    if past_event(new_s) and types != {"amount"}:
        if not leans(new_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, BEGINNING_MARGIN, stops, names):
            return None
    return tuple(old_only), tuple(new_only)


def _named_with(value: str, others: list[str], clause: str, other_text: str) -> bool:
    """Whether `value` is written in one run of capitalised words with one of `others`
    that the other note writes alone ("Christmas Eve" / "Christmas tree": "eve" is part of
    a name; "Dr Hahn" / "Dr Reyes" is a name changed within its title)."""
    runs = _capitalised_runs(clause)
    alone = {
        run[0]
        for sentence in textutil.sentences(other_text) or [other_text]
        for run in _capitalised_runs(sentence)
        if len(run) == 1
    }
    return any(value in run and any(o in run and o in alone for o in others if o != value) for run in runs if len(run) > 1)


def _capitalised_runs(text: str) -> list[list[str]]:
    """The runs of adjacent capitalised words, lower-cased."""
    runs, run = [], []
    for token in [*tokens_of(text), ""]:
        if token[:1].isupper():
            run.append(token.lower())
        else:
            if run:
                runs.append(run)
            run = []
    return runs


def _when_only(sentence: str, other_words: set[str], stops: frozenset[str], names: frozenset[str]) -> list[str]:
    """The sentence's times and numbers of the calendar the other note does not say."""
    return [
        v
        for v in _values(sentence, stops, names)
        if value_type(v, sentence) in ("time", "number") and not mentions(v, other_words)
    ]


def _where_and_when(values: list[str], clause: str) -> bool:
    """The values hold a name and a time or number of the calendar: where and when."""
    types = {value_type(v, clause) for v in values}
    return "word" in types and bool(types & {"time", "number"})


def _past_form(word: str) -> bool:
    return word in IRREGULAR_PAST or (word.endswith("ed") and len(word) > 4)


def _of_time(word: str) -> bool:
    """A word of time ("day" of "these days"): it says when, never whose or of what."""
    return word in TIME_WORDS or textutil.stem(word) in NOT_A_THING


def _first_person_both(old_s: str, new_s: str, lang: str = "") -> bool:
    """Both the writer's: a first-person word, or a verb of the first person where the
    language drops the pronoun ("Vivo en Sevilla" / "Me mudé a Valencia")."""
    # A note that opens with its verb is the writer's ("Moved to Geneva", "Started at X").
    return all(first_person(s, frozenset(), lang) for s in (old_s, new_s))


def _close(old_attr: list[str], new_attr: list[str]) -> bool:
    """A word of each attribute said in other words of one thing ("jefe" / "jefa", "costs" /
    "price"): the closest pair of words, by meaning."""
    if not old_attr or not new_attr:
        return False
    vectors = similarity.meaning_vectors([*old_attr, *new_attr])
    if vectors is None:
        return False
    vectors = np.asarray(vectors, dtype=np.float32)
    return float((vectors[: len(old_attr)] @ vectors[len(old_attr) :].T).max()) >= SAME_THING


def shares_subject_or_slot(
    old_c: str, new_c: str, old_s: str, new_s: str, named_old: list[str], stops: frozenset[str], lang: str = ""
) -> bool:
    """What a verdict by meaning needs besides closeness: the two statements share their
    subject (both the writer's, or a name both say, not as a word of time: "these days" is
    not "the Remains of the Day") or a word of their attribute."""
    if _first_person_both(old_s, new_s, lang):
        return True
    if any(not is_quantity(v) and not _of_time(v) for v in named_old):
        return True
    old_attr, new_attr = attribute_words(old_c, stops, set()), set(attribute_words(new_s, stops, set()))
    return any(similar_word(w, new_attr) for w in old_attr) or compounded(old_c, new_s) or compounded(new_s, old_c)


def other_thing_of_slot(old_text: str, new_text: str) -> bool:
    """The newer note is about another thing than the older note's slot, whatever a
    phrasing matched: a narrower kind of it ("the guest wifi password" after "the wifi
    password"), or the old value's own thing ("Dr Patel's receptionist" after "my dentist
    is Dr Patel")."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text)
    if narrower_kind(old_text, new_text, stops, names):
        return True
    old_values = [re.sub(r"['’]s$", "", v) for v in values_in(old_text, stops, names)]
    return any(_only_as_possessor(v, old_text, new_text) for v in old_values if not is_quantity(v))
