"""The judgement: does the newer note give another value for the older note's fact?

The evidence is read by the modules beside this one; this weighs it, in order, and
says no at the first sign of two facts (see the package's docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .... import textutil
from .. import grammar, language, similarity
from .anchors import (
    BEGINNING_ANCHORS,
    GOING_ANCHORS,
    STAYING_ANCHORS,
    STAYING_MARGIN,
    BEGINNING_MARGIN,
    OLD_BEGINNING_MARGIN,
    ENDING_MARGIN_NAMED,
    MOVED_ON_MARGIN,
    ONE_OFF_ANCHORS,
    REFUSAL_ANCHORS,
    REFUSAL_MARGIN,
    TAKING_ANCHORS,
    SAME_SLOT,
    SAME_SLOT_ENDED,
    SAME_SLOT_PAST,
    SAME_SLOT_WITH_CUE,
    leans,
    says_ended,
)
from .cues import (
    ADDITION,
    AT_A_NAME,
    BEGAN_AT,
    BOUNDED,
    bound_to_a_span,
    BUT,
    CHANGE,
    CONTRAST,
    CONTRAST_IT,
    EFFECTIVE,
    ENDED,
    FOR_NOW,
    HEDGED,
    NEGATED,
    NEW_THING,
    NO,
    PAST_FRAME,
    TEMPORARY,
    UP_OR_DOWN,
    negated,
    past_event,
    replaces_another,
    said_as_past,
    since_then,
)
from .plain import lower_case_values, shares_subject_or_slot, value_type
from .slots import (
    frame_word_swapped,
    modifier_of_another,
    named_by_kind,
    other_kind,
    other_thing,
    said_in_parallel,
    same_frame,
    shared_slot_words,
    shares_slot_word,
    slot_words_differ,
    two_holders,
    two_named_things,
)
from .statements import CLAUSE_BREAK, content_words, mentions, similar_word, tokens_of, units_of, words_of
from .subjects import first_person, other_owner, other_subject, possessed_thing, someone_else, values_of_another
from .successions import AWHILE_ANCHORS
from .transitions import handed_on, state_begun, writer_moved_on
from .values import (
    is_quantity,
    kinds_of,
    mask_values,
    names_in,
    numbers_in_names,
    one_kind,
    parallel_openers,
    part_of_another_name,
    values_in,
)


@dataclass(frozen=True)
class Change:
    old_values: tuple[str, ...]
    new_values: tuple[str, ...]
    closeness: float

    @property
    def reason(self) -> str:
        return f"{', '.join(self.old_values)} -> {', '.join(self.new_values)} (same fact by meaning, {self.closeness:.2f})"


# The clause pairs read, closest in meaning first: the closest finds the slot; the next
# ones only when their newer clause says a change or an end, which a long note may put
# beside a closer clause of other news ("Lloyds is closing the branch ... so I've moved
# my current account to Nationwide"). Measured: CHANGELOG, round 29.
CLAUSE_PAIRS_READ = 3


def judge(old_text: str, new_text: str) -> Change | None:
    """The change the new text makes to the old one's fact, or None."""
    for rank in range(CLAUSE_PAIRS_READ):
        found = _judge_pair(old_text, new_text, rank)
        if found is not None:
            return found
    return None


