"""A number of one form changed for one thing, whoever's thing it is.

"PureCore email: membership going up to £38.50 from March" after "Joined PureCore gym,
£32/mo", "standup -> 10:00 from today" after "Team standup 9:15 daily", "Mum's new number
is 07700 900587" after "Mum's mobile: 07700 900312", "op pushed to 2 April" after "Dad's
knee op booked for 14 March". The other judges read the writer's facts by the shape of
their sentences; a price, a time, a date or a phone number is a slot by its form alone,
and its owner need not be the writer (Mum's number is as much a fact to keep current as
one's own). What makes it a change, all of it general evidence:

- a value of one form on each side (an amount, its currency before or after it; a clock
  time, "17h" too; a date, a day of a month counting as one; a weekday, short forms too;
  a code; a number of five digits or more, such as a phone's): the older one not said by
  the newer note, the newer one not said by the older note;
- one thing: the sentences holding the two values share a word besides the values,
  owners and words of time (read with typos and abbreviations, short ones too: "op",
  "IT"), or, said in other words, the two clauses holding the values are close in meaning;
- the newer note says it changed: the closed classes of change (cues.py: "now", "new",
  "instead", "from March", "up"/"down", an arrow), or the new value right after a
  preposition of result ("pushed to 2 April", "au samedi"); an English past form that
  means a change by meaning alone (anchors.change_verbs) only with the clauses nearly
  the same;
- nothing says the old value stands beside the new one or is kept ("also", "a second",
  "unchanged", "still"), that the new one is only thought of or denied, of a time gone,
  of another owner ("Dad's" / "Mum's"), of another kind ("the team meeting" / "the client
  meeting"), of two definite subjects ("The Falcon launch" / "The team offsite"), or of
  another holder named on each side ("Netflix costs ..." / "Spotify raised its price ...").
"""

from __future__ import annotations

import re

from .... import textutil
from .. import language
from .anchors import REFUSAL_ANCHORS, REFUSAL_MARGIN, SAME_SLOT_WITH_CUE, TAKING_ANCHORS, change_verbs, leans
from .cues import ADDITION, CHANGE, EFFECTIVE, HEDGED, NEW_THING, NOT_A_THING, PAST_FRAME, UP_OR_DOWN, negated, since_then
from .plain import TIME_WORDS, value_type
from .slots import modifier_of_another, other_kind, other_thing, two_holders
from .statements import (
    IS_OR_HAS_NEXT,
    LABEL,
    closest_pair,
    is_stopword,
    mentions,
    similar_word,
    tokens_of,
    units_of,
    without_possessive,
    words_of,
)
from .subjects import CONTRACTED, first_person, other_subject, someone_else, values_of_another
from .values import a_word, names_in, values_in

# Clauses said in other words of one thing (no word shared): how close in meaning they
# must be (multilingual-e5-small, as written). Measured on the update files: the clauses
# of a changed price or time of one thing sit at 0.87-0.92; of two things sharing no
# word, mostly below.
RENUMBER_SLOT = 0.87

# With a change told only by a verb that means one (no closed-class cue): the clauses must
# say nearly the same (recall/newer.py's SAME_FACT; "Daycare costs $1,400 a month" / "The
# daycare fundraiser raised $3,000" sit at 0.88).
RENUMBER_BY_VERB = 0.90

# A value said to stand as it was (a closed class of adverbs and adjectives of keeping).
KEPT = re.compile(
    r"\b(?:unchanged|still|same|as before|as usual|stays?|remains?|immer noch|noch immer|bleibt|todavía|sigue|"
    r"toujours|reste|ancora|rimane|ainda|continua)\b",
    re.I,
)
# A word of the calendar right after a word of keeping ("same fri", "still Tuesday"):
# what is kept is that day, not the number that changed beside it.
_KEPT_DAY = re.compile(r"\s+(?:on\s+)?(?:the\s+)?([^\W\d_]+)")


