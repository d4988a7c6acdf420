"""Round 25 (issue 25): found on update scenarios written by someone who read none of the
code. A dose changed ("... 10mg" / "... is 20mg as of today") was no number of one form
(a number with its unit was read as a count), and a "still" said of something else in the
note ("bp still high") kept the old dose. A child's first day at a new school was read as
someone else's fact ("mi hija Sofía" named by a noun, "Primer día de Sofía" by name) and
the child's name as the old value named again. Written here in words of their own."""

from __future__ import annotations

import importlib

import pytest

from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

renumbered = importlib.import_module("memories.llm.extractive.changes.renumbered")

UPDATES = [
    # A dose with its unit, changed; "still" is said of the blood pressure.
    ("GP put me on amlodipine 5mg, one in the evening", "bp still not great, amlodipine is 10mg from today"),
    ("Levothyroxine 50 mcg every morning before tea", "Thyroid bloods back: levothyroxine up to 75 mcg"),
    # A child's first day at a new school, the child named by a noun before and by name
    # after ("mi hija Sofía" / "de Sofía"): whose first day it is holds the slot.
    ("Mi hija Sofía va al Colegio Alameda.", "Primer día de Sofía en el Instituto Goya, nerviosa pero contenta."),
]

LOOK_ALIKES = [
    # The dose kept, another drug added.
    ("metformin 500 mg twice a day", "Still on metformin 500 mg, they added gliclazide 40mg"),
    # "still" in the clause of the value: kept.
    ("Amlodipine 5mg at night", "amlodipine still 5mg, bp fine at the review"),
    # Another child's first day.
    ("Mi hija Sofía va al Colegio Alameda.", "Primer día de Marta en el Instituto Goya, nerviosa pero contenta."),
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
