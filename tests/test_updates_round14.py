"""Round 14's second path of the update check (extractive/changes/swaps.py): one value
swapped for another of its kind in the slot it filled, the old value gone or named as
left; the look-alikes every path now keeps apart (two holders said alike, one word of a
frame swapped, the number of a name named again); and a person named after a title typed
in lower case answers "who"."""

from __future__ import annotations

import pytest

from memories.llm.extractive import asked_for
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # Terse, with a change word and no shared frame.
        ("salary 38k", "got the raise!! 44k now"),
        # A swap told as an event: the old value left, the new one joined after it.
        ("Maya plays bass in The Foxes.", "Maya left The Foxes to join Northbound."),
        ("Our internet is through Comcast.", "Dumped Comcast, got fiber from Ziply."),
        # A chain's middle link whose old value is named again, as broken.
        ("Switched to a Pixel 7.", "Cracked the Pixel screen beyond repair, on an iPhone 14 now."),
        # Third person, the subject named again.
        ("Tom works at Deloitte as an auditor.", "Tom's at KPMG these days."),
    ],
)
def test_a_value_swapped_for_another_of_its_kind_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        # Two people, each with a value.
        ("Ana works at IBM.", "Ben works at Oracle."),
        ("My sister Eva lives in Vienna.", "My sister Marta lives in Graz."),
        # One word of the frame swapped: two slots.
        ("My favourite movie is Alien.", "My favourite book is Dune."),
        # Two slots of the writer's, no word of either shared, no word of change: a home
        # and a job (the swaps path first marked the move replaced by the job).
        ("I moved to Lyon in March, a small flat near the river.", "I work as a nurse at St Mary's, mostly nights."),
        # The old value named again, still held: a stand-in.
        ("I drive a Mazda 3.", "Driving a rental Corolla while the Mazda is in the shop."),
        # An older event of another thing; a number inside another name.
        ("Bought a new pair of running shoes, Brooks Ghost 15.", "Cracked the Pixel screen beyond repair, on an iPhone 14 now."),
        # A visit, in another language.
        ("Moro em Lisboa.", "Passei o fim de semana no Porto com amigos."),
        # Someone's someone.
        ("Jake lives in Phoenix.", "Jake's brother moved to Seattle."),
        # A plan denied, the old value kept.
        ("Moro no Porto.", "Não vamos nos mudar para Braga, decidimos ficar no Porto."),
    ],
)
def test_look_alikes_change_nothing(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


def test_a_title_typed_in_lower_case_names_a_person():
    asked = asked_for.kind_asked("Who is my dentist?")
    assert asked_for.holds("switched dentists, going to dr okafor now", asked, "Who is my dentist?")
    assert not asked_for.holds("switched dentists last spring", asked, "Who is my dentist?")