def _judge_pair(old_text: str, new_text: str, rank: int) -> Change | None:
    """The change read from the clause pair at this rank of closeness, or None."""
    if " ".join(old_text.split()).lower() == " ".join(new_text.split()).lower():
        return None
    old_units, new_units = units_of(old_text), units_of(new_text)
    stops = language.stopwords_for(f"{old_text} {new_text}")
    openers = parallel_openers(old_text, new_text)
    names = names_in(old_text) | names_in(new_text) | openers
    lang = language.language_of(f"{old_text} {new_text}")
    clauses = [c for c, _ in old_units] + [c for c, _ in new_units]
    # Each clause twice: as written, and with its values masked ("I live in X"), so that
    # "same slot, another value" is read by the model from the slot's words alone.
    vectors = similarity.meaning_vectors(clauses + [mask_values(c, stops, names) for c in clauses])
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    n_old, n = len(old_units), len(clauses)
    raw = vectors[n_old:n] @ vectors[:n_old].T
    masked = vectors[n + n_old :] @ vectors[n : n + n_old].T
    close = np.maximum(raw, masked)
    by_mask = close > raw
    order = np.argsort(-close, axis=None)
    if rank >= len(order):
        return None
    new_index, old_index = np.unravel_index(int(order[rank]), close.shape)
    if rank and not (CHANGE.search(new_units[new_index][0]) or says_ended(new_units[new_index][0], stops, names)):
        return None
    closeness = float(close[new_index, old_index])
    # Found by the masked slot alone ("I drive a X" / "bought a used X"), not by the words.
    # The closest clauses find the slot; their sentences hold its values and cues.
    old_s, new_s = old_units[old_index][1], new_units[new_index][1]
    old_c, new_c = old_units[old_index][0], new_units[new_index][0]
    if old_s.rstrip().endswith("?"):
        return None  # a question states no fact to replace ("... tickets to Kew lights?")
    cue = bool(CHANGE.search(new_s)) or any(
        similar_word(m.group(1).lower(), words_of(old_text)) for m in NEW_THING.finditer(new_s)
    )
    # Or another statement of the note says that the older clause's thing changed ("The
    # office moved; we're on Fleet Street from Monday").
    sibling_change = any(
        CHANGE.search(piece) and shares_slot_word(old_c, piece, stops, names)
        for piece in dict.fromkeys(p for _, p in new_units)
        if piece != new_s
    )
    # A value said to hold from a later date ("Got the raise!! 58k from next month."): the
    # note tells a change taking effect, in any of its statements.
    cue = cue or sibling_change or bool(EFFECTIVE.search(new_text)) or since_then(new_s)
    old_words, new_words = words_of(old_text), words_of(new_text)
    old_all = list(dict.fromkeys(values_in(old_s, stops, names)))
    # A number inside the older note's name ("Brooks Ghost 15") is not named again by the
    # same number inside another name ("an iPhone 15"): the name's other words must come too.
    named_old = [
        v
        for v in old_all
        if (mentions(v, new_words) or _address_named(v, new_words))
        and not (v.isdigit() and part_of_another_name(v, old_s, new_words))
    ]
    new_pieces = list(dict.fromkeys([c for c, _ in new_units] + [p for _, p in new_units]))
    # A first day at a named place begins a state there, unless the older value is named
    # as still part of it ("First day at PyData Berlin! Veritas paid for the ticket"); told
    # as a time gone it is not ("Corvid was fun but the hours were brutal").
    first_span = BEGAN_AT.search(new_s)
    if first_span and first_span.group("whose"):
        # Whose first day it is ("Primer día de Sofía en ...") holds the slot; no value of it.
        named_old = [v for v in named_old if not mentions(v, words_of(first_span.group("whose")))]
    began_at = bool(first_span) and all(_told_as_gone(v, new_pieces) for v in named_old)
    cue = cue or began_at
    if any(kept(v, new_pieces, lang) for v in named_old):
        return None  # "..., but I'm keeping the Golf", "pero me quedo en Zaragoza"
    if named_old and _only_theirs(named_old, [c for c, _ in new_units], old_s, names, lang):
        return None  # "We bank with Barclays" / "Coffee with Nadia, she's just got a job at Barclays"
    if any(still_there(v, new_pieces, stops, names) for v in named_old):
        return None  # "Adopted a kitten called Tofu. Mochi is hissing at him": Mochi is still here
    if named_old and _only_hedged(named_old, new_text):
        return None  # "Test drove a Tesla. Would love one when the Focus finally dies": the Focus stays
    # The newer note names what the older one's slot held ("Someone nicked my Brompton",
    # "Sold the T4"): as good a sign of the same slot as a change word.
    in_names = numbers_in_names(old_s)
    # "Sold the Civic", "the T4": not "May", nor the "Street" of another street's name.
    names_old_value = any(
        (not is_quantity(v) or v in in_names) and not part_of_another_name(v, new_text, old_words) for v in named_old
    )
    ending = says_ended(new_s, stops, names)
    # A state begun, by meaning ("Started at X today", "Switched my taxes over to X"), of
    # the older sentence's subject: as good a sign of change as a change word.
    began = (
        closeness >= SAME_SLOT_WITH_CUE
        and not HEDGED.search(new_s)
        and not past_event(old_s, any_language=True)  # a state it changes, not an event ("Started a sourdough starter")
        and (
            (first_person(old_s, names, lang) and first_person(new_s, names, lang))
            or (tokens_of(old_s) or [""])[0] == (tokens_of(new_s) or ["-"])[0] in names
        )
        and leans(new_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, BEGINNING_MARGIN, stops, names)
    )
    # A slot that holds several values side by side ("I speak Dutch and English") gains one
    # by a beginning ("Started learning Japanese"); only a change word replaces one of them.
    began = began and not side_by_side(old_s, values_in(old_s, stops, names))
    worded = cue  # a change in words, not only by meaning
    cue = cue or began
    bar = SAME_SLOT_WITH_CUE if cue or names_old_value or ending else SAME_SLOT
    # The older value or its slot named in the newer clause: by the value, a word of the
    # slot, or the kind a camel-case name carries ("the PureGym" / "the gym membership").
    slot_named = names_old_value or shares_slot_word(old_c, new_c, stops, names) or bool(named_by_kind(old_c, new_c, stops))
    # An ending that names the old value or a word of its slot ("Quit vaping", "Nadia and
    # I called it off"): read with a looser margin and bar (a plain ending too, which the
    # bar above holds to the stricter one), and only on the ended path below; only when
    # both statements are the writer's, not a thing's own news ("Chess club has a
    # tournament", "Austin traffic is getting worse").
    ended_named = (
        closeness >= SAME_SLOT_ENDED
        and slot_named
        and first_person(old_s, names, lang)
        and first_person(new_s, names, lang)
        and not HEDGED.search(new_s)
        and (ending or says_ended(new_s, stops, names, ENDING_MARGIN_NAMED))
    )
    if closeness < bar and not ended_named:
        return None
    # Found by the masked slot alone ("I drive a X" / "bought a used X"), not by the words.
    masked_only = bool(by_mask[new_index, old_index]) and float(raw[new_index, old_index]) < bar
    # The addition may sit across a dash of the same sentence ("Adopted a kitten too — her
    # name is Miso").
    whole = next((t for t in textutil.sentences(new_text) if set(tokens_of(new_s)) <= set(tokens_of(t))), new_s)
    if ADDITION.search(whole) and not re.search(r"\b(?:instead|no longer|anymore)\b", whole, re.I):
        return None
    if PAST_FRAME.search(new_s) or PAST_FRAME.search(old_s):
        return None
    if not named_old and _ended_elsewhere(new_units, new_s, old_words, stops, names):
        return None  # "Cancelled Netflix, nobody watched it. Got Disney+ instead": Netflix's slot, not a day trip's
    if BOUNDED.search(new_s) and not CHANGE.search(new_s):
        return None  # "Spending two weeks in Lisbon", "Estou em São Paulo até sexta": a stay
    if said_as_past(old_c, new_c) and not CHANGE.search(new_s):
        return None  # "J'habite à Nantes" / "j'habitais à Rennes": a history, not a change
    if someone_else(new_s, old_text, lang) or someone_else(new_c, old_text, lang):
        return None
    if someone_else(old_s, new_text, lang) and not names_old_value and not possessed_thing(old_s, lang):
        return None  # "my car is a Punto" / "Sold the Punto": the thing the newer note names is the writer's
    if other_subject(old_s, new_s, names, old_text, new_text) or other_owner(old_c, new_c):
        return None
    # A sentence that opens with its value ("Got the raise!! 58k from next month.") has no
    # subject of its own: it is of the note's writer, whose frame the note's first
    # sentence gives.
    frame_s = new_text if (tokens_of(new_s) or ["-"])[0][:1].isdigit() else new_s
    if not (same_frame(old_s, frame_s, stops, names, lang) or _one_subject(old_c, new_c, names)) and not named_old:
        return None  # "School starts at 8:00" / "Soccer practice moved to 4:30"
    # A value the newer clause does not repeat is replaced, even when another statement of
    # the note names it ("Diego owns the flow; Priyanka moved to growth").
    clause_words = words_of(new_c)
    # A number of a name ("Mazda 3") is not replaced when the name is named again ("a
    # rental Corolla while the Mazda is in the shop").
    old_values = [v for v in old_all if not mentions(v, clause_words) and not _name_named(v, old_s, in_names, clause_words)]
    # A word of change tells that the slot changed, it is no value of it ("Switched car
    # insurance to ...").
    new_values = [
        v for v in dict.fromkeys(values_in(new_s, stops, names)) if not mentions(v, old_words) and not CHANGE.fullmatch(v)
    ]
    # A value said only as thought of, planned or denied is not held ("might get an
    # iPhone", "we're not moving to Braga").
    new_values = [v for v in new_values if not denied(v, new_pieces, lang, frozenset(old_words))]
    if first_person(old_s, names, lang) and values_of_another(new_s, new_values, lang):
        return None  # "We rent at 14 Hollis Street" / "... into his new place, 31 Hollis Street"
    if new_values and kinds_of(new_values) == {"quantity"} and UP_OR_DOWN.search(new_s):
        cue = True  # "Landlord put the rent up, £1,240 from May"
    # What an ending holds beside the end is when it ended ("in January", "three weeks
    # ago"), unless it is of the kind of the old value (of the older clause: its price in
    # another clause is not what ended): a new holder of the slot.
    old_kinds = kinds_of([v for v in old_all if mentions(v, words_of(old_c))] or old_all)
    holders = [v for v in new_values if not kinds_of([v]).isdisjoint(old_kinds or {"word"})]
    if (
        (ending or ended_named)
        and not holders
        and not HEDGED.search(new_s)
        # "I did not change my number", "No he cambiado de médico, sigo con ...": the
        # clause or the sentence's head denies, it tells no end ("no longer" is no denial).
        and not (NEGATED.search(new_c) and not ENDED.search(new_c))
        and not denied_head(new_s, lang)
        # "Rosa is off next Tuesday, back the week after": an end for a while.
        and not TEMPORARY.search(new_s)
        # An event ends nothing, but the thing it joined may end ("Joined the PureGym" /
        # "Cancelled the gym membership"): the newer note names it by its kind. Naming the
        # old value is not enough ("Had dinner at Marta's" / "Lent Marta my ladder, need
        # it back").
        and (not past_event(old_s, any_language=True) or bool(named_by_kind(old_c, new_c, stops)))
        and slot_named
    ):
        # "Sold the T4, no more van", "Quit smoking": the fact ended with no new value.
        ended = [v for v in named_old if not is_quantity(v) or v in in_names]
        # The old value named in a clause of its own that tells no end is said again, and
        # the end is another thing's ("Check-up with Dr. Patel went fine, no fillings").
        if end_of_another_thing(old_text, new_s, ended, stops, names):
            ended = []
        else:
            ended = ended or named_by_kind(old_c, new_c, stops) or shared_slot_words(old_c, new_c, stops, names)
        if ended:
            return Change(tuple(ended), ("(ended)",), closeness)
    if closeness < bar:
        return None  # the looser bar is an ending's only
    if TEMPORARY.search(new_text) and not CHANGE.search(new_text) and not EFFECTIVE.search(new_text):
        return None  # "Priya is on leave next week, Dev covers for her": a stand-in for a while
    if modifier_of_another(old_s, new_s, stops, names):
        return None  # "My car is a silver Jazz" / "Switched car insurance to Direct Line": the insurance
    if two_named_things(old_s, new_s):
        return None  # "The starter is called Doughbi" / "seeing someone called Ines": two named
    modifiers = other_kind(old_s, new_s, stops, names)
    if modifiers and _writers_role(old_s, modifiers[0]) and _writers_role(new_s, modifiers[1]):
        # "I'm a junior designer at X" / "First week as lead designer at Y": the writer
        # is the thing, and holds one such role at a time.
        old_values, new_values = [modifiers[0], *old_values], [modifiers[1], *new_values]
        modifiers = None
    if modifiers and (old_values or new_values):
        return None  # "the team meeting is on Monday" / "the client meeting moved to Tuesday"
    if cue and modifiers:
        old_values, new_values = [modifiers[0]], [modifiers[1]]  # "the payments team" / "now ... the platform team"
    elif (
        not old_values
        and named_old
        and new_values
        and (
            cue
            or ending
            or handed_on(old_s, new_c, named_old, new_values, closeness, names)
            or writer_moved_on(old_s, new_s, new_values, closeness, names, lang, stops)
        )
    ):
        # "Tariq took it over from Lena", "New dentist: Dr. Takahashi, Moreau retired",
        # "Handed in my notice at X and started at Y", "Femi passed on-call to Grace"; or
        # the writer leaving the old value for a new one, leaning to a change of state by
        # meaning ("Gave notice at the Grand Hotel and started at the Savoy").
        old_values = named_old
    elif cue and not old_values and not new_values and CHANGE.search(new_s) and said_in_parallel(old_s, new_s):
        # Values in lower case ("sales associate" -> "regional sales manager"): the words
        # each sentence has that the other note does not, when the newer one says it changed.
        old_values = [w for w in content_words(old_s, stops) if not similar_word(w, new_words)]
        new_values = [w for w in content_words(new_s, stops) if not similar_word(w, old_words) and not CHANGE.fullmatch(w)]
    if cue and named_old and new_values and kinds_of(old_values).isdisjoint(kinds_of(new_values)):
        # "Crete fell through, we're doing Sardinia instead": what it names of the older
        # note, of the new value's kind, is the value replaced (not the "two weeks").
        old_values = [v for v in named_old if not kinds_of([v]).isdisjoint(kinds_of(new_values))] or old_values
    # A clause with no capitals names nothing by its case ("maisie started reception at st
    # brigid's primary"): its value is read after its copula or first preposition.
    lower_case_value = (
        not old_values
        and new_values
        and cue
        and not any(ch.isupper() for ch in old_c)
        and lower_case_values(old_c, new_text, stops)
    )
    if lower_case_value:
        old_values = lower_case_value
    if not old_values or not new_values:
        return None
    # The writer's first span at a named place, after the writer at another ("Started at
    # Halvorsen" / "First day at Brightwater"): the slot of where, and the older event the
    # beginning of the state the newer one ends, however close the two frames read.
    # The same holds of one person named as both clauses' subject ("maisie started
    # reception at st brigid's" / "Maisie had her first day at Oakfield Juniors"), the
    # older place read by its preposition when written in lower case.
    began_elsewhere = bool(
        began_at
        and (AT_A_NAME.search(old_s) or lower_case_value)
        and ((first_person(old_s, names, lang) and first_person(new_s, names, lang)) or _one_subject(old_c, new_c, names))
    )
    if masked_only and not (
        names_old_value
        or shares_slot_word(old_c, new_c, stops, names)
        # The slot's word may sit in another clause of the sentence ("bike got stolen,
        # got a Cube as replacement").
        or (cue and shares_slot_word(old_c, new_s, stops, names))
        # The same slot in another frame ("My manager is X" / "I report to X now"): the
        # writer's on both sides, a change in words, and the masked frames as close as two
        # wordings of one slot are.
        or (worded and closeness >= SAME_SLOT and first_person(old_s, names, lang) and first_person(new_s, names, lang))
        or sibling_change
        or began
        or began_elsewhere
        or writer_moved_on(old_s, new_s, new_values, closeness, names, lang, stops)
    ):
        return None  # "The dentist appointment is on X" / "Booked a haircut for X": the frame only
    if set(old_values) & openers and slot_words_differ(old_c, new_c, stops, names):
        return None  # "Priyanka owns the onboarding flow" / "Diego owns the billing page": two slots
    if set(old_values) & openers and set(old_values) - openers and set(new_values) - openers:
        return None  # "Ana works at IBM" / "Ben works at Oracle": two people, each with a value
    if not worded and two_holders(old_s, new_s, stops, names):
        return None  # "My sister Eva lives in Vienna" / "My sister Marta lives in Graz": two holders
    if not worded and not named_old and frame_word_swapped(old_c, new_c, stops, names):
        return None  # "My favourite movie is X" / "My favourite book is Y": two slots of one frame
    if replaces_another(new_c, old_text):
        return None  # "... to Munich instead of Hamburg" does not replace Berlin
    kept_old, kept_new = one_kind(old_values, new_values, (old_s, new_s))
    if not (kept_old and kept_new):
        # Two kinds in a sentence of several clauses ("Priya got a new SIM, her number is
        # 07700 900555 now"): the values of the one clause that says the older slot again,
        # as close in meaning as a changed slot is, are the new ones.
        kept_old, kept_new, new_c = _clause_of_the_slot(
            old_values, new_values, new_s, new_units, close[:, old_index], (old_s, new_s), new_c
        )
    old_values, new_values = kept_old, kept_new
    if not old_values or not new_values:
        return None  # "Coffee at Blue Bottle is $5" / "at Starbucks went up to $6": another place's price
    if (
        kinds_of(old_values) == kinds_of(new_values) == {"quantity"}
        and not (cue or ending)
        and not {value_type(v, old_s) for v in old_values} & {value_type(v, new_s) for v in new_values}
    ):
        # Numbers of two forms (a count of items, an age; an amount, a time), no word of
        # change: two facts ("oat milk x6, ... x4 for Dan's care package" / "Dan's 31st bday").
        return None
    if kinds_of(new_values) == {"quantity"} and other_thing(old_c, new_c, old_text, new_text, stops):
        return None  # "The tax return is due X" / "The passport renewal is due by X": two things' dates
    slot_evidence = names_old_value or shares_slot_word(old_c, new_c, stops, names)
    # An older event that began a state ("Moved to X for the new contract") states it.
    if (
        past_event(old_s, any_language=True)
        and (not cue or closeness < SAME_SLOT_PAST or not slot_evidence)
        # (with a change in words, and not when the newer one keeps its value: "In Berlin I
        # now take the U-Bahn").
        and (
            not worded
            or named_old
            or (closeness < SAME_SLOT_PAST and not began_elsewhere)
            or not leans(old_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, OLD_BEGINNING_MARGIN, stops, names)
        )
    ):
        return None  # "Finished reading X" is not undone by "Left X, I'm freelancing now"
    if past_event(new_s) and not cue and not named_old and not state_begun(old_s, new_s, closeness, names, lang, stops):
        return None  # "Went to Porto" after "Went to Lisbon"; but "Sam started at Kingsmead" after "Sam is at Oakwood"
    if not cue and not ending and not named_old and one_off(new_values, new_pieces, stops, names):
        return None  # "Finished my shift at X and met Jo for a drink at Y": the new value is a visit's
    if not (shares_subject_or_slot(old_c, new_c, old_s, frame_s, named_old, stops, lang) or _one_subject(old_c, new_c, names)):
        return None  # "Book club pick: The Remains of the Day" / "these days my physio is ...": meaning alone
    # A refusal follows what it refuses: read from the value's clause on ("Dan's car failed
    # its MOT, ... and Maisie had her first day at Oakfield Juniors" refuses nothing).
    from_value = new_s[new_s.find(new_c) :] if new_c in new_s else new_s
    if not CHANGE.search(new_text) and leans(from_value, REFUSAL_ANCHORS, TAKING_ANCHORS, REFUSAL_MARGIN, stops, names):
        return None  # "Me ofrecieron un puesto en BBVA, pero lo rechacé": an offer declined
    if not cue and not ending and all(_named_aside(v, new_text) for v in old_values):
        return None  # "Uncle Hamish turns 84" / "Hamish's morning carer is Agnes": Hamish holds it
    return Change(tuple(old_values), tuple(new_values), closeness)