def _keeps(clause: str, new_values: dict[str, str]) -> bool:
    """A word of keeping in the clause says the value holds, unless it keeps a day named
    right after it ("tap moved it -> 13:15, same fri")."""
    for m in KEPT.finditer(clause):
        after = _KEPT_DAY.match(clause, m.end())
        if after and after.group(1).lower() in CALENDAR and after.group(1).lower() not in new_values:
            continue
        return True
    return False


# "it" / "them" as the object of the change, the new value after it ("moved it -> 13:15",
# "put it up to ..."). English only: other grammars' object pronouns are also articles.
_IT = re.compile(r"\b(?:it|them)\s*(?:->|→|=>|\bto\b|\bup\b|\bdown\b)", re.I)
# "->", "→", "=>": a note's shorthand for "changed to".
# Not between two words with no space ("LHR->LIS" is a route, "Lisbon→Porto" a train).
ARROW = re.compile(r"(?<![^\W\d_])(?:->|→|=>)|(?:->|→|=>)(?![^\W\d_])")

# Forms a slot holds one of at a time. A plain short number ("2-bed", "3 yrs", "12 day
# streak") counts things and is left to the other judges.
FORMS = ("amount", "clock", "date", "weekday", "code", "long number", "labelled", "measure")
MONTHS = frozenset(m.lower() for m in textutil.MONTH_NAMES)
# The weekdays and their short forms ("Thu 6 Feb"): a closed class.
WEEKDAYS = frozenset(d.lower() for d in textutil.WEEKDAYS) | frozenset("mon tue tues wed thu thur thurs fri sat sun".split())
# Words of the calendar are no one: "Dentist Thu 6 Feb" names no dentist called Thu.
CALENDAR = MONTHS | WEEKDAYS


