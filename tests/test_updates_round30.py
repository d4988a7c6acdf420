"""Round 30 (issue 25): found on update scenarios written by someone who read none of the
code, in three voices (a baker's shop notes, a student's, a carer's notes about a parent).
Missed: a note typed in lower case ("approved!! new deadline is 16 May. breathe.") read as
one sentence; "handed over to" no word of change; a span gone in one sentence ("all
month") read as a stay of the whole note whose next sentence says a change from a day
("from Tues", a weekday as people shorten it); a hedge in another clause ("maybe 4
people") read as hedging the change; a pronoun going on about the person the older note
is about ("They've moved Mum downstairs") read as someone else; a correction with no
comma ("are Fridays not weds") and the shortened day; "Niet verlengd" read as staying
(Dutch negation); "Also" of something else after a price put up; "but" of another clause
read as keeping the older value; a drug's name read as a person. False: a price or a day
in a clause that names nothing ("4 for £10 after 1pm", "we're at $45 a month now", "due
Thursday") read as the other note's thing's. Answers: "originally" read as a thing asked.
Written here in words of their own."""

from __future__ import annotations

import importlib

import pytest

from memories import textutil
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

cues = importlib.import_module("memories.llm.extractive.changes.cues")
subjects = importlib.import_module("memories.llm.extractive.changes.subjects")

UPDATES = [
    # Typed in lower case after "!!" and a full stop.
    ("Thesis due 9 June, 5pm, upload to the portal.", "extension granted!! new thesis deadline is 23 June. phew."),
    # "handed over to", with someone else's span beside it.
    ("My caseworker is Tanya at the Eastside office.", "Tanya's off till spring so I've been handed over to Marcus."),
    # A span gone, then a change from a shortened weekday; a hedge of another clause.
    (
        "Opening at 7:30 from Monday for the commuters.",
        "7:30 was pointless, maybe 3 people before 8 all week. Opening at 8:15 from Weds so we can get a second batch baked.",
    ),
    # A correction with no comma, the old day shortened ("not thurs").
    ("Bin collection is on Thursdays.", "correction, bins are Tuesdays not thurs - I was thinking of the recycling."),
    # "Niet verlengd": not renewed, no staying with the old insurer.
    ("Onze energie komt van Eneco, €140 per maand.", "Niet verlengd bij Eneco, we zitten nu bij Vattenfall voor €128 per maand."),
    # A price put up in a long note with "Also" of something else.
    (
        "Cheese from Harveys - 5kg wheels, £9.40/kg. Best price for mature cheddar.",
        "Mad week. Fridge engineer came Tues, Leo started his apprenticeship (Mon/Thu), and Harveys have put the mature"
        " cheddar up to £10.60 a kilo which is going to hurt on the toasties. Also need to ring the council about the bins.",
    ),
    # "but" in a clause that does not name the older value keeps nothing.
    (
        "Option module this term: Medieval History (Mon 10, Thu 4).",
        "Dropped Medieval History, it was just dates but duller. Swapped into Film Studies - still allowed to switch in week 2.",
    ),
    # A pronoun going on about the person the older note is about.
    (
        "Grandad moved into Oakfield Lodge, room 7 by the lounge.",
        "They've moved Grandad upstairs to room 21, it's quieter there.",
    ),
]

LOOK_ALIKES = [
    # A price in a clause that names nothing: of what its sentence names before it.
    ("Croissants at £1.90 each, 3 for £5 before 10am.", "Pain au raisin on the counter from Saturday, pricing them at £2.40."),
    (
        "Signed up at PureGym on the high street, £24.99 a month.",
        "heads up, Vercel's new usage limits pushed the bill up a lot — we're at $60 a month now.",
    ),
    # A day in a clause naming nothing but when ("due Tuesday"): of the order its
    # sentence names, not the fitter's booking.
    (
        "Ordered 25 Galaxy S21 screens and 10 iPad batteries, due Tuesday.",
        "Boiler's dead - engineer says not worth fixing. Picked up a reconditioned Worcester from Plumb Centre for £1,150, fitter booked Wednesday.",
    ),
    # Guard: a correction naming a day the older note never had.
    ("Yoga is on Saturdays.", "Yoga is Saturdays not Sundays, Tom got it wrong."),
    # Guard: a span of the writer's with a start in the same sentence is still a stay.
    ("I live in Bristol.", "Staying at Jo's in Leeds from Monday until Friday."),
]


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_a_change_in_another_writers_words_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_a_look_alike_in_another_writers_words_is_no_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


def test_a_sentence_typed_in_lower_case_is_a_sentence():
    assert textutil.sentences("extension granted!! new deadline is 23 June. phew.") == [
        "extension granted!!",
        "new deadline is 23 June.",
        "phew.",
    ]
    # An abbreviation's full stop, a dotted one and a title's end no sentence.
    assert len(textutil.sentences("It takes approx. two hours, e.g. on the bus.")) == 1
    assert len(textutil.sentences("Saw Dr. okafor today.")) == 1


def test_a_span_gone_is_no_stay_when_the_note_says_from_when_it_changes():
    assert cues.bound_to_a_span("We were in Porto for two weeks.")
    assert not cues.bound_to_a_span("Tried it for two weeks. Opening at 8:15 from Weds.")
    assert cues.bound_to_a_span("Staying at Jo's from Monday until Friday.")


def test_a_pronoun_about_the_person_the_older_note_opens_with_is_no_one_else():
    older = "Grandad moved into Oakfield Lodge, room 7."
    assert not subjects.someone_else("They've moved Grandad upstairs to room 21.", older, "en")
    assert subjects.someone_else("She moved to room 21.", older, "en")
    assert subjects.someone_else("They've moved Grandad upstairs.", "I live in room 7.", "en")


@needs_meaning
def test_a_word_the_vocabulary_barely_knows_is_no_person(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    assert subjects.person_noun("grandad")
    # A drug's name, cut into four pieces or more, reads as a name to the model.
    assert not subjects.person_noun("amlodipine")


def test_an_adverb_of_an_adjective_is_no_thing_asked():
    from memories.llm.extractive.asked_about import asked_nouns

    # "originally" is how it was booked: the notes never say it, and need not.
    assert asked_nouns("When was Mum's eye appointment originally booked for?") == ["eye", "appointment"]
    assert asked_nouns("What does my family eat on Sundays?") == ["family"]
    assert asked_nouns("What is the monthly fee?") == ["monthly", "fee"]