# A preposition (a closed class, of the languages read) or a possessive: what it names is
# where, for whom or whose, not the subject or object of a change.
_ASIDE = r"(?:at|for|with|in|on|to|from|of|by|near|für|bei|mit|pour|avec|chez|para|con|com|per|voor|bij|met)"


def _named_aside(value: str, text: str) -> bool:
    """The newer note names the value, each time after a preposition or as an owner
    ("ordered Orijen for Biscoito", "Hamish's morning carer"): what is said is of it, not
    that it ended."""
    v = re.escape(value)
    said = list(re.finditer(rf"(?<![\w@]){v}(?![\w@])", text, re.I))
    return bool(said) and all(
        # (after the name's other words: "at the Daily Grind")
        re.search(rf"\b{_ASIDE}\s+(?:the\s+|a\s+|an\s+)?(?:(?-i:[A-Z])[\w'’-]*\s+){{0,3}}$", text[: m.start()], re.I)
        or re.match(r"['’]s?\b", text[m.end() :])
        for m in said
    )


def _ended_elsewhere(new_units, new_s: str, old_words: set[str], stops: frozenset[str], names: frozenset[str]) -> bool:
    """Another statement of the newer note ends a named thing the older note never names
    ("Cancelled Netflix, nobody watched it."): the new value ("Got Disney+ ... instead")
    replaces that thing, not the older note's value."""
    for piece in dict.fromkeys(p for _, p in new_units):
        if piece == new_s:
            continue
        named = [v for v in values_in(piece, stops, names) if not is_quantity(v)]
        if named and not any(mentions(v, old_words) for v in named) and says_ended(piece, stops, names):
            return True
    return False