def renumbered(old_text: str, new_text: str):
    """(old values, new values, closeness) when the newer note changes a number of the
    older one's, else None."""
    if " ".join(old_text.split()).lower() == " ".join(new_text.split()).lower() or old_text.rstrip().endswith("?"):
        return None
    if PAST_FRAME.search(new_text):
        return None
    lang = language.language_of(f"{old_text} {new_text}")
    stops = language.stopwords_for(f"{old_text} {new_text}")
    names = (names_in(old_text) | names_in(new_text)) - CALENDAR
    old_words, new_words = words_of(old_text), words_of(new_text)
    old_units, new_units = units_of(old_text), units_of(new_text)
    old_held = {c: _numbers(c, stops, names, keep=lambda v: not mentions(v, new_words)) for c, _ in old_units}
    new_held = {c: _numbers(c, stops, names, keep=lambda v: not mentions(v, old_words)) for c, _ in new_units}
    pairs = [(oc, nc) for oc, ov in old_held.items() for nc, nv in new_held.items() if set(ov.values()) & set(nv.values())]
    if not pairs:
        return None
    closest = closest_pair(pairs)
    if closest is None:
        return None
    closeness, old_c, new_c = closest
    # One thing: the sentences holding the two values, as written (a dash inside is no
    # end: "Cheese from Harveys - 5kg wheels, £9.40/kg."), share a word of it. A word
    # shared elsewhere in two long notes is of something else ("Uncle Hamish turns 84 on
    # 9 Feb. likes ... the crossword book" / "agm again ... the skip is booked for May").
    sentence_of = dict(old_units) | dict(new_units)
    one_thing = _one_thing(
        _written_sentence(old_text, old_c), _written_sentence(new_text, new_c), stops, set(old_held[old_c]) | set(new_held[new_c])
    )
    # A newer note that names its thing only by "it" ("landlord bumped it -> 920/mo") and
    # says it changed points back to an older note: its clause need only be as close as
    # a changed slot with a change word is.
    points_back = bool(_IT.search(new_c)) and _says_changed(new_text) and closeness >= SAME_SLOT_WITH_CUE
    if closeness < RENUMBER_SLOT and not one_thing and not points_back:
        return None
    # A value said to hold since a point ("Desde noviembre son 820 €") began then: a change.
    if not (_says_changed(new_text) or _result(new_c, new_held[new_c]) or since_then(new_c)):
        # A verb that means a change by meaning alone is weaker evidence than the closed
        # classes ("The daycare fundraiser raised $3,000": money raised, not a price): it
        # needs the clauses nearly the same as well as a word shared.
        if not (change_verbs(new_text) and one_thing and closeness >= RENUMBER_BY_VERB):
            return None
    old_s, new_s = sentence_of[old_c], sentence_of[new_c]
    # A second one beside the first ("also", "another", "a second"), said in the new value's
    # clause or elsewhere in a note that does not say that clause changed ("Another slip,
    # sorry all ... v3.0 now goes out Monday 22 April": another slip, the one date moved;
    # "Going to a 7:15 opening from Tues, gives us time to get the second bake out";
    # "... put the butter up to £7.80 a kilo. Also need to chase the council").
    if ADDITION.search(new_c) or (ADDITION.search(new_text) and not _says_changed(new_c)):
        return None
    if HEDGED.search(new_s) or negated(new_c, lang, frozenset(old_words)):
        return None  # "might go up to £40", "won't be 10:00 after all"
    # A refusal follows what it refuses, in the rest of the value's sentence ("Proposal to
    # shift design review to Monday mornings — rejected 5-2"): a change declined.
    sentence = next((t for t in textutil.sentences(new_text) if new_c in t), new_s)
    from_value = sentence[sentence.find(new_c) :]
    if not CHANGE.search(new_text) and leans(from_value, REFUSAL_ANCHORS, TAKING_ANCHORS, REFUSAL_MARGIN, stops, names):
        return None
    # Kept as it was, said in the new value's clause or in one naming the older value
    # ("rent unchanged at £950"); "still" of something else does not keep it ("bp still
    # high at checkup, lisinopril is 20mg as of today").
    if any(
        _keeps(c, new_held[new_c]) for c, _ in new_units if c == new_c or any(mentions(v, words_of(c)) for v in old_held[old_c])
    ):
        return None
    if (
        someone_else(new_s, old_text, lang)
        or (_PERSON_OPENS.match(new_c) and first_person(old_s, names, lang))
        or _owners_differ(old_s, new_s)
        or other_subject(old_s, new_s, names, old_text, new_text)
        or (first_person(old_s, names, lang) and values_of_another(new_s, list(new_held[new_c]), lang))
    ):
        return None  # "Mum's number" / "Dad's number"; "Helped Sam move into her new flat, 9 Elm Road"
    # The thing a number is of is named up to the value's own phrase: a fragment after it
    # gives another attribute ("U12 training Wednesdays 6.30-7.45, back pitch." /
    # "U12 sessions: Thursday, 6pm, main pitch.": the pitch changed too, the thing did not).
    old_of, new_of = _through_values(old_s, old_held[old_c]), _through_values(new_s, new_held[new_c])
    if other_kind(old_of, new_of, stops, names) or modifier_of_another(old_s, new_s, stops, names):
        return None  # "the team meeting" / "the client meeting"; "the car" / "the car insurance"
    if other_thing(old_c, new_c, old_text, new_text, stops, borrowed_only=True):
        return None  # "Cinnamon buns at £2.80, 4 for £10" / "Cardamom knots ..., pricing them at £3.10"
    if _two_definite_subjects(old_c, new_c, stops):
        return None  # "The Falcon launch" / "The team offsite"
    if two_holders(old_s, new_s, stops, names) or _named_apart(old_c, new_c, old_words, new_words, stops, names):
        return None  # "Meeting with Sarah on Monday" / "Meeting with Tom moved to Tuesday"
    forms = set(old_held[old_c].values()) & set(new_held[new_c].values())
    old_values = [v for v, f in old_held[old_c].items() if f in forms]
    new_values = [v for v, f in new_held[new_c].items() if f in forms]
    return old_values, new_values, closeness


