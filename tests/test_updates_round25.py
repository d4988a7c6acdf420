"""Round 25 (issue 25): found on update scenarios written by someone who read none of the
code. A dose changed ("... 10mg" / "... is 20mg as of today") was no number of one form
(a number with its unit was read as a count), and a "still" said of something else in the
note ("bp still high") kept the old dose. A child's first day at a new school was read as
someone else's fact ("mi hija Sofía" named by a noun, "Primer día de Sofía" by name) and
the child's name as the old value named again. False ones: a whole month spent somewhere
("paso todo agosto en ... Cádiz"), a night up "til 2am" against a bedtime routine, a word
of a book's title ending with "Priya's last day", a rota's "Thu" read as a name in place
of an author's (a day or a month is no value a swap reads), a bookkeeper's fees ("she's
putting her fees up") read as the writer's rate. Written here in words of their own."""

from __future__ import annotations

import importlib

import pytest

from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

renumbered = importlib.import_module("memories.llm.extractive.changes.renumbered")
successions = importlib.import_module("memories.llm.extractive.changes.successions")
cues = importlib.import_module("memories.llm.extractive.changes.cues")

UPDATES = [
    # A dose with its unit, changed; "still" is said of the blood pressure.
    ("GP put me on amlodipine 5mg, one in the evening", "bp still not great, amlodipine is 10mg from today"),
    ("Levothyroxine 50 mcg every morning before tea", "Thyroid bloods back: levothyroxine up to 75 mcg"),
    # A child's first day at a new school, the child named by a noun before and by name
    # after ("mi hija Sofía" / "de Sofía"): whose first day it is holds the slot.
    ("Mi hija Sofía va al Colegio Alameda.", "Primer día de Sofía en el Instituto Goya, nerviosa pero contenta."),
    # A company's price said by "they", and a relative's number said by "she" after a note of hers.
    ("Netflix is £10.99 a month.", "Netflix emailed: they're putting the price up to £12.99 from June."),
    ("Mum's mobile: 07700 900312", "Mum rang, she has a new number 07700 900587"),
]

LOOK_ALIKES = [
    # The dose kept, another drug added.
    ("metformin 500 mg twice a day", "Still on metformin 500 mg, they added gliclazide 40mg"),
    # "still" in the clause of the value: kept.
    ("Amlodipine 5mg at night", "amlodipine still 5mg, bp fine at the review"),
    # Another child's first day.
    ("Mi hija Sofía va al Colegio Alameda.", "Primer día de Marta en el Instituto Goya, nerviosa pero contenta."),
    # A weekday's short form is no name: a rota's days do not replace an author's name.
    (
        "Library haul due back on the 4th: the Ruth Ozeki and a Thai cookbook.",
        "Rota for the new quarter: early shifts Mon, Tue, Wed, 06:30-14:00. Fridays off.",
    ),
    # Someone else's price said by "she" after a colon: her fees, not the writer's rate.
    (
        "Proofreading rate: £32/hour, two hours minimum.",
        "Dev (my bookkeeper) emailed: she's putting her fees up to £80/hour from June.",
    ),
    # Up late once: a time bounded by "til" is a night's, not the routine's.
    (
        "Sleep plan: phone away 9:30pm, lights out 10:15. Working so far!",
        "stayed up til 1am watching the final. wrecked tomorrow",
    ),
]


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_a_changed_measure_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_a_measure_kept_is_no_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


def test_a_number_with_its_unit_is_a_measure_in_that_unit():
    assert renumbered._form("10", "lisinopril 10mg daily") == "measure mg"
    assert renumbered._form("500", "metformin 500 mg twice a day") == "measure mg"
    assert renumbered._form("2", "2 ml at night") == "measure ml"
    # An ordinal, a multiplier, a word of grammar, a noun counted: no unit.
    assert renumbered._form("61", "61k miles on the clock") != "measure k"
    assert renumbered._form("3", "we have 3 cats") == "count"
    assert renumbered._form("2", "2 of them", frozenset({"of", "them"})) == "count"


@pytest.mark.parametrize(
    "text",
    [
        "paso todo agosto en casa de los abuelos en Cádiz",
        "Spending all of August at my aunt's in Kendal",
        "Den ganzen Sommer sind wir bei Oma in Husum.",
        "On passe tout l'été à Biarritz chez mes parents.",
        "tutta l'estate al mare da mia sorella",
    ],
)
def test_a_whole_month_or_season_spent_somewhere_is_a_stay(text):
    assert cues.BOUNDED.search(text)


def test_all_of_something_else_is_no_span():
    assert not cues.BOUNDED.search("All the best to the new team in Leeds")
    assert not cues.BOUNDED.search("Todo el equipo se mudó a Bilbao")


def test_a_word_of_a_title_is_named_again_only_as_a_name():
    old = "Finished 'The Remains of the Day' finally."
    assert not successions._named_as_written("day", old, "Priya's last day today, cake was lemon.")
    assert successions._named_as_written("day", old, "Lent The Remains of the Day to Mum.")
    # A value in lower case is named in any case.
    assert successions._named_as_written("ironyard", "joined ironyard on 5th", "Cancelled IronYard.")