def _one_subject(old_c: str, new_c: str, names: frozenset[str]) -> bool:
    """Both clauses open with one name, its case aside: the frame is that person's ("maisie
    started reception at St Brigid's" / "Maisie had her first day at Oakfield Juniors"),
    however many other things the newer sentence tells."""
    first_old, first_new = ((tokens_of(c) or [""])[0].lower() for c in (old_c, new_c))
    return first_old == first_new and first_old in names


def _clause_of_the_slot(
    old_values: list[str],
    new_values: list[str],
    sentence: str,
    units: list[tuple[str, str]],
    closeness: np.ndarray,
    sentences: tuple[str, str],
    clause_now: str,
) -> tuple[list[str], list[str], str]:
    """The old and new values of one kind, the new ones those of the only clause of the
    sentence close in meaning to the older slot that holds values of the old kind; and
    that clause (else the clause as it was)."""
    found = []
    for j, (clause, whole) in enumerate(units):
        if whole != sentence or clause == sentence or float(closeness[j]) < SAME_SLOT_WITH_CUE:
            continue
        words = words_of(clause)
        of_clause = [v for v in new_values if mentions(v, words)]
        olds, news = one_kind(old_values, of_clause, sentences)
        if olds and news:
            found.append((olds, news, clause))
    return found[0] if len(found) == 1 else ([], [], clause_now)