def _named_apart(old_c: str, new_c: str, old_words: set[str], new_words: set[str], stops, names) -> bool:
    """Each clause names someone or something the other note never does: the number is of
    another holder ("Netflix costs $15.49" / "Spotify raised its price to $11.99")."""

    def named_only(clause: str, other_words: set[str]) -> list[str]:
        return [v for v in values_in(clause, stops, names) if _form(v, clause) == "word" and not mentions(v, other_words)]

    if named_only(old_c, new_words) and named_only(new_c, old_words):
        return True
    # A sentence's first word is not read as a name (any word is capitalised there): two
    # clauses that each open with a capitalised word the other note never has open with
    # two subjects ("Netflix costs ..." / "Spotify raised its price ..."); a stopword
    # opening a clause is no subject ("Desde noviembre son 820 €").
    openers = [(tokens_of(c) or [""])[0] for c in (old_c, new_c)]
    old_bare, new_bare = ({without_possessive(w) for w in words} for words in (old_words, new_words))
    # Nor is a label ("Planning: v3.0 GA targeted for 15 March") or a word, not a name, such
    # as a verb's "-ing" form ("Aiming for 4 April instead"): what the note does, not whose
    # the number is.
    if LABEL.match(old_c) or LABEL.match(new_c) or any(a_word(o) for o in openers):
        return False
    return (
        all(o[:1].isupper() and not is_stopword(o.lower(), stops) for o in openers)
        and not similar_word(without_possessive(openers[0].lower()), new_bare)
        and not similar_word(without_possessive(openers[1].lower()), old_bare)
    )


# A definite article opening a statement: its subject is a thing both writer and reader
# know ("The Falcon launch is ..."). A closed class of each grammar.
_DEFINITE = frozenset("the der die das le la les el los las il lo gli o os as".split())


def _through_values(sentence: str, values: dict[str, str]) -> str:
    """The sentence up to the end of the phrase holding its last value: cut at the first
    comma, semicolon or dash after it."""
    low = sentence.lower()
    ends = [at + len(v) for v in values if (at := low.rfind(v.lower())) >= 0]
    if not ends:
        return sentence
    cut = re.search(r"[,;]|\s[-—–]\s", sentence[max(ends) :])
    return sentence[: max(ends) + cut.start()] if cut else sentence


def _two_definite_subjects(old_c: str, new_c: str, stops: frozenset[str]) -> bool:
    """Both statements open with a definite subject, and no word of one is the other's
    ("The Falcon launch is scheduled for March 15" / "The team offsite is now scheduled for
    March 20"): two things, each with its date."""

    def subject(clause: str) -> list[str] | None:
        tokens = [t.lower() for t in tokens_of(clause)]
        if not tokens or tokens[0] not in _DEFINITE:
            return None
        words = []
        for token in tokens[1:]:
            if is_stopword(token, stops) or token[:1].isdigit():
                break
            words.append(token)
        return words or None

    old, new = subject(old_c), subject(new_c)
    return bool(old and new) and not any(similar_word(w, set(new)) for w in old)


def _says_changed(text: str) -> bool:
    """A closed-class word of change in the note (cues.py), "new", or an arrow."""
    return bool(
        CHANGE.search(text) or EFFECTIVE.search(text) or UP_OR_DOWN.search(text) or NEW_THING.search(text) or ARROW.search(text)
    )


# The preposition of a result before the new value ("pushed to 2 April", "going up to
# £38.50", "décalé au samedi", "auf 10 Uhr verschoben"): where a change arrives, a
# closed class of each grammar.
RESULT = re.compile(
    r"\b(?:to|auf|au|à|al|ao|para|alla|alle|zu)\s+(?:(?:the|le|la|el|il|o|a|den|dem)\s+)?([£$€]?[\w:.,]+)(?:\s+([\w:.,]+))?", re.I
)


def _result(clause: str, values: dict[str, str]) -> bool:
    """A new value right after a preposition of result ("to 2 April"), its unit glued on
    too ("upped to 10mg": the value read is "10")."""
    return any(_bare(t) in values or _unit_dropped(_bare(t)) in values for m in RESULT.finditer(clause) for t in m.groups() if t)


