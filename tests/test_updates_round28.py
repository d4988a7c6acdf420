"""Round 28 (issue 25): found on update scenarios written by someone who read none of the
code. An "'s" that is "is" or "has" was read as a possessive ("the amlodipine's been
upped", "number's 07700 ...", "Dan's been made shift manager"); a value with its unit
glued on after "to" ("upped to 10mg") was no result of a change, a rate per month
("920/mo") no money, a lower-case weekday no weekday; "same fri" kept the time beside it;
a note naming its thing only by "it" ("landlord bumped it -> ...") was too far in meaning.
A child's school written in lower case had no value to replace nor a frame shared with a
long newer sentence, where a car that "failed its MOT" read as a refusal. False: a stay
"for a fortnight", "instead" of a thing another statement of the note ends, a clause
opening with a possessor ("Dan's mum ..."), a route written with an arrow, a lone "@", an
intention told in the past ("iba a mudarse ... pero al final se queda").
Answers: a dose with its unit glued on ("5mg") was no amount for "How much ...?".
Written here in words of their own."""

from __future__ import annotations

import importlib

import pytest

from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

renumbered = importlib.import_module("memories.llm.extractive.changes.renumbered")
subjects = importlib.import_module("memories.llm.extractive.changes.subjects")

UPDATES = [
    # "'s" as "has" before a participle, the new dose glued to its unit after "to".
    ("Dad takes 20mg simvastatin at night.", "GP visit with Dad: the simvastatin's been upped to 40mg."),
    # "'s" as "is" before a number: the number has no owner of its own.
    ("Gran's landline: 01632 960321", "gran moved into sheltered housing, number's 01632 960777 now"),
    # One person's news both times, "'s" as "has" in the older note.
    ("Priya's been made team lead at Corvane Labs.", "Priya's first week as head of data at Tessaly Bank."),
    # The old value ended in words no closed class of endings holds ("Got rid of ...,
    # nobody used it"), the new one taken "instead": not kept for naming the old one.
    ("We're on Spotify Family, £17.99.", "Got rid of Spotify, nobody used it. Got YouTube Music for the house instead."),
    # A time moved, "same" said of the day beside it; a rent per month with no currency,
    # the thing named only by "it".
    ("train to york sat 08:12 from kx", "lner moved it -> 10:05, same sat"),
    ("storage unit 95€, due on the 1st", "safestore bumped it -> 110/mo from june"),
    # A weekday in lower case is a weekday.
    ("standup: thursdays 9:30", "standup = tuesdays from now"),
    # A child's school in lower case, then a first day elsewhere inside a note of other news.
    (
        "leo started nursery at little oaks today, no tears",
        "Busy one. The boiler packed in, the dog ate a sock, and Leo had his first day at Brookfield Primary — loves his teacher.",
    ),
]

LOOK_ALIKES = [
    # A relative staying with the writer for a while: her address holds.
    ("Gran lives at 4 Mill Lane, Bristol.", "Gran's staying with us for a fortnight while her kitchen is redone."),
    # Someone else's first week.
    ("Priya's been made team lead at Corvane Labs.", "Priya's brother had his first week at Tessaly Bank."),
    # Another child's first day.
    ("leo started nursery at little oaks today, no tears", "Leo's cousin Ava had her first day at Brookfield Primary."),
    # "instead" of a thing another statement ends, which the older note never names.
    (
        "Half term at the caravan in Tenby with the kids, rained every day.",
        "Dropped Audible, nobody listened. Got Libby for the kids instead, audiobooks free.",
    ),
    # A possessor opening the clause: Dan's mother is no one taking Dan's place.
    ("went to the rugby club with Dan's brother, we lost", "Dan's sister visiting Saturday, need to tidy."),
    # The day kept, the time too: nothing changed.
    ("train to york sat 08:12 from kx", "still 08:12 on sat, seat 42"),
    # A route written with an arrow is no change; a lone "@" is "at", not an address.
    ("bus to leeds 3 may 06:50 NX412", "return LDS->LON 7 may 19:20 booked"),
    ("fish tacos @ la chula > everywhere else", "phone plan 12€/month, 30GB"),
    # Another thing's day.
    ("standup: thursdays 9:30", "climbing = tuesdays from now w/ sara"),
    # An intention told in the past, then not carried out.
    ("Lena vit à Lyon.", "Lena allait déménager à Paris, mais finalement elle reste à Lyon."),
    ("Nuria vive en Valencia.", "Nuria iba a mudarse a Madrid, pero al final se queda en Valencia."),
    # Another person's dose of another drug.
    ("Dad takes 20mg simvastatin at night.", "Mum's been put on 40mg of omeprazole."),
]


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_a_change_in_another_writers_grammar_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_a_look_alike_in_another_writers_grammar_is_no_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


def test_an_s_before_a_participle_a_number_or_an_article_is_no_possessive():
    assert not subjects._POSSESSIVE.search("the simvastatin's gone up")
    assert not subjects._POSSESSIVE.search("number's 01632 960777 now")
    assert not subjects._POSSESSIVE.search("Priya's been made team lead")
    assert subjects._POSSESSIVE.search("Priya's brother had his first week").group(2) == "brother"
    assert renumbered._OWNER.findall("Dad's dose, the simvastatin's been upped") == ["Dad"]


def test_a_value_with_its_unit_after_to_is_a_result():
    assert renumbered._result("the simvastatin's been upped to 40mg", {"40": "measure mg"})
    assert not renumbered._result("the simvastatin's been upped to 40mg", {"20": "measure mg"})


def test_a_number_per_month_is_money():
    assert renumbered._form("110", "they put it up -> 110/mo from june") == "amount"
    assert renumbered._form("3", "3 times a week") != "amount"


def test_an_arrow_between_two_words_is_a_route_and_a_lone_at_sign_no_address():
    assert not renumbered.ARROW.search("return LDS->LON 7 may 19:20 booked")
    assert renumbered.ARROW.search("moved it -> 10:05")
    assert renumbered.ARROW.search("rent 850->920")
    values = importlib.import_module("memories.llm.extractive.changes.values")
    assert "@" not in values.values_in("fish tacos @ la chula", frozenset())
    assert "me@example.org" in values.values_in("email is me@example.org", frozenset())


def test_a_dose_with_its_unit_glued_on_answers_how_much():
    asked_for = importlib.import_module("memories.llm.extractive.asked_for")
    question = "How much simvastatin was Dad on last year?"
    kind = asked_for.kind_asked(question)
    assert asked_for.holds("Dad takes 20mg simvastatin at night.", kind, question)
    assert not asked_for.holds("Dad takes his simvastatin at night.", kind, question)
    # An ordinal's ending is no unit.
    assert not asked_for.holds("Dad is on the 4th floor of the ward.", kind, question)