def _name_named(value: str, sentence: str, in_names: set[str], words: set[str]) -> bool:
    """The value is the number of a name ("Mazda 3") whose word the other words name."""
    if value not in in_names:
        return False
    tokens = tokens_of(sentence)
    return any(
        tokens[j].lower() in words
        for i, t in enumerate(tokens)
        if t.lower() == value
        for j in (i - 1, i + 1)
        if 0 <= j < len(tokens) and tokens[j][:1].isupper()
    )


def side_by_side(sentence: str, values: list[str]) -> bool:
    """Two of the sentence's values joined as a list ("Dutch and English", "tea, coffee")."""
    low = sentence.lower()
    return any(
        re.search(rf"{re.escape(a)}\s*(?:,|&|\band\b|\bund\b|\bet\b|\by\b|\be\b)\s*{re.escape(b)}", low)
        for a in values
        for b in values
        if a != b
    )


def denied_head(sentence: str, lang: str) -> bool:
    """A negation among the first words of the sentence's first clause denies its main verb
    ("I did not change ...", "No he cambiado ...", "Não mudei ..."), unless the sentence
    tells an end ("no longer", "not ... anymore")."""
    if ENDED.search(sentence) or re.search(r"\bany ?more\b|\bany longer\b", sentence, re.I):
        return False
    head = " ".join(tokens_of(re.split(r"[,;—]", sentence)[0])[:3])
    return bool(NEGATED.search(head) or (lang != "pt" and NO.search(head)))