def _unit_dropped(token: str) -> str:
    """ "10mg" -> "10"; a token with no unit glued on as it is."""
    glued = _GLUED_UNIT.fullmatch(token)
    return token[: -len(glued.group(1))] if glued else token


def _bare(token: str) -> str:
    return token.lstrip("£$€").rstrip(".,").lower()


def _numbers(clause: str, stops: frozenset[str], names: frozenset[str], keep) -> dict[str, str]:
    """The clause's values of a form a slot holds one of, with their form."""
    out = {}
    for value in values_in(clause, stops, names):
        form = _form(value, clause, stops)
        if (form in FORMS or form.startswith("measure ")) and keep(value):
            out[value] = form
    # A weekday written in lower case is one all the same ("on-call = wednesdays from
    # now"): the weekdays are a closed class, whatever the writer's capitals.
    for token in tokens_of(clause):
        low = token.lower()
        if low == token and low.rstrip("s") in WEEKDAYS and len(low) > 3 and low not in out and keep(low):
            out[low] = "weekday"
    return out


# An amount whose currency is written after it ("89€", "97 €").
_CURRENCY_AFTER = re.compile(r"\d\s?[$€£¥]")
# A number per span of time written with a slash ("920/mo", "35/wk", "12k/yr").
_PER_SPAN = re.compile(r"k?\s?/\s?(?:mo|mth|month|wk|week|yr|year|day|hr|hour)\b")
# A clock time written with an "h" ("17h", "10h30"), as in French and much of Europe.
_CLOCK_H = re.compile(r"\d{1,2}h(?:\d{2})?\b")
# A number with two decimal places ("11.99", "1,299.00").
_CENTS = re.compile(r"\d[\d,]*[.,]\d{2}")


def _form(value: str, clause: str, stops: frozenset[str] = frozenset()) -> str:
    """An amount, a clock time, a date, a weekday, a year, a code, a long number (a phone's,
    an account's), a count or a word: a slot holds one of one form."""
    form = value_type(value, clause)
    low, text = value.lower(), clause.lower()
    at = text.find(low)
    if _CLOCK_H.fullmatch(low) or value.isdigit() and at >= 0 and _CLOCK_H.match(text[at:]):
        return "clock"
    if form == "number" and at >= 0 and _CURRENCY_AFTER.match(text[at + len(low) - 1 : at + len(low) + 2]):
        return "amount"
    if form == "number" and at >= 0 and _PER_SPAN.match(text, at + len(low)):
        return "amount"  # "920/mo": a rate, money's however the note leaves out its currency
    if low.rstrip("s") in WEEKDAYS:
        return "weekday"
    if low in MONTHS:
        return "date"
    if form == "time":
        return "year" if low.isdigit() else "clock"
    glued = _GLUED_UNIT.fullmatch(low)
    if glued and glued.group(1) not in _NOT_A_UNIT:
        return f"measure {glued.group(1)}"  # "5mg", read whole where "10mg" is read as "10"
    if form == "number":
        # Two decimal places are money's ("up to 11.99" after "£10.99/mo"), whatever the
        # note left out of its currency.
        if _CENTS.fullmatch(low):
            return "amount"
        if sum(c.isdigit() for c in low) >= 5:
            return "long number"
        # A number with its unit ("10mg", "2.5 ml", "180cm"): a measure in that unit, of
        # one form only with the same unit ("lisinopril 10mg" / "lisinopril is 20mg").
        unit = _UNIT.match(text[at + len(low) :]) if at >= 0 else None
        if unit and unit.group(1) not in _NOT_A_UNIT and unit.group(1) not in (stops or language.stopwords_for(clause)):
            return f"measure {unit.group(1)}"
        # A day of a month is a date ("9 October", "March 14th"), not a count.
        if _day_of_month(low).search(text):
            return "date"
        # A number a common noun labels ("size 12", "space 14", "bay 207") is that noun's
        # value, not a count of things ("3 cats"); after a name it is an address's ("via
        # Saragozza 42"), after a word of grammar a count or a day ("il 20").
        before = re.search(r"([^\W\d_]+)\s+$", clause[:at]) if at >= 0 else None
        if (
            before
            and before.group(1).islower()
            and before.group(1) not in (stops or language.stopwords_for(clause))
            and textutil.stem(before.group(1)) not in NOT_A_THING
        ):
            return "labelled"
        return "count"
    return form


