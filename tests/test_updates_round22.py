"""Round 22 (issue 25): a price, a time, a date or a phone number of one thing changed,
whoever's thing it is (changes/renumbered.py). Every other judge reads the writer's own
facts by the shape of their sentences, so "Gran's landline is now ..." and "the swim
lesson moved to 16:30" were no update at all. Written here in words of their own; the
look-alikes beside them (another holder, another thing, a value kept, a value added, a
change only thought of) stay apart."""

from __future__ import annotations

import pytest

from memories.llm.extractive.changes.renumbered import renumbered
from memories.llm.extractive.changes.statements import units_of
from tests.test_updates import needs_meaning
from tests.test_updates_plain import marked

UPDATES = [
    # Someone else's number, with "new".
    ("Gran's landline: 01632 960 441", "Gran's new landline is 01632 960 872, BT finally sorted it"),
    # A clock time moved, in shorthand.
    ("Swim lesson for Ivy Tuesdays 16:00 at Pondside", "swim lesson -> 16:30 from next week, pool refit"),
    # A date pushed, told by the preposition of its result and no change word.
    ("Boiler service booked for 9 October", "gas engineer rang, boiler service pushed to 21 October"),
    # A price going up, the currency after the number.
    ("Abo Fitnessstudio: 29€ im Monat", "Das Fitnessstudio erhöht ab Juli, das Abo kostet jetzt 34€"),
    # Short weekdays are days, not someone's name ("Optician Tue" is no optician called Tue),
    # and a clock time with an "h".
    ("Optician Tue 3 Mar 11am", "optician called, they've moved me to Fri 6 Mar 9:30"),
    ("Cours de yoga le jeudi à 18h", "Le cours de yoga passe à 19h30 à partir de janvier"),
    # A thing's price raised, its name shared.
    ("Brightwave broadband £27 a month", "Brightwave letter: broadband going up to £31.50 from April"),
]

LOOK_ALIKES = [
    # Another holder of the same kind of number.
    ("Netflix costs me £10.99 a month.", "Disney+ put its price up to £8.99."),
    ("Call with Sanjay on Thursday at 11:00.", "Call with Beatriz moved to Friday at 15:00."),
    # The same owner, another thing ("Dad's birthday" / "Dad's op").
    ("Dad's birthday lunch 4 May at the Anchor", "Dad's scan moved to 12 June"),
    # Two things, each its own definite subject and date.
    ("The spring fair is set for 12 April.", "The school play is now set for 19 April."),
    # A second number beside the first, or the first kept.
    ("Home phone 01632 960 111", "Got a second line for the office too, 01632 960 222"),
    ("Work mobile 07700 900 333", "personal number still 07700 900 444, never changes"),
    # Only thought of.
    ("Rent is £1,050 a month", "Landlord says rent might go up to £1,120 next year"),
]


@needs_meaning
@pytest.mark.parametrize("old, new", UPDATES)
def test_a_number_of_one_thing_changed_is_an_update(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert renumbered(old, new) is not None
    assert marked(old, new)


@needs_meaning
@pytest.mark.parametrize("old, new", LOOK_ALIKES)
def test_numbers_of_another_holder_or_kept_are_not_updates(settings, old, new):
    settings.MEMORY_EMBEDDINGS = "local"
    assert renumbered(old, new) is None


@needs_meaning
def test_the_values_it_reads(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    old_values, new_values, _ = renumbered(
        "Swim lesson for Ivy Tuesdays 16:00 at Pondside", "swim lesson -> 16:30 from next week"
    )
    assert (old_values, new_values) == (["16:00"], ["16:30"])
    old_values, new_values, _ = renumbered("Gran's landline: 01632 960 441", "Gran's new landline is 01632 960 872")
    assert (old_values, new_values) == (["01632960441"], ["01632960872"])


def test_a_clock_time_is_not_a_clause_break():
    # The colon of "10:00" parts no clause (it did: "standup -> 10" and "00 from today").
    clauses = [c for c, _ in units_of("standup -> 10:00 from today so the Boston lot can join us, said Ruth")]
    assert any("10:00" in c for c in clauses)


def test_a_word_written_by_its_consonants():
    from memories.llm.extractive.changes.statements import consonants_of

    assert consonants_of("pw", "password") and consonants_of("mgr", "manager") and consonants_of("appt", "appointment")
    assert not consonants_of("pt", "pet")  # not much longer: no shortening
    assert not consonants_of("pw", "keyword")  # another first letter
    assert not consonants_of("pat", "password")  # a vowel past the first letter: a word of its own


@needs_meaning
@pytest.mark.parametrize(
    "old, new",
    [
        ("Wifi password for the flat: marble-fox-19", "Studio wifi pw is Lantern88! (for guests, ours is different)"),
        ("Wifi password for home: copper-kite-7", "Shop wifi pw is Visitor2025 (for customers, the staff one is different)"),
    ],
)
def test_another_kind_said_with_a_shortened_noun(settings, old, new):
    # "pw" is the older note's "password", and "Studio" a kind of it the older note does
    # not have: another password (both were marked before this round).
    settings.MEMORY_EMBEDDINGS = "local"
    assert not marked(old, new)


def test_keys_handed_back_with_a_new_place_named_is_no_return():
    # "back at Birch Lane" is the keys', and "new flat is ..." names the new value: not a
    # return to the old one (it was read as one, and no judge was asked).
    from memories.llm.extractive.changes import back_to_old

    old = "Address: 22 Birch Lane, Leeds LS6 2AB"
    assert not back_to_old(old, "dropped the keys back at Birch Lane. new flat is 9 Rowan Court, LS11 4QD")
    assert back_to_old(old, "in Glasgow for the summer, back at Birch Lane in September")


@needs_meaning
def test_a_fact_said_before_a_period_and_replaced_after_it_held_then(user, memory_factory, local_embeddings):
    """No memory is dated in "autumn 2023": the period is still the one asked about, and the
    fee said in August and replaced in 2025 is what held then (it was ranked below its
    successor, the period dropped for want of a memory dated in it)."""
    from memories.models import Memory
    from memories.recall import recall

    old = memory_factory("Joined Ironworks climbing gym, £41/mo, cancel any time", occurred_at="2023-08-03")
    new = memory_factory("Ironworks email: membership going up to £46 from April. ugh", occurred_at="2025-03-01")
    assert Memory.objects.get(pk=old.pk).outdated_by_id == new.pk
    for question in ("What was my monthly climbing gym fee in autumn 2023?", "How much was the climbing gym in October 2023?"):
        assert recall(owner=user, question=question, k=5).memory_ids[0] == old.pk, question
    assert recall(owner=user, question="How much is the climbing gym now?", k=5).memory_ids[0] == new.pk