def kept(value: str, pieces: list[str], lang: str = "") -> bool:
    """The newer note says the old value holds: a statement naming it opens with a word of
    contrast or "still", and says no change or end ("..., aber ich behalte den Golf"; "for
    now" says how long it is kept, not a change)."""
    for piece in pieces:
        said = FOR_NOW.sub(" ", piece)
        contrast = CONTRAST.search(piece) or (lang == "it" and CONTRAST_IT.search(piece))
        if mentions(value, words_of(piece)) and contrast and not CHANGE.search(said) and not ENDED.search(said):
            at = piece.lower().find(value.lower())
            if 0 <= at < contrast.start() and re.search(r"[,;:—–]|\s-\s", piece[at : contrast.start()]):
                continue  # "Dropped Econometrics II, it was just maths but worse": another clause's "but"
            if _told_as_gone(value, [piece]):
                continue  # "Corvid was fun but the hours were brutal": a time gone, not kept
            return True
    return False


def _told_as_gone(value: str, pieces: list[str]) -> bool:
    """Some statement opens with the value and the past of "be" ("Corvid was fun")."""
    return any(_PAST_BE.search(p[p.lower().find(value) :]) for p in pieces if value in p.lower())


# The value, then the past of "be" (a closed class of each grammar): told as a time gone.
_PAST_BE = re.compile(r"^\S+\s+(?:was|were|war|waren|fue|fueron|era|eran|était|étaient|foi|foram)\b", re.I)