# A clause opening with a singular personal pronoun of the third person ("Rachel (my
# accountant) emailed: she's putting her fees up to £95/hour"): that person's number. Not
# "they" or "it", which say a company's ("Netflix emailed: they're putting the price up").
_PERSON_OPENS = re.compile(r"^\W*(?:he|she|he['’]s|she['’]s|er|il|elle|él|ella|ele|ela|lui|lei)\b", re.I)


# A unit written after a number: an abbreviation of one to three letters, glued to it or
# one space apart ("10mg", "500 mg", "5 km"). Not an ordinal's ending, a multiplier
# ("3x", "61k") or a plural's "s", and not a word of grammar ("3 of them").
_UNIT = re.compile(r"\s?([^\W\d_]{1,3})\b")
_NOT_A_UNIT = frozenset({"st", "nd", "rd", "th", "x", "k", "s", "am", "pm", "h"})
_GLUED_UNIT = re.compile(r"\d+(?:[.,]\d+)?([^\W\d_]{1,3})")


def _day_of_month(day: str) -> re.Pattern:
    month = "|".join(MONTHS)
    return re.compile(rf"\b{re.escape(day)}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{month})\b|\b(?:{month})\.?\s+{re.escape(day)}\b")


# "X's" as "X is" / "X has" is no owner ("number's 07700 900877 now").
_OWNER = re.compile(rf"\b(\w+)['’]s\b(?!\s+{IS_OR_HAS_NEXT})", re.I)


def _written_sentence(text: str, clause: str) -> str:
    """The sentence of the text, as written, that holds the clause (the whole text when
    the clause crosses two)."""
    return next((s for s in textutil.sentences(text) if clause in s), text)


def _one_thing(old_text: str, new_text: str, stops: frozenset[str], values: set[str]) -> bool:
    """The two statements share a word of what they are about: not a value, an owner, a word of
    time or one of change (read with typos and abbreviations)."""
    new_words = {without_possessive(w) for w in words_of(new_text)}
    # Whose it is ("Mum's", "Dad's") in both notes says whose, not what: "Dad's birthday"
    # is not "Dad's op". A name that owns in one note only is what the other is about
    # ("Sentry Team plan, $26/mo" / "Sentry's new event quotas pushed the invoice up").
    old_owners, new_owners = ({m.group(1).lower() for m in _OWNER.finditer(text)} for text in (old_text, new_text))
    owners = old_owners & new_owners

    def about(word: str) -> bool:
        return (
            word not in values
            and word not in owners
            and word not in TIME_WORDS
            and textutil.stem(word) not in NOT_A_THING
            and not CHANGE.fullmatch(word)
        )

    # Short words count here: an abbreviation is often the thing itself ("op", "IT", "GP").
    old_words = [
        without_possessive(w.lower())
        for w in tokens_of(old_text)
        if len(w) >= 2 and not is_stopword(w.lower(), stops) and not w[:1].isdigit()
    ]
    return any(about(w) and similar_word(w, new_words) for w in old_words)


# Whose a statement's thing is: a possessor's name, or the writer's ("my", "our").
_FIRST_PERSON_OWNER = re.compile(r"\b(?:my|our)\b", re.I)


def _owners_differ(old_s: str, new_s: str) -> bool:
    """Each statement gives its thing an owner and none is the other's ("Dad's op" / "Mum's
    op"; "my rent" / "Ola's rent")."""

    def owners(s: str) -> set[str]:
        found = {m.group(1).lower() for m in _OWNER.finditer(s)} - CONTRACTED
        return found | ({"self"} if _FIRST_PERSON_OWNER.search(s) else set())

    old, new = owners(old_s), owners(new_s)
    return bool(old and new and not old & new)