def keeps_old_value(old_text: str, new_text: str) -> bool:
    """The newer note names a value of the older one and means staying with it ("Looked at
    switching to BT ... Staying with Virgin."): whatever else it says changed (an exit
    fee, a price looked at), the older fact holds. For every judgement, not only this one."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text)
    new_words = words_of(new_text)
    named = [v for v in values_in(old_text, stops, names) if not is_quantity(v) and mentions(v, new_words)]
    pieces = list(dict.fromkeys(p for unit in units_of(new_text) for p in unit))
    return any(stays_with(v, pieces, stops, names) for v in named)


def stays_with(value: str, pieces: list[str], stops: frozenset[str], names: frozenset[str]) -> bool:
    """A statement of the newer note names the old value and means staying with it, by
    meaning ("Staying with Virgin." +0.054, "Keeping the Golf." +0.053 against "Went with X
    in the end." -0.010, "Signed up with X." +0.000), with no word of change or end."""
    for piece in pieces:
        # Negated, it says the opposite ("Niet verlengd bij Centraal Beheer": not renewed).
        if (
            not mentions(value, words_of(piece))
            or CHANGE.search(piece)
            or ENDED.search(piece)
            or HEDGED.search(piece)
            or NEGATED.search(piece)
        ):
            continue
        # "Cancelled Netflix, nobody watched it." names the value too, and ends it.
        if leans(piece, STAYING_ANCHORS, GOING_ANCHORS, STAYING_MARGIN, stops, names) and not says_ended(piece, stops, names):
            return True
    return False


def _address_named(value: str, words: set[str]) -> bool:
    """An e-mail address named by its provider ("ditched hotmail" names
    "danny.r.82@hotmail.co.uk"): the first word of its domain."""
    domain = value.partition("@")[2].split(".")[0]
    return len(domain) > 2 and domain in words


def _only_theirs(named: list[str], clauses: list[str], old_s: str, names: frozenset[str], lang: str) -> bool:
    """The older statement is the writer's, and the newer note names its values again only
    in clauses whose subject is someone else, a pronoun of the third person ("she's just
    got a job at Barclays"): their fact about the value, not the writer's changed."""
    if not first_person(old_s, names, lang):
        return False
    third = grammar.third_person_subject(lang)
    naming = [c for c in clauses if any(mentions(v, words_of(c)) for v in named)]
    return bool(naming) and all(third.search(c) for c in naming)


# Told in the present, away for a while ("X is off sick" +0.093, "X is on parental leave"
# +0.045) against still here ("X is hissing at him from the wardrobe" +0.008, "X stays for
# the everyday stuff" -0.029): the margin between the nearest of each.
HERE_ANCHORS = ("X is here.", "X does X.", "X stays.", "X is X.", "X has X.")
AWAY_MARGIN = 0.02
# A verb of the present after its subject: "is", "has", or an English third person
# singular ("hisses", "stays"); a closed class and an ending. English only: the other
# grammars build their past with the present of "be" or "have" ("Anna ist nach München
# gezogen", "Marc est parti").
_PRESENT_VERB = re.compile(r"(?:is|are|has|have|[a-z]{3,}[^s'’]s)")


def still_there(value: str, pieces: list[str], stops: frozenset[str], names: frozenset[str]) -> bool:
    """A statement of the newer note opens with the old value and tells it in the present,
    no change, no end and nothing hedged: the old value is still held beside whatever the
    note adds ("Mochi is hissing at him from the wardrobe", "Monzo stays for the everyday
    stuff"), not replaced ("The Jazz went in part-exchange", "Deborah's last day was ...")."""
    for piece in pieces:
        tokens = [t.lower() for t in tokens_of(piece)]
        if len(tokens) < 3 or tokens[0] != value or not _PRESENT_VERB.fullmatch(tokens[1]):
            continue
        if language.language_of(piece) not in ("en", ""):
            continue
        if CHANGE.search(piece) or ENDED.search(piece) or NEGATED.search(piece) or HEDGED.search(piece):
            continue
        if past_event(piece, any_language=True) or TEMPORARY.search(piece) or says_ended(piece, stops, names):
            continue
        if leans(piece, AWHILE_ANCHORS, HERE_ANCHORS, AWAY_MARGIN, stops, names):
            continue  # "Grace is off sick; Hiro covers on-call now": away, and a stand-in holds the slot
        return True
    return False


def end_of_another_thing(old_text: str, sentence: str, named: list[str], stops: frozenset[str], names: frozenset[str]) -> bool:
    """The sentence's clauses that tell an end name nothing of the older note, and the
    clause that names the old value tells none: the end is another thing's ("Check-up with
    Dr. Patel went fine, no fillings"), not the older fact's ("Sold the T4, no more van")."""
    clauses = [c.strip() for c in CLAUSE_BREAK.split(sentence) if len(c.split()) >= 2]
    naming = [c for c in clauses if any(mentions(v, words_of(c)) for v in named)]
    if len(clauses) < 2 or not naming:
        return False
    old_words = words_of(old_text)
    # An end in the closed class ("no fleas", "keine ...") is read first; by meaning else.
    ending = [c for c in clauses if c not in naming and (ENDED.search(c) or NO.search(c) or NEGATED.search(c))]
    ending = ending or [c for c in clauses if c not in naming and says_ended(c, stops, names)]
    if not ending or any(says_ended(c, stops, names) for c in naming):
        return False
    # A word of the older note, or a part of one of its compounds ("van" of "campervan").
    return not any(
        similar_word(w, old_words) or any(len(w) >= 3 and w in o for o in old_words)
        for c in ending
        for w in content_words(c, stops)
    )


# The writer said to be or to act as what follows (a closed class of English frames).
_ROLE_FRAME = r"\b(?:i'm|i’m|i am|i work as|as|now)\s+(?:an?\s+|the\s+)?"


def _writers_role(sentence: str, modifier: str) -> bool:
    """The modifier opens a role the writer holds ("I'm a junior designer", "as lead
    designer"): the thing is the writer, not an object of the note."""
    return bool(re.search(_ROLE_FRAME + re.escape(modifier) + r"\b", sentence, re.I))


def _only_hedged(values: list[str], text: str) -> bool:
    """Every clause of the text that names one of the values says it only as thought of
    ("would", "might", "someday if"): what the older note held is not said to have gone.
    A hedge in another clause is of something else ("6:30 was a flop, maybe 4 people")."""
    naming = [c for c, _ in units_of(text) if any(mentions(v, words_of(c)) for v in values)]
    return bool(naming) and all(HEDGED.search(t) for t in naming)


def stays_after_all(text: str) -> bool:
    """The note ends what it began with "but" and words that name no value and mean staying
    ("Haben eine Wohnung in Bonn besichtigt, aber wir bleiben"; "..., but we're staying
    put"): the change was only looked at. Read by meaning (anchors.STAYING_ANCHORS)."""
    stops = language.stopwords_for(text)
    names = names_in(text)
    but = CONTRAST_IT if language.language_of(text) == "it" else BUT
    for sentence in textutil.sentences(text):
        for m in but.finditer(sentence):
            after = re.split(r"[;:.!?]|,\s", sentence[m.start() :])[0].strip()
            said = FOR_NOW.sub(" ", after)
            if len(after.split()) < 2 or CHANGE.search(said) or ENDED.search(said) or HEDGED.search(after):
                continue
            if values_in(after, stops, names):
                continue  # a value after "but" is kept (kept above) or new ("but I'm happy with the Tesla")
            if leans(after, STAYING_ANCHORS, GOING_ANCHORS, STAYING_MARGIN, stops, names):
                return True
    # Or a short sentence of its own, naming no value, that means nothing changes
    # ("Nothing changes.", "No change.", "Rien ne change."), by a wider margin than after
    # a "but" ("Nothing else to report" +0.079, "No contract" +0.076 stay below).
    return any(
        len(sentence.split()) <= NOTHING_CHANGES_WORDS
        and not values_in(sentence, stops, names)
        and not HEDGED.search(sentence)
        and leans(sentence, STAYING_ANCHORS, GOING_ANCHORS, NOTHING_CHANGES_MARGIN, stops, names)
        for sentence in textutil.sentences(text)
    )


# A sentence of its own that says nothing changes: at most this many words, and nearer
# the anchors of staying than those of going by this much ("Nothing changes." +0.161,
# "No change." +0.110, "Rien ne change." +0.088 is below; multilingual-e5-small).
NOTHING_CHANGES_WORDS = 5
NOTHING_CHANGES_MARGIN = 0.1


# Adverbs of return, a closed class of each grammar: "back", "zurück", "terug", "de
# vuelta", "de retour", "di ritorno", "de volta".
RETURN = re.compile(r"\b(?:back|zurück|terug|de vuelta|de regreso|de retour|di ritorno|de volta)\b", re.I)
# Prepositions of purpose, a closed class: what follows them is why, not where.
PURPOSE = re.compile(r"\b(?:for|für|voor|pour|para|per)\b", re.I)


def back_to_old(old_text: str, new_text: str) -> bool:
    """A clause of the newer note returns to a value the older one states ("im Juli kommt
    sie zurück nach Hamburg" after "Jana wohnt in Hamburg-Altona", "back at Acme"): when
    the newer note is done, the older fact holds, whatever it says of the while between.
    A value written with a hyphen ("Hamburg-Altona") is named by any of its parts. A
    return told as done or with a word of change ("Moved back to Leeds", "back in Leeds
    now") may leave a value the older note had moved to: read by the other judgements."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    old_values = [v for v in values_in(old_text, stops, names_in(old_text)) if not is_quantity(v)]
    old_words = words_of(old_text)
    if any(
        NEW_THING.search(clause) and any(not mentions(v, old_words) for v in values_in(clause, stops, names_in(new_text)))
        for clause, _ in units_of(new_text)
    ):
        return False  # "keys handed back at Elm Grove! new place is 3 Hawthorn Close": a new one named
    for clause, _ in units_of(new_text):
        back = RETURN.search(clause)
        if not back or CHANGE.search(clause) or past_event(clause, any_language=True):
            continue
        # Where the return goes is said after "back", not before it or after a purpose:
        # "Marta will claw some back", "go back for a blood test" return to no value.
        words = words_of(PURPOSE.split(clause[back.end() :])[0])
        if any(mentions(part, words) for v in old_values for part in [v, *v.split("-")] if len(part) > 2):
            return True
    return False


def denied(value: str, pieces: list[str], lang: str, old_words: frozenset[str]) -> bool:
    """Every statement of the newer note that names the value hedges it or denies it."""
    holding = [p for p in pieces if mentions(value, words_of(p))]
    return bool(holding) and all(HEDGED.search(p) or negated(p, lang, old_words) for p in holding)


def one_off(new_values: list[str], pieces: list[str], stops: frozenset[str], names: frozenset[str]) -> bool:
    """Each statement holding a new value reports a past event nearer a visit than a change
    of state, by meaning ("met Jo for a drink at X" against "X moved to X")."""
    # Each value's own statement: the shortest that names it (its clause, not the sentence).
    shortest = list(dict.fromkeys(min((p for p in pieces if mentions(v, words_of(p))), key=len, default="") for v in new_values))
    if not shortest or "" in shortest:
        return False
    return all(past_event(p) for p in shortest) and not any(
        leans(p, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, MOVED_ON_MARGIN, stops, names) for p in shortest
    )


def said_not_as_a_change(old_text: str, new_text: str) -> bool:
    """The grammar of the newer note says it changes nothing now, whatever its words: it
    tells of a time gone ("when I was at uni", "il y a dix ans", "j'habitais"), or only
    thinks of, plans or denies the change ("might", "thinking about moving", "no nos
    mudamos"), with no word of change. For rules that read phrasings (update_rules.py)."""
    if CHANGE.search(new_text):
        return False
    statements = list(dict.fromkeys(p for _, p in units_of(new_text)))
    lang = language.language_of(f"{old_text} {new_text}")
    if PAST_FRAME.search(new_text) or said_as_past(old_text, new_text) or bound_to_a_span(new_text):
        return True  # a time gone, or a stay ("for two weeks", "until Friday")
    old_words = frozenset(words_of(old_text))
    return bool(statements) and all(HEDGED.search(p) or negated(p, lang, old_words) for p in statements)
